"""The agent interface: what decides the next actions from an observation.

An agent answers each :class:`~vdesk.harness.env.Observation` with an :class:`AgentReply`:
a list of BaseActions (empty ends the episode), plus the model's raw reply for the record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from vdesk.actions import BaseAction
from vdesk.coords import ImageSpace, Screen
from vdesk.harness.tasks import Task

if TYPE_CHECKING:
    from vdesk.harness.env import Observation


@dataclass(frozen=True)
class AgentReply:
    """An agent's answer to one observation."""

    actions: list[BaseAction]
    raw: str | None = None          # the model's reply as received, for the record
    thought: str | None = None


class Agent:
    """The agent interface. Subclasses implement :meth:`act`; the rest has sensible defaults."""

    name = "agent"

    def image_space(self, screen: Screen) -> ImageSpace | None:
        """The size of the frames this agent wants (None: the logical screen)."""
        return None

    def reset(self, task: Task) -> None:
        """Get ready for a new episode of ``task``; called before its desktop starts."""

    def act(self, observation: Observation) -> AgentReply:
        raise NotImplementedError

    def close(self) -> None:
        """Release what the agent holds (connections)."""

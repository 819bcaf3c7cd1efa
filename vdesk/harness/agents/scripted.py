"""Agents that need no model: a scripted one (a task's solution, its wrong one, or any list of
steps) and a replay of a recorded run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vdesk.actions import BaseAction, parse_batch
from vdesk.coords import ImageSpace, Screen
from vdesk.errors import InvalidArgument
from vdesk.harness.agents.base import Agent, AgentReply
from vdesk.harness.tasks import Task

if TYPE_CHECKING:
    from vdesk.harness.env import Observation
    from vdesk.harness.record import Run


SCRIPT_OVER = "end of the script"  # what the scripted agent's last, added step says


@dataclass
class ScriptedAgent(Agent):
    """Plays a fixed list of steps, one per observation, then says it has finished.

    Without ``steps`` it plays the solution of whatever task it is reset to (``wrong``: its
    ``wrong_solution``, a near miss the task must fail: the ``wrong-solution`` agent). An OSWorld task's
    solution written in ``action_space`` (``pyautogui`` code or ``computer_13`` actions) is
    played in that space: each step parsed when it is played, and kept as the raw reply; its
    end is ``DONE``, as an OSWorld agent ends. Saying so is what an agent does when it is done:
    an episode that ran out of script once ended as ``no_actions`` (OSWorld's solutions rarely
    end in DONE) with an empty last step in its record. A script that wants to end with an
    empty reply ends with an empty step (``[]``).
    """

    steps: Sequence[Sequence[BaseAction | dict[str, Any]]] | None = None
    name: str = "scripted"
    action_space: str | None = None
    wrong: bool = False
    _queue: list[AgentReply] = field(default_factory=list, init=False, repr=False)

    def reset(self, task: Task) -> None:
        end = AgentReply([BaseAction.of("finished", content=SCRIPT_OVER)])
        if self.steps is not None:
            self._queue = [AgentReply(parse_batch(list(step))) for step in self.steps] + [end]
            return
        extension = task.extension
        written = extension.solution(self.action_space, wrong=self.wrong) if extension is not None else None
        if written is not None:
            self._queue = [AgentReply(actions, raw=raw) for raw, actions in written]
        elif (task.wrong_solution if self.wrong else task.solution) is None:
            key = "wrong_solution" if self.wrong else "solution"
            raise InvalidArgument(f"task {task.id} has no {key} for the {self.name} agent to play")
        else:
            self._queue = [AgentReply(actions) for actions in task.solution_actions(wrong=self.wrong)] + [end]

    def act(self, observation: Observation) -> AgentReply:
        if not self._queue:
            return AgentReply([])
        return self._queue.pop(0)


class ReplayAgent(Agent):
    """Replays the actions of a recorded run, step by step, on the same image size it saw.

    ``folder`` is an episode's run folder, or a suite run holding one per task (the episode
    of the task it is reset to is played). The recorded raw replies ride along, so a replay's
    record reads like the original.
    """

    name = "replay"

    def __init__(self, folder: str | Path) -> None:
        from vdesk.harness.record import episode_folders  # record imports tasks; keep agents light

        self.folders = episode_folders(folder)
        self.run: Run | None = None
        self._queue: list[AgentReply] = []

    def reset(self, task: Task) -> None:
        self.run = self._run_of(task)
        self._queue = [AgentReply(list(step.actions), step.raw_reply, step.thought) for step in self.run.steps]

    def image_space(self, screen: Screen) -> ImageSpace | None:
        if self.run is None:
            raise InvalidArgument("reset the replay agent to a task before asking its image size")
        width, height = self.run.info.image_size
        return ImageSpace(width, height)

    def act(self, observation: Observation) -> AgentReply:
        return self._queue.pop(0) if self._queue else AgentReply([])

    def _run_of(self, task: Task) -> Run:
        from vdesk.harness.record import load_run

        runs = [load_run(folder) for folder in self.folders]
        matching = [run for run in runs if run.task.id == task.id]
        if not matching:
            recorded = ", ".join(sorted(run.task.id for run in runs))
            raise InvalidArgument(f"no recorded episode of task {task.id} to replay (recorded: {recorded})")
        return matching[0]

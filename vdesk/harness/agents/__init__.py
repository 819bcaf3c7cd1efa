"""Agents: what decides the next actions from an observation.

* :mod:`~vdesk.harness.agents.base`: the interface, :class:`Agent` and :class:`AgentReply`;
* :mod:`~vdesk.harness.agents.scripted`: agents that need no model (a script, a replay);
* :mod:`~vdesk.harness.agents.models`: model agents over HTTP (UI-TARS chat, Anthropic, OpenAI);
* :mod:`~vdesk.harness.agents.by_name`: :func:`make_agent`, any of them from its name.
"""

from vdesk.harness.agents.base import Agent, AgentReply
from vdesk.harness.agents.by_name import AGENT_NAMES, make_agent
from vdesk.harness.agents.scripted import ReplayAgent, ScriptedAgent

__all__ = ["AGENT_NAMES", "Agent", "AgentReply", "ReplayAgent", "ScriptedAgent", "make_agent"]

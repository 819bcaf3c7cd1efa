"""Agents by their command-line names: ``scripted``, ``replay:RUN`` and the model agents."""

from __future__ import annotations

from vdesk.errors import InvalidArgument
from vdesk.harness.agents.base import Agent
from vdesk.harness.agents.models import AnthropicAgent, OpenAIChatAgent, OpenAIComputerAgent
from vdesk.harness.agents.scripted import ReplayAgent, ScriptedAgent

AGENT_NAMES = ("scripted", "replay:RUN", "openai-chat", "anthropic", "openai")


def make_agent(spec: str) -> Agent:
    """An agent from its command-line name: ``scripted``, ``replay:RUN``, ``openai-chat``,
    ``anthropic`` or ``openai`` (model agents read their settings from the environment)."""
    if spec == "scripted":
        return ScriptedAgent()
    if spec.startswith("replay:"):
        return ReplayAgent(spec.removeprefix("replay:"))
    factories = {"openai-chat": OpenAIChatAgent.from_env, "anthropic": AnthropicAgent.from_env,
                 "openai": OpenAIComputerAgent.from_env}
    if spec not in factories:
        raise InvalidArgument(f"unknown agent {spec!r}: use one of {', '.join(AGENT_NAMES)}")
    return factories[spec]()

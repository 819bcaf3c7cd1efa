"""Agents by their command-line names: ``scripted`` and ``wrong-solution`` (a task's solution,
or its wrong one), ``replay:RUN`` and the model agents (``osworld-chat`` among them, which
speaks an OSWorld action space)."""

from __future__ import annotations

from vdesk.errors import InvalidArgument
from vdesk.harness.agents.base import Agent
from vdesk.harness.agents.models import AnthropicAgent, OpenAIChatAgent, OpenAIComputerAgent
from vdesk.harness.agents.scripted import ReplayAgent, ScriptedAgent

AGENT_NAMES = ("scripted", "wrong-solution", "replay:RUN", "openai-chat", "anthropic", "openai", "osworld-chat")
SPACE_SPEAKERS = ("scripted", "wrong-solution", "osworld-chat")  # the agents told which action space to speak
SPACE_HINT = "--action-space is for the scripted, wrong-solution and osworld-chat agents"


def make_agent(spec: str, action_space: str | None = None) -> Agent:
    """An agent from its command-line name: ``scripted``, ``wrong-solution`` (a task's
    ``wrong_solution``, which it must fail), ``replay:RUN``, ``openai-chat``, ``anthropic``,
    ``openai`` or ``osworld-chat`` (model agents read their settings from the environment).
    ``action_space`` is the space the scripted agents play a task's solution in, and the one
    ``osworld-chat`` speaks (default pyautogui); the others speak their own."""
    if action_space is not None and spec not in SPACE_SPEAKERS and spec in AGENT_NAMES:
        raise InvalidArgument(f"{SPACE_HINT}; agent {spec} speaks its own format")
    if spec in ("scripted", "wrong-solution"):
        return ScriptedAgent(name=spec, action_space=action_space, wrong=spec == "wrong-solution")
    if spec.startswith("replay:"):
        if action_space is not None:
            raise InvalidArgument(f"{SPACE_HINT}; a replay plays the recorded actions")
        return ReplayAgent(spec.removeprefix("replay:"))
    if spec == "osworld-chat":
        from vdesk.harness.agents.osworld_chat import OSWorldChatAgent  # the adapters it speaks through

        return OSWorldChatAgent.from_env(action_space or "pyautogui")
    factories = {"openai-chat": OpenAIChatAgent.from_env, "anthropic": AnthropicAgent.from_env,
                 "openai": OpenAIComputerAgent.from_env}
    if spec not in factories:
        raise InvalidArgument(f"unknown agent {spec!r}: use one of {', '.join(AGENT_NAMES)}")
    return factories[spec]()

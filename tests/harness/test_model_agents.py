"""Model agents drive real desktops through the fake server's recorded replies, and their
runs replay."""

from __future__ import annotations

import pytest

from tests.harness.conftest import SUITE
from tests.harness.fake_model import FakeModelServer
from vdesk.harness.agents.models import (AnthropicAgent, AnthropicSettings, ChatSettings, OpenAIChatAgent,
                                       OpenAIComputerAgent, OpenAISettings)
from vdesk.harness.episode import Status
from vdesk.harness.loop import run_episode
from vdesk.harness.record import load_run
from vdesk.harness.replay import replay
from vdesk.harness.tasks import load_task

pytestmark = [pytest.mark.desktop, pytest.mark.usefixtures("no_desktop_left")]

AGENTS = {
    "uitars_chat": lambda url: OpenAIChatAgent(ChatSettings(base_url=url + "/v1")),
    "anthropic_messages": lambda url: AnthropicAgent(AnthropicSettings(base_url=url, api_key="test",
                                                                       tool="computer_20250124")),
    "anthropic_toolset": lambda url: AnthropicAgent(AnthropicSettings(base_url=url, api_key="test")),
    "openai_responses": lambda url: OpenAIComputerAgent(OpenAISettings(base_url=url + "/v1", api_key="test")),
}


@pytest.mark.parametrize("recording", AGENTS)
def test_a_model_agent_solves_a_task_from_recorded_replies(recording, tmp_path):
    task = load_task(SUITE / "terminal-echo.yaml")
    with FakeModelServer.recorded(recording) as server:
        result = run_episode(AGENTS[recording](server.url), task, out=tmp_path / "run")
    assert result.success, result.outcome
    assert not server.replies  # every recorded reply was asked for
    run = load_run(tmp_path / "run")
    assert all(step.raw_reply for step in run.steps)  # the model's words are in the record
    assert all(step.agent_ms > 0 for step in run.steps)  # and how long each answer took
    assert run.outcome.status in (Status.FINISHED.value, Status.NO_ACTIONS.value)


def test_a_model_agents_run_replays_to_the_same_outcome_and_frame(tmp_path):
    task = load_task(SUITE / "terminal-echo.yaml")
    with FakeModelServer.recorded("uitars_chat") as server:
        run_episode(AGENTS["uitars_chat"](server.url), task, out=tmp_path / "run")
    report = replay(tmp_path / "run", out=tmp_path / "replay")
    assert report.matches, report.differences
    replayed = load_run(tmp_path / "replay" / "terminal-echo")
    assert replayed.steps[0].raw_reply.startswith("Thought: A terminal is open")

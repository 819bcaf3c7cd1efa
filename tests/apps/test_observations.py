"""The observation modes reach a model agent's request (the fake model server records it), the
recorded run keeps what was observed, and the ``element`` check reads the tree."""

from __future__ import annotations

import pytest

from tests.harness.fake_model import FakeModelServer
from vdesk.harness.agents.models import ChatSettings, OpenAIChatAgent
from vdesk.harness.env import DesktopEnv
from vdesk.harness.loop import run_episode
from vdesk.harness.record import load_run
from vdesk.harness.tasks import parse_task

pytestmark = pytest.mark.desktop

PAGE = "data:text/html,<title>Observed page</title><button>Press me</button>"
FINISHED = {"id": "chatcmpl-1", "object": "chat.completion", "model": "ui-tars",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {
                "role": "assistant", "content": "Thought: The button is there.\nAction: finished(content='seen')"}}]}


def _task():
    return parse_task({
        "id": "observed", "instruction": "Say whether the button is there.",
        "desktop": {"size": "1280x800", "image": "apps"},
        "setup": [{"start": f"chromium '{PAGE}'"}, {"wait_window": "Observed page"}],
        "checks": [{"element": "push button", "name": "Press me", "timeout": 20},
                   {"element": "push button", "name": "Not there", "present": False}],
        "max_steps": 2, "time_limit": 120})


def _user_text(body: dict) -> str:
    parts = []
    for message in body["messages"]:
        content = message["content"]
        parts += [content] if isinstance(content, str) else [c.get("text", "") for c in content]
    return "\n".join(parts)


@pytest.mark.parametrize("mode, expected", [("a11y_tree", "push-button\tPress me"),
                                            ("som", "push-button\tPress me\t")])
def test_the_observation_mode_reaches_the_model_and_the_record(mode, expected, tmp_path):
    with FakeModelServer([FINISHED]) as server:
        agent = OpenAIChatAgent(ChatSettings(base_url=server.url + "/v1"))
        result = run_episode(agent, _task(), out=tmp_path / "run", env=DesktopEnv(observation=mode))
    assert result.success, result.outcome
    sent = _user_text(server.received[0].body)
    assert expected in sent
    assert ("Numbered elements" in sent) == (mode == "som")
    observed = load_run(tmp_path / "run").steps[0].observed
    assert observed is not None and expected in observed


def test_the_screenshot_mode_sends_no_tree(tmp_path):
    with FakeModelServer([FINISHED]) as server:
        agent = OpenAIChatAgent(ChatSettings(base_url=server.url + "/v1"))
        result = run_episode(agent, _task(), out=tmp_path / "run", env=DesktopEnv())
    assert result.success, result.outcome
    assert "Press me" not in _user_text(server.received[0].body)

"""The osworld-chat agent against a fake chat endpoint: OSWorld's prompt goes out, pyautogui or
computer_13 replies come back as actions (parsed, never run)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from tests.harness.fake_model import FakeModelServer
from vdesk.coords import Screen
from vdesk.errors import AgentError
from vdesk.harness.agents.models import ChatSettings
from vdesk.harness.agents.osworld_chat import OSWorldChatAgent
from vdesk.harness.env import Observation
from vdesk.integrations.operator import screen_context
from vdesk.osworld.loader import osworld_task


def chat(text: str) -> dict:
    return {"choices": [{"message": {"content": text}}]}


def observation() -> Observation:
    return Observation(Image.new("RGB", (1920, 1080)), screen_context(Screen(1920, 1080)), "do it", 1)


@pytest.mark.parametrize(("space", "reply", "kinds"), [
    ("pyautogui", "```python\npyautogui.click(10, 20)\npyautogui.write('hi')\n```", ["click", "type"]),
    ("computer_13", '[{"action_type": "CLICK", "parameters": {"x": 1, "y": 2}}, "DONE"]', ["click", "finished"]),
    ("pyautogui", "FAIL", ["finished"]),
])
def test_replies_in_either_space_become_actions(space: str, reply: str, kinds: list[str]) -> None:
    task = osworld_task({"id": "t", "instruction": "open the file", "evaluator": {"func": "infeasible"}},
                        source="t", base_dir=Path("."), domain="os")
    with FakeModelServer([chat(reply)]) as server:
        agent = OSWorldChatAgent(ChatSettings(base_url=server.url), space)
        agent.reset(task)
        answer = agent.act(observation())
    assert [a.type.value for a in answer.actions] == kinds and answer.raw == reply
    sent = server.received[0].body["messages"]
    assert ("pyautogui" if space == "pyautogui" else "action_type") in sent[0]["content"]
    assert "password" in sent[0]["content"] and sent[1]["content"] == "Task: open the file"


def test_code_outside_the_space_is_an_agent_error_not_execution() -> None:
    with FakeModelServer([chat("import os\nos.system('rm -rf ~')")]) as server:
        agent = OSWorldChatAgent(ChatSettings(base_url=server.url), "pyautogui")
        with pytest.raises(AgentError, match="could not be parsed as pyautogui"):
            agent.act(observation())


def test_under_set_of_marks_a_reply_clicks_a_tag_at_its_marks_centre() -> None:
    task = osworld_task({"id": "t", "instruction": "press Save", "evaluator": {"func": "infeasible"}},
                        source="t", base_dir=Path("."), domain="os")
    marked = Observation(Image.new("RGB", (1920, 1080)), screen_context(Screen(1920, 1080)), "press Save", 1,
                         marks="index\ttag\tname\ttext\tsource\n1\tpush-button\tOpen\t\ttree\n2\tpush-button\tSave\t\ttree",
                         mark_centres=((100.0, 50.0), (300.5, 50.0)))
    with FakeModelServer([chat("pyautogui.click(tag_2)"), chat("pyautogui.click(tag_7)")]) as server:
        agent = OSWorldChatAgent(ChatSettings(base_url=server.url), "pyautogui")
        agent.reset(task)
        answer = agent.act(marked)
        with pytest.raises(AgentError, match="tag_7"):  # no such mark: a clean error, nothing clicked
            agent.act(marked)
    (click,) = answer.actions
    assert click.type.value == "click" and (click.inputs.point.raw.x, click.inputs.point.raw.y) == (300.5, 50.0)
    prompt = server.received[0].body["messages"][1]["content"]
    assert "2\tpush-button\tSave" in prompt and "tag_1, tag_2" in prompt

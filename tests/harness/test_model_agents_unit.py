"""Model agents against the fake server, without a desktop: what they send, what they parse,
and how they fail."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from tests.harness.conftest import make_task
from tests.harness.fake_model import FakeModelServer
from vdesk.coords import ImageSpace, Screen
from vdesk.harness.agents.models import (AgentError, AnthropicAgent, AnthropicSettings, ChatSettings, OpenAIChatAgent,
                                       OpenAIComputerAgent, OpenAISettings)
from vdesk.harness.env import Observation
from vdesk.actions import ExecuteResult
from vdesk.integrations.operator import ScreenContext

SCREEN = ScreenContext(screen_width=800, screen_height=600, scale_x=1, scale_y=1)


def observation(step: int = 1, results: tuple[ExecuteResult, ...] = ()) -> Observation:
    return Observation(Image.new("RGB", (800, 600), (0, 0, 40)), SCREEN, "Write hello.", step, results)


def decoded_png(data: str) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(data)))


def test_the_chat_agent_sends_the_prompt_and_screenshots_and_parses_ui_tars_replies():
    with FakeModelServer.recorded("uitars_chat") as server:
        agent = OpenAIChatAgent(ChatSettings(base_url=server.url + "/v1", model="ui-tars-1.5", api_key="k"))
        agent.reset(make_task(instruction="Write hello."))
        first = agent.act(observation(1))
        second = agent.act(observation(2, (ExecuteResult(),)))
    assert first.actions[0].type.value == "click" and first.actions[0].inputs.point.normalized.x == 0.3
    assert first.thought.startswith("A terminal is open") and "Action: click" in first.raw
    assert second.actions[0].inputs.content == "echo hello vdesk > ~/hello.txt\n"
    request = server.received[1]
    assert request.path == "/v1/chat/completions" and request.headers["authorization"] == "Bearer k"
    messages = request.body["messages"]
    assert "Write hello." in messages[0]["content"] and request.body["model"] == "ui-tars-1.5"
    roles = [m["role"] for m in messages]
    assert roles == ["user", "user", "assistant", "user"]  # prompt, frame 1, reply 1, frame 2
    image = messages[1]["content"][0]["image_url"]["url"]
    assert image.startswith("data:image/png;base64,") and decoded_png(image.split(",", 1)[1]).size == (800, 600)


def test_the_chat_agent_keeps_only_the_last_screenshots():
    replies = [{"choices": [{"message": {"content": "Action: wait()"}}]}] * 4
    with FakeModelServer(list(replies)) as server:
        agent = OpenAIChatAgent(ChatSettings(base_url=server.url, history=2))
        agent.reset(make_task())
        for step in range(1, 5):
            agent.act(observation(step))
    images = [m for m in server.received[-1].body["messages"] if isinstance(m["content"], list)]
    assert len(images) == 2


def test_the_anthropic_agent_answers_each_tool_call_with_the_next_screenshot():
    with FakeModelServer.recorded("anthropic_messages") as server:
        agent = AnthropicAgent(AnthropicSettings(base_url=server.url, api_key="secret", tool="computer_20250124"))
        agent.reset(make_task(instruction="Write hello."))
        assert agent.image_space(Screen(800, 600)) == ImageSpace(800, 600)  # no smaller target has its shape
        first = agent.act(observation(1))
        second = agent.act(observation(2, (ExecuteResult(),)))
        last = agent.act(observation(3, (ExecuteResult(), ExecuteResult())))
    assert [a.type.value for a in first.actions] == ["click"] and first.actions[0].inputs.point.raw.x == 240
    assert [a.type.value for a in second.actions] == ["type", "hotkey"] and last.actions == []
    headers = server.received[0].headers
    assert headers["x-api-key"] == "secret" and headers["anthropic-beta"] == "computer-use-2025-01-24"
    body = server.received[0].body
    assert body["tools"][0] == {"type": "computer_20250124", "name": "computer", "display_width_px": 800,
                                "display_height_px": 600}
    results = server.received[2].body["messages"][-1]["content"]
    assert [r["tool_use_id"] for r in results] == ["toolu_02", "toolu_03"]
    assert results[0]["content"][0]["type"] == "image"


def test_the_anthropic_agent_reports_failed_actions_as_tool_errors():
    with FakeModelServer.recorded("anthropic_messages") as server:
        agent = AnthropicAgent(AnthropicSettings(base_url=server.url, tool="computer_20250124"))
        agent.reset(make_task())
        agent.act(observation(1))
        agent.act(observation(2, (ExecuteResult(status="failed", error_message="point outside"),)))
    result = server.received[1].body["messages"][-1]["content"][0]
    assert result["is_error"] is True and result["content"][0]["text"] == "point outside"


def test_the_anthropic_agent_speaks_the_computer_toolset_by_default():
    with FakeModelServer.recorded("anthropic_toolset") as server:
        agent = AnthropicAgent(AnthropicSettings(base_url=server.url, api_key="secret"))
        agent.reset(make_task(instruction="Write hello."))
        agent.image_space(Screen(800, 600))
        replies = [agent.act(observation(step, (ExecuteResult(),))) for step in range(1, 5)]
    assert [[a.type.value for a in r.actions] for r in replies] == [["click"], ["type", "hotkey", "wait"],
                                                                     ["screenshot"], []]
    headers = server.received[0].headers
    assert "anthropic-beta" not in headers
    assert server.received[0].body["tools"] == [{"type": "computer_toolset_20260801"}]
    answers = server.received[2].body["messages"][-1]["content"]
    assert [a["tool_use_id"] for a in answers] == ["toolu_02", "toolu_03", "toolu_04"]
    zoomed = server.received[3].body["messages"][-1]["content"][0]
    assert zoomed["tool_use_id"] == "toolu_05"
    size = Image.open(io.BytesIO(base64.b64decode(zoomed["content"][0]["source"]["data"]))).size
    assert size == (320, 200)  # the zoom's region of the frame, not the whole frame


def test_the_openai_agent_chains_responses_and_answers_calls_with_screenshots():
    with FakeModelServer.recorded("openai_responses") as server:
        agent = OpenAIComputerAgent(OpenAISettings(base_url=server.url + "/v1", api_key="sk"))
        agent.reset(make_task(instruction="Write hello."))
        replies = [agent.act(observation(step)) for step in range(1, 5)]
    assert [[a.type.value for a in r.actions] for r in replies] == [["click"], ["type"], ["hotkey"], []]
    assert replies[3].thought == "Done: ~/hello.txt holds hello vdesk."
    first, second = server.received[0].body, server.received[1].body
    assert server.received[0].path == "/v1/responses" and first["tools"][0]["display_width"] == 800
    assert first["input"][0]["content"][0]["text"] == "Write hello."
    assert second["previous_response_id"] == "resp_01"
    assert second["input"][0]["call_id"] == "call_01" and second["input"][0]["output"]["type"] == "computer_screenshot"


def test_a_server_error_is_an_agent_error_quoting_the_server():
    with FakeModelServer([{"error": {"message": "model overloaded"}}], status=503) as server:
        agent = OpenAIChatAgent(ChatSettings(base_url=server.url))
        agent.reset(make_task())
        with pytest.raises(AgentError, match="answered HTTP 503: .*model overloaded"):
            agent.act(observation())


def test_an_unparseable_model_reply_is_an_agent_error_quoting_it():
    with FakeModelServer([{"choices": [{"message": {"content": "I am not sure what to do."}}]}]) as server:
        agent = OpenAIChatAgent(ChatSettings(base_url=server.url))
        agent.reset(make_task())
        with pytest.raises(AgentError, match="could not be parsed: no action found in \"I am not sure"):
            agent.act(observation())


def test_an_unreachable_server_is_an_agent_error():
    agent = OpenAIChatAgent(ChatSettings(base_url="http://127.0.0.1:9", timeout=2))
    agent.reset(make_task())
    with pytest.raises(AgentError, match="cannot reach http://127.0.0.1:9/chat/completions"):
        agent.act(observation())


def test_settings_come_from_the_environment_and_bad_ones_are_named(monkeypatch):
    monkeypatch.setenv("VDESK_CHAT_BASE_URL", "http://127.0.0.1:1234/v1")
    monkeypatch.setenv("VDESK_CHAT_COORDINATES", "smart_resize")
    settings = ChatSettings.from_env()
    assert settings.base_url == "http://127.0.0.1:1234/v1" and settings.coordinates == "smart_resize"
    monkeypatch.setenv("VDESK_CHAT_HISTORY", "many")
    with pytest.raises(AgentError, match="history: Input should be a valid integer"):
        ChatSettings.from_env()
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:5/v1")
    assert OpenAIComputerAgent.from_env().settings.base_url == "http://127.0.0.1:5/v1"


def tree_observation(step: int, results: tuple[ExecuteResult, ...] = ()) -> Observation:
    """What DesktopEnv(observation="a11y_tree") gives an agent: the frame and the linearized tree."""
    return Observation(Image.new("RGB", (800, 600), (0, 0, 40)), SCREEN, "Write hello.", step, results,
                       accessibility_tree="tag\tname\ttext\tposition (top-left x&y)\tsize (w&h)\npush-button\tSave\t\t(10, 20)\t(30, 40)")


def test_the_computer_use_agents_put_the_tree_in_every_turn_under_the_tree_observation():
    with FakeModelServer.recorded("anthropic_messages") as server:
        agent = AnthropicAgent(AnthropicSettings(base_url=server.url, api_key="secret", tool="computer_20250124"))
        agent.reset(make_task(instruction="Write hello."))
        agent.act(tree_observation(1))
        agent.act(tree_observation(2, (ExecuteResult(),)))
    for request in server.received[:2]:
        last = request.body["messages"][-1]["content"]
        assert last[-1]["type"] == "text" and "push-button\tSave" in last[-1]["text"], last[-1]
    with FakeModelServer.recorded("openai_responses") as server:
        agent = OpenAIComputerAgent(OpenAISettings(base_url=server.url + "/v1", api_key="sk"))
        agent.reset(make_task(instruction="Write hello."))
        agent.act(tree_observation(1))
        agent.act(tree_observation(2))
    for request in server.received[:2]:
        assert "push-button\tSave" in request.body["input"][-1]["content"], request.body["input"][-1]

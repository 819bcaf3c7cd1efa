"""The openai-agents SDK's ``Computer`` over a real desktop: every method, and what arrived
(an X event probe, typed text in a program); then ``ComputerTool(computer=…)`` in the SDK's
own run loop, driven by a scripted model (no model service)."""

from __future__ import annotations

import asyncio
import base64
import io
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from agents import Agent, ComputerTool, RunConfig, Runner
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseComputerToolCall, ResponseOutputMessage, ResponseOutputText
from PIL import Image

from tests.desktop.helpers import program_receiving_keys
from tests.desktop.test_adapters import BUTTON1_MASK, park, summary
from vdesk.adapters.openai import WAIT_SECONDS
from vdesk.errors import InvalidAction
from vdesk.integrations.openai_agents import DesktopComputer


@pytest.fixture
def computer(shared_desktop) -> DesktopComputer:
    return DesktopComputer(shared_desktop)


def test_it_describes_itself_as_the_sdk_asks(computer):
    assert computer.environment == "ubuntu" and computer.dimensions == (1280, 800)
    shot = Image.open(io.BytesIO(base64.b64decode(computer.screenshot())))
    assert shot.format == "PNG" and shot.size == (1280, 800)


@pytest.mark.parametrize("button, number", [("left", 1), ("wheel", 2), ("right", 3)])
def test_click_arrives_with_its_button(shared_desktop, probe, computer, button, number):
    park(shared_desktop, probe)
    computer.click(640, 400, button)
    assert summary(probe.events()) == [f"button_press {number} 640 400", f"button_release {number} 640 400"]


def test_click_holding_keys_and_double_click(shared_desktop, probe, computer):
    park(shared_desktop, probe)
    computer.click(10, 20, "left", keys=["CTRL"])
    computer.double_click(30, 40)
    assert summary(probe.events()) == ["key_press Control_L", "button_press 1 10 20", "button_release 1 10 20",
                                       "key_release Control_L"] + ["button_press 1 30 40", "button_release 1 30 40"] * 2


def test_scroll_move_and_keypress(shared_desktop, probe, computer):
    park(shared_desktop, probe)
    computer.scroll(300, 200, 0, -100)  # up: one wheel notch per 100 pixels
    computer.move(222, 111)
    computer.keypress(["CTRL", "A"])
    events = probe.events()
    assert summary(events) == ["button_press 4 300 200", "button_release 4 300 200", "key_press Control_L",
                               "key_press a", "key_release a", "key_release Control_L"]
    assert (222, 111) in [(e.x, e.y) for e in events if e.kind == "motion"]


def test_drag_holds_the_button_along_the_path(shared_desktop, probe, computer):
    park(shared_desktop, probe)
    computer.drag([(100, 100), (150, 120), (200, 300)])
    events = probe.events()
    assert summary(events)[0] == "button_press 1 100 100" and summary(events)[-1] == "button_release 1 200 300"
    assert (150, 120) in [(e.x, e.y) for e in events if e.kind == "motion" and e.state & BUTTON1_MASK]


def test_wait_waits_and_reaches_nothing(shared_desktop, probe, computer):
    park(shared_desktop, probe)
    started = time.monotonic()
    computer.wait()
    assert time.monotonic() - started >= WAIT_SECONDS  # it waited, as the protocol's wait means
    assert probe.events() == []


def test_typed_text_lands_in_a_program_exactly(shared_desktop, computer):
    with program_receiving_keys(shared_desktop, "agents-typed") as received:
        text = 'Grüße 😀 "quoted" $HOME -rf'
        computer.type(text)
        computer.keypress(["CTRL", "D"])
        computer.keypress(["CTRL", "D"])
        assert received() == text


def test_a_point_off_the_screenshot_raises_and_reaches_nothing(shared_desktop, probe, computer):
    park(shared_desktop, probe)
    with pytest.raises(InvalidAction, match="5000"):
        computer.click(5000, 1, "left")
    with pytest.raises(InvalidAction, match="back"):
        computer.click(1, 1, "back")
    assert probe.events() == []


class ScriptedModel(Model):
    """Answers with the given outputs in turn, and keeps what it was sent."""

    def __init__(self, *outputs: Any) -> None:
        self.outputs = list(outputs)
        self.inputs: list[Any] = []

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs,
                           tracing, *, previous_response_id, conversation_id, prompt) -> ModelResponse:
        self.inputs.append(input)
        return ModelResponse(output=[self.outputs.pop(0)], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


def test_computer_tool_runs_the_models_calls_on_the_desktop(shared_desktop, probe, computer):
    click = ResponseComputerToolCall.model_validate({
        "id": "cu_1", "call_id": "call_1", "type": "computer_call", "status": "completed",
        "pending_safety_checks": [], "action": {"type": "click", "button": "left", "x": 321, "y": 123}})
    done = ResponseOutputMessage(id="msg_1", type="message", role="assistant", status="completed", content=[
        ResponseOutputText(type="output_text", text="Clicked.", annotations=[])])
    model = ScriptedModel(click, done)
    agent = Agent(name="operator", model=model, tools=[ComputerTool(computer=computer)])
    park(shared_desktop, probe)
    # run_sync runs on this thread's default event loop and leaves it open, as a script's would
    # be; the test gives it one it owns, so no open loop is left for a later test to free.
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        result = Runner.run_sync(agent, "Click the point.", run_config=RunConfig(tracing_disabled=True))
    finally:
        asyncio.set_event_loop(None)
        loop.close()
    assert result.final_output == "Clicked."
    assert summary(probe.events()) == ["button_press 1 321 123", "button_release 1 321 123"]
    answer = [item for item in model.inputs[1] if item.get("type") == "computer_call_output"]
    assert answer and answer[0]["call_id"] == "call_1"
    assert answer[0]["output"]["image_url"].startswith("data:image/png;base64,")

"""Anthropic's computer use on a real desktop, in all three versions vdesk speaks: the toolset
(``computer_toolset_20260801``) and the two single tools. Each reply is first checked by the
SDK's own response model, then run, and an X event probe (or a program) shows what arrived."""

from __future__ import annotations

import time

import base64
import io

import pytest
from anthropic.types import ComputerToolUseBlock
from anthropic.types.beta import BetaToolUseBlock
from PIL import Image
from pydantic import TypeAdapter

from tests.desktop.helpers import program_receiving_keys
from tests.desktop.test_adapters import park, summary
from vdesk.adapters.anthropic import TOOLSET, AnthropicComputer

SINGLE = ("computer_20250124", "computer_20251124")


def member(name: str, **tool_input: object) -> ComputerToolUseBlock:
    """A toolset reply block, as the SDK's response model reads it."""
    return TypeAdapter(ComputerToolUseBlock).validate_python({
        "type": "tool_use", "id": f"toolu_{name}", "name": name, "toolset_name": "computer",
        "caller": {"type": "direct"}, "input": tool_input})


def single(**tool_input: object) -> BetaToolUseBlock:
    """A single-tool reply block, as the SDK's beta response model reads it."""
    return BetaToolUseBlock.model_validate({"type": "tool_use", "id": "toolu_1", "name": "computer", "input": tool_input})


def size_of(data: str | None) -> tuple[int, int]:
    assert data, "no image returned"
    return Image.open(io.BytesIO(base64.b64decode(data))).size


def test_toolset_left_click_arrives_and_is_acknowledged(shared_desktop, probe):
    computer = AnthropicComputer(shared_desktop)
    park(shared_desktop, probe)
    answer = computer.answer(member("left_click", coordinate=[640, 400], text="shift"))
    assert answer == {"type": "tool_result", "tool_use_id": "toolu_left_click",
                      "content": [{"type": "text", "text": "Clicked."}]}
    assert summary(probe.events()) == ["key_press Shift_L", "button_press 1 640 400", "button_release 1 640 400",
                                       "key_release Shift_L"]


def test_toolset_scroll_arrives_as_wheel_notches(shared_desktop, probe):
    computer = AnthropicComputer(shared_desktop)
    park(shared_desktop, probe)
    result = computer.run(member("scroll", coordinate=[300, 200], scroll_direction="up", scroll_amount=2))
    assert result.output == "Scrolled up." and result.error is None
    assert summary(probe.events()) == ["button_press 4 300 200", "button_release 4 300 200"] * 2


def test_toolset_key_with_repeat_presses_it_that_many_times(shared_desktop, probe):
    result = AnthropicComputer(shared_desktop).run(member("key", text="Down", repeat=3))
    assert result.output == "Pressed Down."
    assert summary(probe.events()) == ["key_press Down", "key_release Down"] * 3


def test_toolset_wait_and_a_drag_holding_ctrl(shared_desktop, probe):
    computer = AnthropicComputer(shared_desktop)
    started = time.monotonic()
    assert computer.run(member("wait", duration=1)).output == "Waited 1s."
    assert time.monotonic() - started >= 1.0  # it waited the second it says
    park(shared_desktop, probe)
    result = computer.run(member("left_click_drag", start_coordinate=[100, 100], coordinate=[200, 150], text="ctrl"))
    assert result.output == "Dragged."
    events = summary(probe.events())
    assert events[0] == "key_press Control_L" and events[-1] == "key_release Control_L"
    assert "button_press 1 100 100" in events and "button_release 1 200 150" in events


def test_toolset_zoom_returns_the_region_and_screenshot_and_cursor_answer(shared_desktop, probe):
    computer = AnthropicComputer(shared_desktop)
    assert size_of(computer.run(member("zoom", region=[0, 0, 320, 200])).base64_image) == (320, 200)
    assert size_of(computer.run(member("screenshot")).base64_image) == (1280, 800)
    computer.run(member("mouse_move", coordinate=[123, 45]))
    assert computer.run(member("cursor_position")).output == "X=123,Y=45"
    off = AnthropicComputer(shared_desktop, enable_zoom=False)
    assert off.tool_definition() == {"type": TOOLSET, "configs": {"zoom": {"enabled": False}}}
    assert "not enabled" in off.run(member("zoom", region=[0, 0, 10, 10])).error


def test_toolset_typed_text_lands_in_a_program(shared_desktop):
    computer = AnthropicComputer(shared_desktop)
    with program_receiving_keys(shared_desktop, "toolset-typed") as received:
        text = 'Grüße 😀 "quoted" $HOME'
        assert computer.run(member("type", text=text)).output == "Typed."
        assert computer.run(member("key", text="ctrl+d", repeat=2)).error is None
        assert received() == text


def test_a_malformed_toolset_call_is_an_error_and_reaches_nothing(shared_desktop, probe):
    computer = AnthropicComputer(shared_desktop)
    park(shared_desktop, probe)
    answer = computer.answer({"type": "tool_use", "id": "toolu_x", "name": "left_click", "toolset_name": "computer",
                              "input": {"coordinate": [5000, 1]}})
    assert answer["is_error"] is True and "(5000, 1)" in answer["content"][0]["text"]
    assert probe.events() == []


@pytest.mark.parametrize("version", SINGLE)
def test_the_single_tools_still_click_scroll_and_key(shared_desktop, probe, version):
    computer = AnthropicComputer(shared_desktop, version=version)
    assert computer.tool_definition()["type"] == version and computer.tool_definition()["name"] == "computer"
    park(shared_desktop, probe)
    shot = computer.run(single(action="left_click", coordinate=[640, 400]))
    assert size_of(shot.base64_image) == (1280, 800)  # a single tool answers with the screen
    computer.run(single(action="scroll", coordinate=[300, 200], scroll_direction="down", scroll_amount=1))
    computer.run(single(action="key", text="Return"))
    assert summary(probe.events()) == ["button_press 1 640 400", "button_release 1 640 400",
                                       "button_press 5 300 200", "button_release 5 300 200",
                                       "key_press Return", "key_release Return"]
    assert computer.run(single(action="wait", duration=0.2)).error is None  # a fraction of a second is fine here


def test_zoom_is_the_newer_single_tools_only(shared_desktop):
    assert size_of(AnthropicComputer(shared_desktop, version="computer_20251124").run(
        single(action="zoom", region=[0, 0, 640, 400])).base64_image) == (640, 400)
    assert "no zoom" in AnthropicComputer(shared_desktop, version="computer_20250124").run(
        single(action="zoom", region=[0, 0, 640, 400])).error

"""Anthropic's computer toolset (``computer_toolset_20260801``) against the SDK's own types:
the tool entry is built with its param types, recorded replies validate with its response
models, and every member the SDK knows translates into the BaseActions it asks for."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from anthropic.types import (COMPUTER_MEMBER_NAME_VALUES, ComputerHoldKeyInput, ComputerKeyInput,
                             ComputerLeftClickDragInput, ComputerLeftClickInput, ComputerScrollInput,
                             ComputerToolset20260801Param, ComputerToolsetConfigsParam, ComputerToolUseBlock,
                             ComputerWaitInput, ComputerZoomConfigParam, ComputerZoomInput, Message, ToolUnionParam)
from anthropic.types.beta import BetaToolComputerUse20250124Param, BetaToolComputerUse20251124Param, BetaToolUseBlock
from pydantic import BaseModel, TypeAdapter

from vdesk.actions import BaseAction
from vdesk.adapters import anthropic
from vdesk.adapters.anthropic import TOOLSET, headers, tool_definition, translate_tool_use
from vdesk.coords import ImageSpace
from vdesk.errors import InvalidAction, InvalidArgument

RECORDED = Path(__file__).parents[1] / "harness" / "recorded"
IMAGE = ImageSpace(1280, 800)


def block(name: str, tool_input: BaseModel | dict[str, Any]) -> dict[str, Any]:
    """A toolset tool_use block as the API sends it, checked by the SDK's response model."""
    data = tool_input.model_dump(exclude_none=True) if isinstance(tool_input, BaseModel) else tool_input
    sent = {"type": "tool_use", "id": "toolu_1", "name": name, "toolset_name": "computer",
            "caller": {"type": "direct"}, "input": data}
    TypeAdapter(ComputerToolUseBlock).validate_python(sent)
    return sent


def kinds(call: anthropic.AnthropicCall) -> list[str]:
    return [action.type.value for action in call.actions]


def act(kind: str, **inputs: Any) -> BaseAction:
    return BaseAction.parse({"type": kind, "inputs": inputs})


# --- the tool entry -------------------------------------------------------------------------


def test_the_toolset_entry_is_the_sdks_param_with_no_name_and_no_display_size():
    assert tool_definition(IMAGE, TOOLSET) == ComputerToolset20260801Param(type="computer_toolset_20260801")
    off = ComputerToolset20260801Param(type="computer_toolset_20260801",
                                       configs=ComputerToolsetConfigsParam(zoom=ComputerZoomConfigParam(enabled=False)))
    assert tool_definition(IMAGE, TOOLSET, enable_zoom=False) == off
    for entry in (tool_definition(IMAGE, TOOLSET), off):
        TypeAdapter(ComputerToolset20260801Param).validate_python(entry)
        TypeAdapter(ToolUnionParam).validate_python(entry)  # one of the Messages API's tools


def test_the_single_tools_entries_are_the_sdks_beta_params():
    old = tool_definition(IMAGE, "computer_20250124")
    assert old == BetaToolComputerUse20250124Param(type="computer_20250124", name="computer",
                                                   display_width_px=1280, display_height_px=800)
    new = tool_definition(IMAGE, "computer_20251124")
    assert new == BetaToolComputerUse20251124Param(type="computer_20251124", name="computer", display_width_px=1280,
                                                   display_height_px=800, enable_zoom=True)
    TypeAdapter(BetaToolComputerUse20250124Param).validate_python(old)
    TypeAdapter(BetaToolComputerUse20251124Param).validate_python(new)


def test_the_toolset_needs_no_beta_header_and_the_single_tools_keep_theirs():
    assert "anthropic-beta" not in headers(TOOLSET)
    assert headers("computer_20251124")["anthropic-beta"] == "computer-use-2025-11-24"
    assert headers("computer_20250124")["anthropic-beta"] == "computer-use-2025-01-24"


# --- replies --------------------------------------------------------------------------------


def test_the_recorded_toolset_replies_are_messages_the_sdk_reads():
    replies = json.loads((RECORDED / "anthropic_toolset.json").read_text())
    blocks = []
    for reply in replies:
        message = Message.model_validate(reply)
        blocks += [b.model_dump(exclude_none=True) for b in message.content if b.type == "tool_use"]
    assert [b["name"] for b in blocks] == ["left_click", "type", "key", "wait", "zoom"]
    for sent in blocks:
        TypeAdapter(ComputerToolUseBlock).validate_python(sent)
        assert sent["toolset_name"] == "computer"
    calls = [translate_tool_use(sent) for sent in blocks]
    assert [kinds(call) for call in calls] == [["click"], ["type"], ["hotkey"], ["wait"], []]
    assert calls[4].observation == "zoom" and calls[4].region == (0, 0, 320, 200)


def test_the_recorded_single_tool_replies_are_beta_tool_use_blocks():
    replies = json.loads((RECORDED / "anthropic_messages.json").read_text())
    blocks = [BetaToolUseBlock.model_validate(b) for r in replies for b in r["content"] if b["type"] == "tool_use"]
    calls = [translate_tool_use(b.model_dump(), version="computer_20250124") for b in blocks]
    assert [kinds(call) for call in calls] == [["click"], ["type"], ["hotkey"]]


# --- members --------------------------------------------------------------------------------


def test_every_member_the_sdk_knows_is_one_vdesk_reads():
    assert set(COMPUTER_MEMBER_NAME_VALUES) == set(anthropic._TOOLSET_FIELDS)


def test_key_with_repeat_presses_the_keys_that_many_times():
    call = translate_tool_use(block("key", ComputerKeyInput(text="ctrl+z", repeat=3)))
    assert call.actions == [act("hotkey", key="ctrl+z")] * 3
    assert translate_tool_use(block("key", ComputerKeyInput(text="Down"))).actions == [act("hotkey", key="Down")]


def test_wait_and_hold_key_take_whole_seconds():
    assert translate_tool_use(block("wait", ComputerWaitInput(duration=2))).actions == [act("wait", time=2)]
    held = translate_tool_use(block("hold_key", ComputerHoldKeyInput(text="shift", duration=1)))
    assert held.actions == [act("hold_key", key="shift", time=1)]
    with pytest.raises(InvalidAction, match="whole number of seconds"):
        translate_tool_use({"type": "tool_use", "id": "t", "name": "wait", "toolset_name": "computer",
                            "input": {"duration": 1.5}})


def test_zoom_with_a_region_asks_for_a_crop():
    call = translate_tool_use(block("zoom", ComputerZoomInput(region=[10, 20, 330, 220])))
    assert call.actions == [] and call.observation == "zoom" and call.region == (10, 20, 330, 220)


def test_scroll_and_clicks_and_a_drag_holding_keys():
    scroll = translate_tool_use(block("scroll", ComputerScrollInput(scroll_direction="down", scroll_amount=3,
                                                                    coordinate=[100, 200])))
    assert scroll.actions == [act("scroll", direction="down", amount=3, point={"raw": {"x": 100, "y": 200}})]
    click = translate_tool_use(block("left_click", ComputerLeftClickInput(coordinate=[5, 6], text="ctrl")))
    assert click.actions == [act("click", point={"raw": {"x": 5, "y": 6}}, modifiers=["ctrl"])]
    drag = translate_tool_use(block("left_click_drag", ComputerLeftClickDragInput(
        start_coordinate=[1, 2], coordinate=[30, 40], text="shift")))
    assert kinds(drag) == ["press", "drag", "release"]


def test_mouse_button_members_take_no_coordinate_in_the_toolset():
    assert kinds(translate_tool_use(block("left_mouse_down", {}))) == ["mouse_down"]
    with pytest.raises(InvalidAction, match="left_mouse_up does not take coordinate"):
        translate_tool_use({"type": "tool_use", "id": "t", "name": "left_mouse_up", "toolset_name": "computer",
                            "input": {"coordinate": [1, 1]}})


@pytest.mark.parametrize("sent, message", [
    ({"name": "teleport", "toolset_name": "computer", "input": {}}, "unknown computer toolset member 'teleport'"),
    ({"name": "left_click", "toolset_name": "browser", "input": {}}, "toolset_name 'browser'"),
    ({"name": "left_click", "toolset_name": "computer", "input": {"action": "left_click"}}, "has no 'action'"),
    ({"name": "key", "toolset_name": "computer", "input": {"text": "a", "repeat": 0}}, "repeat"),
    ({"name": "type", "toolset_name": "computer", "input": {}}, "type needs text"),
    ({"name": "computer", "input": {"action": "left_click"}}, "a single computer tool's call"),
])
def test_a_malformed_block_is_rejected_naming_the_problem(sent, message):
    with pytest.raises(InvalidAction) as caught:
        translate_tool_use(sent)
    assert message in str(caught.value)


def test_single_tool_inputs_are_not_toolset_replies():
    with pytest.raises(InvalidArgument, match="translate_tool_use"):
        anthropic.translate({"action": "screenshot"}, version=TOOLSET)


def test_the_formats_registry_reads_toolset_blocks_written_by_hand():
    from vdesk.adapters.formats import parse_payloads

    text = '[{"name": "key", "input": {"text": "Return", "repeat": 2}}, {"name": "wait", "input": {"duration": 1}}]'
    assert [a.type.value for a in parse_payloads("anthropic_toolset", [text])] == ["hotkey", "hotkey", "wait"]
    with pytest.raises(InvalidAction, match="action 0: unknown computer toolset member 'zap'"):
        parse_payloads("anthropic_toolset", ['{"name": "zap", "input": {}}'])

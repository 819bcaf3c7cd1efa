"""BaseAction parsing: names and aliases models emit, coordinates, and the errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vdesk.actions import INPUT_ALIASES, BaseAction, Coordinates, parse_batch
from vdesk.coords import PhysicalPoint, Screen
from vdesk.errors import InvalidAction

SCREEN = Screen(1000, 500)


def parse(kind: str, **inputs: Any) -> BaseAction:
    return BaseAction.parse({"type": kind, "inputs": inputs})


def error_of(data: Any) -> str:
    with pytest.raises(InvalidAction) as caught:
        BaseAction.parse(data)
    return str(caught.value)


def raw(action_input: Coordinates | None) -> tuple[float, float]:
    assert action_input is not None and action_input.raw is not None
    return (action_input.raw.x, action_input.raw.y)


# --- names ----------------------------------------------------------------------------------


@pytest.mark.parametrize("alias, canonical", [
    ("left_click", "click"), ("left_single", "click"), ("left_double", "double_click"),
    ("right_single", "right_click"), ("hover", "mouse_move"), ("move", "mouse_move"),
    ("move_to", "mouse_move"), ("LEFT_CLICK", "click"),
])
def test_pointing_action_aliases_become_the_canonical_type(alias: str, canonical: str) -> None:
    assert parse(alias, point=[10, 20]).type.value == canonical


@pytest.mark.parametrize("alias", ["select", "left_click_drag"])
def test_drag_aliases_become_drag(alias: str) -> None:
    assert parse(alias, start=[1, 2], end=[3, 4]).type.value == "drag"


@pytest.mark.parametrize("kind, alias, value, field, others", [
    ("drag", "start_box", [1, 2], "start", {"end": [9, 9]}),
    ("drag", "start_point", [1, 2], "start", {"end": [9, 9]}),
    ("drag", "start_coordinate", [1, 2], "start", {"end": [9, 9]}),
    ("drag", "end_box", [1, 2], "end", {"start": [9, 9]}),
    ("drag", "end_point", [1, 2], "end", {"start": [9, 9]}),
    ("drag", "end_coordinate", [1, 2], "end", {"start": [9, 9]}),
    ("click", "position", [1, 2], "point", {}),
    ("click", "coordinate", [1, 2], "point", {}),
    ("type", "text", "hi", "content", {}),
    ("type", "input_text", "hi", "content", {}),
    ("hotkey", "hotkey", "ctrl+c", "key", {}),
    ("hotkey", "keyname", "ctrl+c", "key", {}),
    ("wait", "duration", 2, "time", {}),
    ("wait", "delay", 2, "time", {}),
    ("scroll", "scroll_direction", "up", "direction", {}),
    ("scroll", "dir", "up", "direction", {}),
])
def test_input_aliases_fill_the_canonical_input(kind: str, alias: str, value: Any, field: str,
                                                 others: dict[str, Any]) -> None:
    inputs = parse(kind, **{alias: value}, **others).inputs
    got = getattr(inputs, field)
    assert (raw(got) if field in ("start", "end", "point") else got) == (tuple(value) if isinstance(value, list) else value)


@pytest.mark.parametrize("name", ["start", "start_box", "start_point"])
def test_start_without_end_means_point(name: str) -> None:
    action = parse("click", **{name: [5, 6]})
    assert raw(action.inputs.point) == (5, 6)
    assert action.inputs.start is None


def test_the_same_value_under_two_names_is_accepted() -> None:
    assert parse("type", text="a", content="a").inputs.content == "a"


def test_an_input_given_twice_is_rejected_naming_both_spellings() -> None:
    message = error_of({"type": "type", "inputs": {"text": "a", "content": "b"}})
    assert "'text'" in message and "'content'" in message


@pytest.mark.parametrize("written, direction", [("UP", "up"), ("Down", "down"), (" left ", "left"), ("RiGhT", "right")])
def test_scroll_direction_is_accepted_in_any_case(written: str, direction: str) -> None:
    assert parse("scroll", direction=written).inputs.direction == direction


# --- coordinates ----------------------------------------------------------------------------

BOX = {"x1": 100, "y1": 100, "x2": 200, "y2": 300}


def resolve(**coordinates: Any) -> PhysicalPoint:
    return Coordinates.model_validate(coordinates).resolve(SCREEN)


def test_normalized_wins_over_raw_and_reference_box() -> None:
    point = resolve(normalized={"x": 0.25, "y": 0.5}, raw={"x": 10, "y": 10}, referenceBox=BOX)
    assert point == PhysicalPoint(250, 250)


def test_raw_wins_over_the_reference_box() -> None:
    assert resolve(raw={"x": 10, "y": 20}, referenceBox=BOX) == PhysicalPoint(10, 20)


def test_the_reference_box_centre_is_the_target_when_nothing_else_is_given() -> None:
    assert resolve(referenceBox=BOX) == PhysicalPoint(150, 200)


def test_no_coordinates_at_all_is_invalid_coordinates() -> None:
    with pytest.raises(InvalidAction, match="invalid coordinates"):
        resolve()


@pytest.mark.parametrize("system", ["window", "browserPage", "page"])
def test_a_reference_system_other_than_screen_is_rejected_clearly(system: str) -> None:
    message = error_of({"type": "click", "inputs": {"point": {"raw": {"x": 1, "y": 2}, "referenceSystem": system}}})
    assert repr(system) in message and "not supported" in message and "'screen'" in message


def test_the_screen_reference_system_is_accepted() -> None:
    action = parse("click", point={"raw": {"x": 1, "y": 2}, "referenceSystem": "screen"})
    assert raw(action.inputs.point) == (1, 2)


# --- rejections -----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["navigate", "navigate_back", "long_press", "swipe", "home", "back", "open_app"])
def test_browser_and_mobile_actions_are_unsupported_on_a_desktop(kind: str) -> None:
    message = error_of({"type": kind, "inputs": {}})
    assert kind in message and "unsupported on a desktop" in message


def test_an_unknown_action_type_is_rejected_naming_it() -> None:
    assert "teleport" in error_of({"type": "teleport"})


def test_an_unknown_input_name_is_rejected_naming_it() -> None:
    assert "colour" in error_of({"type": "click", "inputs": {"point": [1, 2], "colour": "red"}})


@pytest.mark.parametrize("key", ["ctrl+banana", ["CTRL", "banana"], "banana"])
def test_an_unknown_key_name_is_rejected_naming_it(key: Any) -> None:
    assert "banana" in error_of({"type": "hotkey", "inputs": {"key": key}})


def test_an_unknown_modifier_is_rejected_naming_it() -> None:
    assert "hyperdrive" in error_of({"type": "click", "inputs": {"point": [1, 2], "modifiers": ["hyperdrive"]}})


@pytest.mark.parametrize("kind, missing", [("click", "point"), ("drag", "end"), ("type", "content"),
                                           ("hotkey", "key"), ("scroll", "direction")])
def test_a_missing_required_input_is_rejected_naming_it(kind: str, missing: str) -> None:
    inputs = {"start": [1, 2]} if kind == "drag" else {}
    assert missing in error_of({"type": kind, "inputs": inputs})


def test_parse_batch_names_the_index_of_the_failing_action() -> None:
    batch = [{"type": "click", "inputs": {"point": [1, 2]}}, {"type": "wait"}, {"type": "swipe"}]
    with pytest.raises(InvalidAction, match=r"^action 2: .*swipe"):
        parse_batch(batch)


def test_parse_batch_accepts_a_list_and_a_single_action() -> None:
    assert [a.type.value for a in parse_batch([{"type": "wait"}, {"type": "finished"}])] == ["wait", "finished"]
    assert [a.type.value for a in parse_batch({"type": "screenshot"})] == ["screenshot"]


def test_json_text_is_parsed_like_a_dict() -> None:
    action = BaseAction.parse(json.dumps({"type": "left_click", "inputs": {"start_box": [3, 4]}, "meta": {"toolHint": "x"}}))
    assert action.type.value == "click" and raw(action.inputs.point) == (3, 4)


# --- robustness -----------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=16,
)
action_names = st.sampled_from([
    "click", "left_click", "drag", "select", "scroll", "type", "hotkey", "key", "press", "release",
    "hold_key", "wait", "mouse_down", "mouse_up", "finished", "call_user", "screenshot", "navigate",
    "triple_click", "mouse_move",
]) | st.text(max_size=12)
input_names = st.sampled_from(sorted({*INPUT_ALIASES, *INPUT_ALIASES.values(), "button", "modifiers", "amount"}))
coordinate_like = st.one_of(
    st.lists(st.integers(-10, 5000) | st.floats(), min_size=2, max_size=2),
    st.fixed_dictionaries({}, optional={"raw": json_values, "normalized": json_values,
                                        "referenceBox": json_values, "referenceSystem": json_values}),
)
actions = st.fixed_dictionaries({"type": action_names}, optional={
    "inputs": st.dictionaries(input_names | st.text(max_size=8), json_values | coordinate_like, max_size=4),
    "meta": json_values,
})


@given(st.one_of(json_values, actions, actions.map(json.dumps), st.binary(max_size=40)))
def test_parse_only_ever_raises_invalid_action(data: Any) -> None:
    try:
        BaseAction.parse(data)
    except InvalidAction:
        pass

"""OpenAI computer_call actions → vdesk BaseActions."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vdesk import keys
from vdesk.actions import BaseAction
from vdesk.adapters.openai import (
    PIXELS_PER_NOTCH,
    WAIT_SECONDS,
    OpenAICall,
    notches,
    translate,
    translate_call,
)
from vdesk.errors import InvalidAction


def raw(x: int, y: int) -> dict[str, Any]:
    return {"raw": {"x": x, "y": y}}


def act(kind: str, **inputs: Any) -> BaseAction:
    return BaseAction.parse({"type": kind, "inputs": inputs})


def actions(action: dict[str, Any]) -> list[BaseAction]:
    return translate(action).actions


def error_of(action: Any) -> str:
    with pytest.raises(InvalidAction) as caught:
        translate(action)
    return str(caught.value)


# --- clicks ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("button", "kind"), [("left", "click"), ("right", "right_click"), ("wheel", "middle_click")]
)
@pytest.mark.parametrize(("x", "y"), [(0, 0), (640, 400), (1279, 799)])
def test_click_clicks_the_button_at_the_raw_screenshot_pixel(
    button: str, kind: str, x: int, y: int
) -> None:
    assert actions({"type": "click", "button": button, "x": x, "y": y}) == [
        act(kind, point=raw(x, y))
    ]


@pytest.mark.parametrize("button", ["back", "forward"])
def test_click_with_back_or_forward_button_is_rejected_naming_it(button: str) -> None:
    message = error_of({"type": "click", "button": button, "x": 10, "y": 10})
    assert message.startswith(f"click: button {button!r} is not supported")


def test_click_with_held_keys_holds_them_as_modifiers() -> None:
    action = {"type": "click", "button": "left", "x": 5, "y": 6, "keys": ["CTRL", "SHIFT"]}
    assert actions(action) == [act("click", point=raw(5, 6), modifiers=["CTRL", "SHIFT"])]


@pytest.mark.parametrize(("x", "y"), [(12, 34), (800, 600)])
def test_double_click_double_clicks_there(x: int, y: int) -> None:
    assert actions({"type": "double_click", "x": x, "y": y}) == [
        act("double_click", point=raw(x, y))
    ]


def test_double_click_with_a_right_button_is_rejected() -> None:
    message = error_of({"type": "double_click", "x": 1, "y": 1, "button": "right"})
    assert message == "double_click: button: Input should be 'left'"


# --- pointer moves and drags ----------------------------------------------------------------


@pytest.mark.parametrize(("x", "y"), [(0, 0), (333, 444)])
def test_move_moves_the_pointer(x: int, y: int) -> None:
    assert actions({"type": "move", "x": x, "y": y}) == [act("mouse_move", point=raw(x, y))]


def test_drag_along_two_points_is_one_drag() -> None:
    action = {"type": "drag", "path": [{"x": 100, "y": 200}, {"x": 200, "y": 300}]}
    assert actions(action) == [act("drag", start=raw(100, 200), end=raw(200, 300))]


def test_drag_along_a_longer_path_presses_moves_through_and_releases() -> None:
    path = [{"x": 10, "y": 10}, {"x": 40, "y": 15}, {"x": 80, "y": 60}, {"x": 120, "y": 90}]
    assert actions({"type": "drag", "path": path}) == [
        act("mouse_down", point=raw(10, 10), button="left"),
        act("mouse_move", point=raw(40, 15)),
        act("mouse_move", point=raw(80, 60)),
        act("mouse_up", point=raw(120, 90), button="left"),
    ]


def test_drag_along_three_points_moves_once_in_the_middle() -> None:
    path = [{"x": 1, "y": 1}, {"x": 2, "y": 2}, {"x": 3, "y": 3}]
    assert [a.type.value for a in actions({"type": "drag", "path": path})] == [
        "mouse_down", "mouse_move", "mouse_up"
    ]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ([{"x": 1, "y": 1}],
         "drag: path: List should have at least 2 items after validation, not 1"),
        ([], "drag: path: List should have at least 2 items after validation, not 0"),
        ([{"x": 1, "y": 1}, {"x": 2}], "drag: path.1.y: Field required"),
        ([{"x": 1, "y": 1}, [2, 2]],
         "drag: path.1: Input should be a valid dictionary or instance of PathPoint"),
        ("10,10 20,20", "drag: path: Input should be a valid list"),
    ],
)
def test_malformed_drag_paths_are_rejected_naming_the_field(path: Any, expected: str) -> None:
    assert error_of({"type": "drag", "path": path}) == expected


# --- keyboard -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("names", "keysyms"),
    [
        (["CTRL", "L"], ("Control_L", "l")),
        (["CTRL", "C"], ("Control_L", "c")),
        (["ALT", "TAB"], ("Alt_L", "Tab")),
        (["CTRL", "SHIFT", "T"], ("Control_L", "Shift_L", "t")),
        (["ENTER"], ("Return",)),
        (["ESC"], ("Escape",)),
        (["TAB"], ("Tab",)),
        (["SPACE"], ("space",)),
        (["BACKSPACE"], ("BackSpace",)),
        (["ARROWLEFT"], ("Left",)),
        (["ARROWRIGHT"], ("Right",)),
        (["ARROWUP"], ("Up",)),
        (["ARROWDOWN"], ("Down",)),
        (["SHIFT", "ARROWLEFT"], ("Shift_L", "Left")),
        (["CMD", "SPACE"], ("Super_L", "space")),
        (["PAGEDOWN"], ("Page_Down",)),
        (["DELETE"], ("Delete",)),
        (["F5"], ("F5",)),
    ],
)
def test_keypress_is_one_hotkey_of_the_listed_keys(
    names: list[str], keysyms: tuple[str, ...]
) -> None:
    (hotkey,) = actions({"type": "keypress", "keys": names})
    assert hotkey == act("hotkey", key=names)
    assert hotkey.inputs.keysyms == keysyms == keys.combination(names)


@pytest.mark.parametrize(
    ("key_list", "expected"),
    [
        (["CTRL", "HYPER"], "keypress: keys: unknown key 'HYPER'"),
        ([], "keypress: keys: List should have at least 1 item after validation, not 0"),
        ([""], "keypress: keys.0: String should have at least 1 character"),
        (["CTRL", 7], "keypress: keys.1: Input should be a valid string"),
        ("CTRL+L", "keypress: keys: Input should be a valid list"),
    ],
)
def test_malformed_keypresses_are_rejected_naming_the_field(key_list: Any, expected: str) -> None:
    assert error_of({"type": "keypress", "keys": key_list}) == expected


@pytest.mark.parametrize("text", ["hello", "Grüße, 世界 👋", "x < y", "submit\n", ""])
def test_type_types_the_text_exactly(text: str) -> None:
    assert actions({"type": "type", "text": text}) == [act("type", content=text)]


def test_type_without_text_is_rejected() -> None:
    assert error_of({"type": "type"}) == "type: text: Field required"


# --- scrolling ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scroll_y", "direction", "amount"),
    [(100, "down", 1), (300, "down", 3), (-200, "up", 2), (40, "down", 1), (-1, "up", 1),
     (149, "down", 1), (150, "down", 2), (-250, "up", 3)],
)
def test_vertical_scroll_pixels_become_notches_positive_is_down(
    scroll_y: int, direction: str, amount: int
) -> None:
    action = {"type": "scroll", "x": 640, "y": 400, "scroll_x": 0, "scroll_y": scroll_y}
    expected = act("scroll", point=raw(640, 400), direction=direction, amount=amount)
    assert actions(action) == [expected]


@pytest.mark.parametrize(("scroll_x", "direction"), [(200, "right"), (-200, "left")])
def test_horizontal_scroll_positive_is_right(scroll_x: int, direction: str) -> None:
    action = {"type": "scroll", "x": 10, "y": 20, "scroll_x": scroll_x, "scroll_y": 0}
    assert actions(action) == [act("scroll", point=raw(10, 20), direction=direction, amount=2)]


def test_diagonal_scroll_scrolls_vertically_then_horizontally() -> None:
    action = {"type": "scroll", "x": 10, "y": 20, "scroll_x": -100, "scroll_y": 500}
    assert actions(action) == [
        act("scroll", point=raw(10, 20), direction="down", amount=5),
        act("scroll", point=raw(10, 20), direction="left", amount=1),
    ]


def test_scroll_of_nothing_only_moves_the_pointer_there() -> None:
    action = {"type": "scroll", "x": 10, "y": 20, "scroll_x": 0, "scroll_y": 0}
    assert actions(action) == [act("mouse_move", point=raw(10, 20))]


def test_scroll_with_held_keys_holds_them() -> None:
    action = {"type": "scroll", "x": 1, "y": 2, "scroll_x": 0, "scroll_y": -300, "keys": ["CTRL"]}
    assert actions(action) == [
        act("scroll", point=raw(1, 2), direction="up", amount=3, modifiers=["CTRL"])
    ]


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ({"type": "scroll", "x": 1, "y": 1, "scroll_x": 0, "scroll_y": 20_000},
         "scroll: scroll_y: 20000 px is more than 10000 px (100 notches)"),
        ({"type": "scroll", "x": 1, "y": 1, "scroll_x": -10_100, "scroll_y": 0},
         "scroll: scroll_x: -10100 px is more than 10000 px (100 notches)"),
        ({"type": "scroll", "x": 1, "y": 1, "scroll_x": 0},
         "scroll: scroll_y: Field required"),
        ({"type": "scroll", "x": 1, "y": 1, "scroll_x": 0, "scroll_y": 2.5},
         "scroll: scroll_y: Input should be a valid integer"),
    ],
)
def test_malformed_or_huge_scrolls_are_rejected_naming_the_field(
    action: dict[str, Any], expected: str
) -> None:
    assert error_of(action) == expected


def test_notches_round_half_up_and_never_lose_a_non_zero_scroll() -> None:
    assert PIXELS_PER_NOTCH == 100
    assert [notches(p) for p in (0, 1, 49, 50, 149, 150, -150, 1000)] == [0, 1, 1, 1, 1, 2, 2, 10]


# --- wait, screenshot -----------------------------------------------------------------------


def test_wait_waits_the_default_second() -> None:
    assert WAIT_SECONDS == 1.0
    assert actions({"type": "wait"}) == [act("wait", time=1.0)]


def test_screenshot_asks_for_an_observation_only() -> None:
    assert translate({"type": "screenshot"}) == OpenAICall([], "screenshot")


# --- malformed actions ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ({"type": "click", "x": 1, "y": 2}, "click: button: Field required"),
        ({"type": "click", "button": "left", "y": 2}, "click: x: Field required"),
        ({"type": "click", "button": "left", "x": "1", "y": 2},
         "click: x: Input should be a valid integer"),
        ({"type": "click", "button": "left", "x": 1.5, "y": 2},
         "click: x: Input should be a valid integer"),
        ({"type": "click", "button": "left", "x": 1, "y": -2},
         "click: y: Input should be greater than or equal to 0"),
        ({"type": "click", "button": "middle", "x": 1, "y": 2},
         "click: button: Input should be 'left', 'right', 'wheel', 'back' or 'forward'"),
        ({"type": "move", "x": 1, "y": 2, "z": 3}, "move: z: Extra inputs are not permitted"),
        ({"type": "move", "x": None, "y": 2}, "move: x: Input should be a valid integer"),
    ],
)
def test_malformed_actions_are_rejected_naming_the_field(
    action: dict[str, Any], expected: str
) -> None:
    assert error_of(action) == expected


@pytest.mark.parametrize("kind", ["triple_click", "navigate", "left_click", "zoom"])
def test_unknown_action_types_are_rejected_naming_them(kind: str) -> None:
    assert error_of({"type": kind}) == f"unknown computer action type {kind!r}"


def test_an_action_without_type_is_rejected() -> None:
    assert error_of({"x": 1, "y": 1}) == "computer action has no type"


@pytest.mark.parametrize("action", [None, [], "click", 1])
def test_a_non_object_action_is_rejected(action: Any) -> None:
    assert "computer action must be an object" in error_of(action)


# --- whole computer_call items --------------------------------------------------------------


def test_translate_call_takes_the_single_action_of_a_computer_call() -> None:
    call = {"type": "computer_call", "id": "cu_1", "call_id": "call_1", "status": "completed",
            "pending_safety_checks": [], "action": {"type": "move", "x": 3, "y": 4}}
    assert translate_call(call) == OpenAICall([act("mouse_move", point=raw(3, 4))])


def test_translate_call_runs_a_batch_in_order_and_wants_a_screenshot_if_any_asks() -> None:
    call = {"type": "computer_call", "actions": [
        {"type": "click", "button": "left", "x": 5, "y": 5},
        {"type": "type", "text": "hi\n"},
        {"type": "screenshot"},
    ]}
    assert translate_call(call) == OpenAICall(
        [act("click", point=raw(5, 5)), act("type", content="hi\n")], "screenshot"
    )


def test_translate_call_names_the_index_of_a_bad_action_in_a_batch() -> None:
    call = {"type": "computer_call", "actions": [{"type": "wait"}, {"type": "hover"}]}
    expected = r"^actions\[1\]: unknown computer action type 'hover'$"
    with pytest.raises(InvalidAction, match=expected):
        translate_call(call)


def test_translate_call_without_an_action_is_rejected() -> None:
    with pytest.raises(InvalidAction, match="neither action nor actions"):
        translate_call({"type": "computer_call"})


# --- property -------------------------------------------------------------------------------

FIELDS = ["type", "button", "x", "y", "path", "keys", "scroll_x", "scroll_y", "text"]
TYPES = ["click", "double_click", "drag", "keypress", "move", "scroll", "type", "wait",
         "screenshot"]
SCALARS = (st.none() | st.booleans() | st.integers(-20_000, 20_000) | st.floats(allow_nan=True)
           | st.text(max_size=10)
           | st.sampled_from(["left", "right", "wheel", "back", "CTRL", "ENTER", "ARROWLEFT"]))
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=5)
                    | st.dictionaries(st.sampled_from(["x", "y", "z"]) | st.text(max_size=3),
                                      inner, max_size=3), max_leaves=12)
ANY_KEYS = st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=6), JSON, max_size=6)
ACTIONS = ANY_KEYS | st.builds(
    lambda kind, rest: {"type": kind, **rest},
    st.sampled_from(TYPES),
    st.dictionaries(st.sampled_from(FIELDS[1:]), JSON, max_size=5),
)


@settings(max_examples=400, deadline=None)
@given(action=ACTIONS)
def test_translate_raises_nothing_but_invalid_action(action: Any) -> None:
    try:
        call = translate(action)
    except InvalidAction:
        return
    assert all(isinstance(step, BaseAction) for step in call.actions)
    assert call.actions or call.observation == "screenshot"

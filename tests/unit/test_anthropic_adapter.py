"""Anthropic computer-use tool inputs → vdesk BaseActions."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vdesk.actions import BaseAction
from vdesk.adapters.anthropic import AnthropicCall, ComputerInput, tool_definition, translate
from vdesk.coords import ImageSpace, Screen, anthropic_target
from vdesk.errors import InvalidAction

VERSIONS = ["computer_20250124", "computer_20251124"]


def raw(x: int, y: int) -> dict[str, Any]:
    return {"raw": {"x": x, "y": y}}


def act(kind: str, **inputs: Any) -> BaseAction:
    return BaseAction.parse({"type": kind, "inputs": inputs})


def actions(tool_input: dict[str, Any], **options: Any) -> list[BaseAction]:
    return translate(tool_input, **options).actions


def error_of(tool_input: Any, **options: Any) -> str:
    with pytest.raises(InvalidAction) as caught:
        translate(tool_input, **options)
    return str(caught.value)


# --- observations ---------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_screenshot_asks_for_an_observation_only(version: str) -> None:
    assert translate({"action": "screenshot"}, version=version) == AnthropicCall([], "screenshot")


@pytest.mark.parametrize("version", VERSIONS)
def test_cursor_position_asks_for_an_observation_only(version: str) -> None:
    call = translate({"action": "cursor_position"}, version=version)
    assert call == AnthropicCall([], "cursor_position")


@pytest.mark.parametrize(
    "region", [[0, 0, 512, 384], [100, 200, 300, 260], [1200, 700, 1366, 768]]
)
def test_zoom_in_computer_20251124_asks_for_a_crop_of_the_region(region: list[int]) -> None:
    call = translate({"action": "zoom", "region": region}, version="computer_20251124")
    assert call == AnthropicCall([], "zoom", tuple(region))  # type: ignore[arg-type]


def test_zoom_in_computer_20250124_is_rejected_naming_the_version() -> None:
    message = error_of({"action": "zoom", "region": [0, 0, 10, 10]}, version="computer_20250124")
    assert "zoom needs the computer_20251124 tool" in message
    assert "computer_20250124" in message


@pytest.mark.parametrize(
    ("region", "expected"),
    [
        ([10, 10, 10, 20], "x1 < x2"),
        ([50, 10, 20, 20], "x1 < x2"),
        ([0, 0, 10], "region"),
        ([0, 0, 10, -5], "region.3"),
    ],
)
def test_zoom_with_an_empty_or_malformed_region_is_rejected(
    region: list[int], expected: str
) -> None:
    message = error_of({"action": "zoom", "region": region})
    assert message.startswith("zoom: ")
    assert expected in message


def test_zoom_without_region_names_the_missing_field() -> None:
    assert error_of({"action": "zoom"}) == "zoom needs region"


# --- pointer --------------------------------------------------------------------------------


@pytest.mark.parametrize(("x", "y"), [(0, 0), (512, 384), (1365, 767)])
def test_mouse_move_moves_to_the_raw_screenshot_pixel(x: int, y: int) -> None:
    assert actions({"action": "mouse_move", "coordinate": [x, y]}) == [
        act("mouse_move", point=raw(x, y))
    ]


@pytest.mark.parametrize(
    ("action", "kind"),
    [
        ("left_click", "click"),
        ("right_click", "right_click"),
        ("middle_click", "middle_click"),
        ("double_click", "double_click"),
        ("triple_click", "triple_click"),
    ],
)
def test_clicks_with_a_coordinate_click_there(action: str, kind: str) -> None:
    assert actions({"action": action, "coordinate": [640, 400]}) == [
        act(kind, point=raw(640, 400))
    ]


@pytest.mark.parametrize(
    ("text", "held"),
    [
        ("shift", ["shift"]),
        ("ctrl", ["ctrl"]),
        ("ctrl+shift", ["ctrl", "shift"]),
        ("super", ["super"]),
        ("alt shift", ["alt", "shift"]),
    ],
)
def test_click_text_names_the_modifier_keys_held(text: str, held: list[str]) -> None:
    tool_input = {"action": "left_click", "coordinate": [10, 20], "text": text}
    assert actions(tool_input) == [act("click", point=raw(10, 20), modifiers=held)]


def test_shift_double_click_keeps_the_modifier() -> None:
    tool_input = {"action": "double_click", "coordinate": [300, 40], "text": "shift"}
    assert actions(tool_input) == [act("double_click", point=raw(300, 40), modifiers=["shift"])]


def test_left_click_without_coordinate_presses_and_releases_at_the_pointer() -> None:
    assert actions({"action": "left_click"}) == [
        act("mouse_down", button="left"),
        act("mouse_up", button="left"),
    ]


@pytest.mark.parametrize(
    ("action", "button", "clicks"),
    [("right_click", "right", 1), ("middle_click", "middle", 1),
     ("double_click", "left", 2), ("triple_click", "left", 3)],
)
def test_other_clicks_without_coordinate_click_at_the_pointer(
    action: str, button: str, clicks: int
) -> None:
    expected = [act("mouse_down", button=button), act("mouse_up", button=button)] * clicks
    assert actions({"action": action}) == expected


def test_modifier_click_at_the_pointer_holds_the_keys_around_the_click() -> None:
    assert actions({"action": "left_click", "text": "ctrl+shift"}) == [
        act("press", key="ctrl"),
        act("press", key="shift"),
        act("mouse_down", button="left"),
        act("mouse_up", button="left"),
        act("release", key="shift"),
        act("release", key="ctrl"),
    ]


def test_left_click_drag_drags_from_start_coordinate_to_coordinate() -> None:
    tool_input = {"action": "left_click_drag", "start_coordinate": [10, 20],
                  "coordinate": [300, 40]}
    assert actions(tool_input) == [act("drag", start=raw(10, 20), end=raw(300, 40))]


def test_left_click_drag_without_start_coordinate_is_rejected() -> None:
    message = error_of({"action": "left_click_drag", "coordinate": [300, 40]})
    assert message == "left_click_drag needs start_coordinate"


@pytest.mark.parametrize(("action", "kind"), [("left_mouse_down", "mouse_down"),
                                              ("left_mouse_up", "mouse_up")])
def test_left_mouse_down_and_up_press_or_release_the_left_button(action: str, kind: str) -> None:
    assert actions({"action": action}) == [act(kind, button="left")]


def test_left_mouse_down_with_a_coordinate_presses_there() -> None:
    assert actions({"action": "left_mouse_down", "coordinate": [5, 6]}) == [
        act("mouse_down", button="left", point=raw(5, 6))
    ]


def test_a_hand_made_drag_is_down_move_up() -> None:
    steps = [
        {"action": "left_mouse_down", "coordinate": [10, 10]},
        {"action": "mouse_move", "coordinate": [50, 60]},
        {"action": "left_mouse_up", "coordinate": [90, 95]},
    ]
    kinds = [a.type.value for step in steps for a in actions(step)]
    assert kinds == ["mouse_down", "mouse_move", "mouse_up"]


# --- scrolling ------------------------------------------------------------------------------


@pytest.mark.parametrize("direction", ["up", "down", "left", "right"])
@pytest.mark.parametrize("amount", [1, 3, 10])
def test_scroll_scrolls_the_given_notches_at_the_coordinate(direction: str, amount: int) -> None:
    tool_input = {"action": "scroll", "coordinate": [640, 400],
                  "scroll_direction": direction, "scroll_amount": amount}
    assert actions(tool_input) == [
        act("scroll", point=raw(640, 400), direction=direction, amount=amount)
    ]


def test_scroll_with_a_modifier_holds_it_while_scrolling() -> None:
    tool_input = {"action": "scroll", "coordinate": [640, 400], "scroll_direction": "up",
                  "scroll_amount": 5, "text": "ctrl"}
    assert actions(tool_input) == [
        act("scroll", point=raw(640, 400), direction="up", amount=5, modifiers=["ctrl"])
    ]


def test_scroll_without_coordinate_scrolls_at_the_pointer() -> None:
    tool_input = {"action": "scroll", "scroll_direction": "down", "scroll_amount": 2}
    assert actions(tool_input) == [act("scroll", direction="down", amount=2)]


def test_scroll_of_zero_notches_only_moves_to_the_coordinate() -> None:
    tool_input = {"action": "scroll", "coordinate": [7, 8], "scroll_direction": "down",
                  "scroll_amount": 0}
    assert actions(tool_input) == [act("mouse_move", point=raw(7, 8))]


@pytest.mark.parametrize(
    ("tool_input", "expected"),
    [
        ({"action": "scroll", "coordinate": [1, 1], "scroll_amount": 3},
         "scroll needs scroll_direction"),
        ({"action": "scroll", "coordinate": [1, 1], "scroll_direction": "down"},
         "scroll needs scroll_amount"),
        ({"action": "scroll", "scroll_direction": "sideways", "scroll_amount": 3},
         "scroll: scroll_direction: Input should be 'up', 'down', 'left' or 'right'"),
        ({"action": "scroll", "scroll_direction": "up", "scroll_amount": -1},
         "scroll: scroll_amount: Input should be greater than or equal to 0"),
        ({"action": "scroll", "scroll_direction": "up", "scroll_amount": 101},
         "scroll: scroll_amount: Input should be less than or equal to 100"),
        ({"action": "scroll", "scroll_direction": "up", "scroll_amount": "3"},
         "scroll: scroll_amount: Input should be a valid integer"),
    ],
)
def test_malformed_scrolls_are_rejected_naming_the_field(
    tool_input: dict[str, Any], expected: str
) -> None:
    assert error_of(tool_input) == expected


# --- keyboard -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["Return", "ctrl+shift+t", "alt+Tab", "ctrl+s", "Up", "KP_0", "super", "F5",
             "ctrl+alt+Delete", "Escape", "a"]
)
def test_key_presses_one_xdotool_combination(text: str) -> None:
    assert actions({"action": "key", "text": text}) == [act("hotkey", key=text)]


def test_key_with_space_separated_combinations_presses_them_in_turn() -> None:
    assert actions({"action": "key", "text": "ctrl+a Delete"}) == [
        act("hotkey", key="ctrl+a"),
        act("hotkey", key="Delete"),
    ]


def test_key_ignores_spaces_around_plus() -> None:
    assert actions({"action": "key", "text": "ctrl + c"}) == [act("hotkey", key="ctrl+c")]


def test_key_accepts_a_key_name_written_in_two_words() -> None:
    assert actions({"action": "key", "text": "Page Down"}) == [act("hotkey", key="Page Down")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("ctrl+banana", "key: text: unknown key 'banana'"),
     ("  ", "key: text: no key given")],
)
def test_key_with_an_unknown_or_empty_key_names_it(text: str, expected: str) -> None:
    assert error_of({"action": "key", "text": text}) == expected


def test_unknown_modifier_on_a_click_names_it() -> None:
    message = error_of({"action": "left_click", "coordinate": [1, 1], "text": "hyperdrive"})
    assert message == "left_click: text: unknown key 'hyperdrive'"


@pytest.mark.parametrize(("text", "duration"), [("shift", 1), ("ctrl+alt", 2.5), ("space", 0)])
def test_hold_key_holds_the_keys_for_the_duration(text: str, duration: float) -> None:
    tool_input = {"action": "hold_key", "text": text, "duration": duration}
    assert actions(tool_input) == [act("hold_key", key=text, time=duration)]


def test_hold_key_without_duration_is_rejected() -> None:
    assert error_of({"action": "hold_key", "text": "shift"}) == "hold_key needs duration"


@pytest.mark.parametrize(
    "text", ["hello world", "Grüße, 世界 👋", "a < b > c", "line one\nline two\n", ""]
)
def test_type_types_the_text_exactly(text: str) -> None:
    assert actions({"action": "type", "text": text}) == [act("type", content=text)]


def test_type_without_text_is_rejected() -> None:
    assert error_of({"action": "type"}) == "type needs text"


# --- waiting --------------------------------------------------------------------------------


@pytest.mark.parametrize("duration", [0, 0.5, 2, 100])
def test_wait_waits_the_duration(duration: float) -> None:
    assert actions({"action": "wait", "duration": duration}) == [act("wait", time=duration)]


@pytest.mark.parametrize(
    ("duration", "expected"),
    [
        (100.5, "wait: duration: Input should be less than or equal to 100"),
        (3600, "wait: duration: Input should be less than or equal to 100"),
        (-1, "wait: duration: Input should be greater than or equal to 0"),
        ("5", "wait: duration: Input should be a valid number"),
    ],
)
def test_wait_outside_0_to_100_seconds_is_rejected(duration: Any, expected: str) -> None:
    assert error_of({"action": "wait", "duration": duration}) == expected


def test_wait_over_100_seconds_is_rejected_for_hold_key_too() -> None:
    message = error_of({"action": "hold_key", "text": "shift", "duration": 120})
    assert message == "hold_key: duration: Input should be less than or equal to 100"


# --- malformed input ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool_input", "expected"),
    [
        ({"action": "mouse_move"}, "mouse_move needs coordinate"),
        ({"action": "mouse_move", "coordinate": [1.5, 2]},
         "mouse_move: coordinate.0: Input should be a valid integer"),
        ({"action": "left_click", "coordinate": ["10", 20]},
         "left_click: coordinate.0: Input should be a valid integer"),
        ({"action": "left_click", "coordinate": [10, True]},
         "left_click: coordinate.1: Input should be a valid integer"),
        ({"action": "left_click", "coordinate": [10]},
         "left_click: coordinate.1: Field required"),
        ({"action": "left_click", "coordinate": [1, 2, 3]},
         "left_click: coordinate: Tuple should have at most 2 items after validation, not 3"),
        ({"action": "left_click", "coordinate": [-1, 5]},
         "left_click: coordinate.0: Input should be greater than or equal to 0"),
        ({"action": "left_click", "coordinate": "10,20"},
         "left_click: coordinate: Input should be a valid tuple"),
        ({"action": "type", "text": 42}, "type: text: Input should be a valid string"),
    ],
)
def test_malformed_fields_are_rejected_naming_the_field(
    tool_input: dict[str, Any], expected: str
) -> None:
    assert error_of(tool_input) == expected


@pytest.mark.parametrize(
    ("tool_input", "expected"),
    [
        ({"action": "mouse_move", "coordinate": [1, 1], "text": "shift"},
         "mouse_move does not take text"),
        ({"action": "key", "text": "a", "coordinate": [1, 1]}, "key does not take coordinate"),
        ({"action": "screenshot", "duration": 1}, "screenshot does not take duration"),
        ({"action": "left_click", "coordinates": [1, 1]},
         "left_click: coordinates: Extra inputs are not permitted"),
    ],
)
def test_fields_an_action_does_not_take_are_rejected(
    tool_input: dict[str, Any], expected: str
) -> None:
    assert error_of(tool_input) == expected


def test_null_fields_count_as_absent() -> None:
    tool_input = {"action": "left_click", "coordinate": [3, 4], "text": None, "duration": None}
    assert actions(tool_input) == [act("click", point=raw(3, 4))]


@pytest.mark.parametrize("action", ["fly", "left_clik", "open_app", "navigate"])
def test_unknown_actions_are_rejected_naming_them(action: str) -> None:
    assert error_of({"action": action}) == f"unknown computer action {action!r}"


def test_missing_action_is_rejected() -> None:
    assert error_of({"coordinate": [1, 1]}) == "action: Field required"


@pytest.mark.parametrize("tool_input", [None, [], "screenshot", 3])
def test_a_non_object_input_is_rejected(tool_input: Any) -> None:
    assert "computer tool input must be an object" in error_of(tool_input)


def test_an_unknown_tool_version_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown computer tool version"):
        translate({"action": "screenshot"}, version="computer_20241022")  # type: ignore[arg-type]


def test_every_key_the_tool_documents_is_read_with_its_value() -> None:
    written = {"action": "left_click_drag", "coordinate": [10, 20], "start_coordinate": [1, 2], "text": "a",
               "scroll_direction": "down", "scroll_amount": 3, "duration": 0.5, "region": [0, 0, 5, 5],
               "repeat": 2}  # repeat: the toolset's key only
    read = ComputerInput.model_validate(written)
    assert {key: getattr(read, key) for key in written} == {
        **written, "coordinate": (10, 20), "start_coordinate": (1, 2), "region": (0, 0, 5, 5)}


# --- tool definition ------------------------------------------------------------------------


def test_tool_definition_declares_the_screenshot_size_and_enables_zoom() -> None:
    image = anthropic_target(Screen(1920, 1080))
    assert tool_definition(image) == {
        "type": "computer_20251124", "name": "computer",
        "display_width_px": 1366, "display_height_px": 768, "enable_zoom": True,
    }


def test_tool_definition_of_computer_20250124_has_no_zoom() -> None:
    assert tool_definition(ImageSpace(1024, 768), "computer_20250124") == {
        "type": "computer_20250124", "name": "computer",
        "display_width_px": 1024, "display_height_px": 768,
    }


def test_tool_definition_can_leave_zoom_off() -> None:
    assert "enable_zoom" not in tool_definition(ImageSpace(1280, 800), enable_zoom=False)


# --- property -------------------------------------------------------------------------------

FIELDS = ["action", "coordinate", "start_coordinate", "text", "scroll_direction",
          "scroll_amount", "duration", "region"]
ACTIONS = ["screenshot", "cursor_position", "mouse_move", "left_click", "right_click",
           "middle_click", "double_click", "triple_click", "left_click_drag", "left_mouse_down",
           "left_mouse_up", "scroll", "key", "hold_key", "type", "wait", "zoom"]
SCALARS = (st.none() | st.booleans() | st.integers(-10, 2000) | st.floats(allow_nan=True)
           | st.text(max_size=12) | st.sampled_from(["up", "down", "ctrl+c", "shift", "Return"]))
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=5)
                    | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=10)
TOOL_INPUTS = st.dictionaries(
    st.sampled_from(FIELDS) | st.text(max_size=8),
    JSON | st.lists(st.integers(-5, 3000), min_size=2, max_size=4),
    max_size=6,
) | st.builds(
    lambda action, rest: {"action": action, **rest},
    st.sampled_from(ACTIONS),
    st.dictionaries(st.sampled_from(FIELDS[1:]),
                    SCALARS | st.lists(st.integers(-5, 3000), min_size=2, max_size=4),
                    max_size=4),
)


@settings(max_examples=400, deadline=None)
@given(tool_input=TOOL_INPUTS, version=st.sampled_from(VERSIONS))
def test_translate_raises_nothing_but_invalid_action(tool_input: Any, version: str) -> None:
    try:
        call = translate(tool_input, version=version)  # type: ignore[arg-type]
    except InvalidAction:
        return
    assert all(isinstance(action, BaseAction) for action in call.actions)
    assert call.actions or call.observation is not None or tool_input.get("scroll_amount") == 0

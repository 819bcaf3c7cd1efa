"""OSWorld's two action spaces — pyautogui code and computer_13 dicts — become BaseActions.

The pyautogui code is parsed, never run: the fuzz tests feed code that would leave a mark on
disk if anything executed it, and check that only ParseError ever comes out and no mark appears.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vdesk.adapters import computer13, pyautogui
from vdesk.errors import ParseError

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def plain(code: str, pointer: tuple[float, float] | None = None) -> list[dict[str, Any]]:
    return [a.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
            for a in pyautogui.parse(code, pointer=pointer).actions]


def raw(x: float, y: float) -> dict[str, Any]:
    return {"raw": {"x": x, "y": y}}


# -- each pyautogui function --------------------------------------------------------------------
@pytest.mark.parametrize(("code", "expected"), [
    ("pyautogui.click(100, 200)", [{"type": "click", "inputs": {"point": raw(100, 200)}}]),
    ("pyautogui.click(x=100, y=200, button='right')", [{"type": "right_click", "inputs": {"point": raw(100, 200)}}]),
    ("pyautogui.click((100, 200), clicks=2)", [{"type": "double_click", "inputs": {"point": raw(100, 200)}}]),
    ("pyautogui.doubleClick(5, 6)", [{"type": "double_click", "inputs": {"point": raw(5, 6)}}]),
    ("pyautogui.tripleClick(5, 6)", [{"type": "triple_click", "inputs": {"point": raw(5, 6)}}]),
    ("pyautogui.rightClick(5, 6)", [{"type": "right_click", "inputs": {"point": raw(5, 6)}}]),
    ("pyautogui.middleClick(5, 6)", [{"type": "middle_click", "inputs": {"point": raw(5, 6)}}]),
    ("pyautogui.moveTo(1920 / 2, 1080 // 2 - 10, duration=0.5)",
     [{"type": "mouse_move", "inputs": {"point": raw(960, 530)}}]),
    ("pyautogui.mouseDown(3, 4, button='middle')",
     [{"type": "mouse_down", "inputs": {"point": raw(3, 4), "button": "middle"}}]),
    ("pyautogui.mouseUp()", [{"type": "mouse_up", "inputs": {"button": "left"}}]),
    ("pyautogui.scroll(5)", [{"type": "scroll", "inputs": {"direction": "up", "amount": 5}}]),
    ("pyautogui.vscroll(-2, x=7, y=8)", [{"type": "scroll", "inputs": {"point": raw(7, 8), "direction": "down", "amount": 2}}]),
    ("pyautogui.hscroll(-3)", [{"type": "scroll", "inputs": {"direction": "left", "amount": 3}}]),
    ("pyautogui.scroll(0)", []),
    ("pyautogui.write('héllo 你好 😀\\n', interval=0.1)", [{"type": "type", "inputs": {"content": "héllo 你好 😀\n"}}]),
    ("pyautogui.typewrite(['a', 'enter'])",
     [{"type": "hotkey", "inputs": {"key": ["a"]}}, {"type": "hotkey", "inputs": {"key": ["enter"]}}]),
    ("pyautogui.press('tab', presses=2)",
     [{"type": "hotkey", "inputs": {"key": ["tab"]}}, {"type": "hotkey", "inputs": {"key": ["tab"]}}]),
    ("pyautogui.hotkey('ctrl', 'shift', 't', interval=0.1)", [{"type": "hotkey", "inputs": {"key": ["ctrl", "shift", "t"]}}]),
    ("pyautogui.keyDown('shiftleft'); pyautogui.keyUp('shiftleft')",
     [{"type": "press", "inputs": {"key": "Shift_L"}}, {"type": "release", "inputs": {"key": "Shift_L"}}]),
    ("pyautogui.press('num5')", [{"type": "hotkey", "inputs": {"key": ["KP_5"]}}]),
    ("import time\ntime.sleep(0.5)", [{"type": "wait", "inputs": {"time": 0.5}}]),
])
def test_each_function_becomes_its_action(code: str, expected: list[dict[str, Any]]) -> None:
    assert plain(code) == expected


def test_a_script_of_several_statements_with_the_usual_prelude() -> None:
    code = ("import pyautogui\nimport time\npyautogui.FAILSAFE = False\npyautogui.PAUSE = 0.1\n"
            "pyautogui.click(10, 20)\ntime.sleep(1)\npyautogui.hotkey('ctrl', 's')\n")
    assert [a["type"] for a in plain(code)] == ["click", "wait", "hotkey"]


def test_a_fenced_reply_is_read_from_its_code_blocks() -> None:
    reply = "I will click Save.\n```python\npyautogui.click(1, 2)\n```\nThen type.\n```\npyautogui.write('x')\n```"
    assert [a["type"] for a in plain(reply)] == ["click", "type"]


def test_the_pointer_is_tracked_for_relative_moves_and_drags() -> None:
    code = "pyautogui.moveTo(100, 100)\npyautogui.moveRel(10, -5)\npyautogui.dragRel(50, 0)\npyautogui.dragTo(y=300)"
    assert plain(code) == [
        {"type": "mouse_move", "inputs": {"point": raw(100, 100)}},
        {"type": "mouse_move", "inputs": {"point": raw(110, 95)}},
        {"type": "drag", "inputs": {"start": raw(110, 95), "end": raw(160, 95)}},
        {"type": "drag", "inputs": {"start": raw(160, 95), "end": raw(160, 300)}},
    ]


def test_a_click_without_a_point_uses_the_pointer_given() -> None:
    assert plain("pyautogui.click()", pointer=(40, 50)) == [{"type": "click", "inputs": {"point": raw(40, 50)}}]


def test_a_right_button_drag_presses_moves_and_releases() -> None:
    assert [a["type"] for a in plain("pyautogui.dragTo(9, 9, button='right')", pointer=(1, 1))] == \
        ["mouse_down", "mouse_move", "mouse_up"]


def test_a_long_scroll_is_split_into_actions_of_at_most_100_notches() -> None:
    assert [a["inputs"]["amount"] for a in plain("pyautogui.scroll(-250)")] == [100, 100, 50]


@pytest.mark.parametrize(("reply", "verdict", "kind"), [
    ("DONE", "done", "finished"), ("FAIL", "fail", "finished"), ("  ```WAIT```  ", None, "wait"), ("done.", "done", "finished"),
])
def test_the_special_replies(reply: str, verdict: str | None, kind: str) -> None:
    parsed = pyautogui.parse(reply)
    assert parsed.verdict == verdict and [a.type.value for a in parsed.actions] == [kind]
    if verdict == "fail":
        assert parsed.actions[0].inputs.content == "FAIL"


# -- what is refused, with the part at fault quoted --------------------------------------------
@pytest.mark.parametrize(("code", "message"), [
    ("import os", "only `import pyautogui` and `import time` are allowed, not \"import os\""),
    ("import pyautogui as p", "only `import pyautogui` and `import time`"),
    ("os.system('ls')", "only pyautogui's input functions and time.sleep can be called, not \"os.system('ls')\""),
    ("pyautogui.locateOnScreen('a.png')", "not \"pyautogui.locateOnScreen('a.png')\""),
    ("pyautogui.click('button.png')", "locating an image on the screen is not supported"),
    ("for i in range(3): pyautogui.click(1, 2)", "not a for statement"),
    ("x = 5", "assignments are not allowed"),
    ("pyautogui.FAILSAFE = print", "assignments are not allowed"),
    ("pyautogui.pyautogui.FAILSAFE = 1", "assignments are not allowed"),
    ("x().FAILSAFE = 1", "assignments are not allowed"),
    ("pyautogui.click(x, 2)", "arguments must be literals (numbers, strings, lists), not \"x\""),
    ("pyautogui.click(__import__('os').getpid(), 1)", "arguments must be literals"),
    ("pyautogui.click(*[1, 2])", "*arguments are not allowed"),
    ("pyautogui.click(**{'x': 1})", "**arguments are not allowed"),
    ("pyautogui.click(1 / 0, 2)", "division by zero"),
    ("pyautogui.click(1e308 * 10, 2)", "a number out of range"),
    ("pyautogui.write('a' * 10)", "arithmetic works on numbers only"),
    ("pyautogui.click(1, 2, clicks=5)", "a count must be a whole number from 0 to 3, got 5"),
    ("pyautogui.click(1, 2, speed=3)", "unexpected keyword argument 'speed'"),
    ("pyautogui.click(1)", "give both x and y, or neither"),
    ("pyautogui.moveRel(1, 2)", "moveRel moves from the pointer, whose position is not known here"),
    ("pyautogui.click()", "a click without x, y starts at the pointer"),
    ("pyautogui.press('nosuchkey')", "unknown key 'nosuchkey'"),
    ("pyautogui.click(1, 2, button='fourth')", "unknown mouse button 'fourth'"),
    ("pyautogui.scroll(1.5)", "scroll clicks must be a whole number"),
    ("pyautogui.click(1, 2", "not valid Python (line 1"),
    ("", "empty reply"),
])
def test_what_is_refused_is_named(code: str, message: str) -> None:
    with pytest.raises(ParseError) as caught:
        pyautogui.parse(code)
    assert message in str(caught.value)


def test_a_huge_reply_is_refused_before_parsing() -> None:
    with pytest.raises(ParseError, match="longer than the 100,000 read"):
        pyautogui.parse("pyautogui.click(1, 2)\n" * 10_000)


# -- fuzz: only clean errors, never execution ---------------------------------------------------
def _mark_code(mark: Path) -> list[str]:
    """Statements that would create ``mark`` if any of them ever ran."""
    path = repr(str(mark))
    return [f"open({path}, 'w')", f"pyautogui.write(open({path}, 'w'))",
            f"__import__('pathlib').Path({path}).touch()", f"pyautogui.click(open({path}, 'w'), 1)",
            f"exec(\"open({path}, 'w')\")", f"pyautogui.press(eval(\"open({path}, 'w')\"))",
            f"[open({path}, 'w') for _ in 'x']", f"pyautogui.FAILSAFE = open({path}, 'w')",
            f"import os; os.system('touch ' + {path})", f"lambda: open({path}, 'w')",
            f"pyautogui.hotkey(*map(open, [{path}]))", f"pyautogui.moveTo(x=(open({path}, 'w'), 1)[1], y=2)"]


valid_calls = st.sampled_from([
    "pyautogui.click(1, 2)", "pyautogui.write('x')", "pyautogui.hotkey('ctrl', 'a')",
    "pyautogui.scroll(-3)", "time.sleep(0.1)", "import pyautogui", "pyautogui.moveTo(5, 5)",
])
fragments = st.sampled_from(["(", ")", ",", "'", '"', "\n", ";", "=", "*", "**", "pyautogui.", "time.sleep",
                             "import ", "lambda", "[", "]", "{", "}", ":", "1", "-", "/", "0", "x", "\\"])


@FUZZ
@given(st.data())
def test_fuzzed_code_raises_only_parse_errors_and_never_runs(tmp_path_factory: pytest.TempPathFactory,
                                                             data: st.DataObject) -> None:
    mark = tmp_path_factory.mktemp("mark") / "ran"
    hostile = st.sampled_from(_mark_code(mark))
    pieces = data.draw(st.lists(hostile | valid_calls | fragments | st.text(max_size=8), min_size=1, max_size=8))
    code = data.draw(st.sampled_from(["\n", "; ", ""])).join(pieces)
    try:
        pyautogui.parse(code, pointer=(1, 1))
    except ParseError:
        pass
    assert not mark.exists(), f"parsing ran code: {code!r}"


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(["click", "moveTo", "doubleClick", "rightClick", "mouseDown"]),
                          st.integers(0, 4000), st.integers(0, 4000)), min_size=1, max_size=6))
def test_fuzzed_valid_scripts_are_all_accepted_in_order(calls: list[tuple[str, int, int]]) -> None:
    code = "\n".join(f"pyautogui.{name}({x}, {y})" for name, x, y in calls)
    actions = pyautogui.parse(code).actions
    assert [(a.inputs.point.raw.x, a.inputs.point.raw.y) for a in actions] == [(x, y) for _, x, y in calls]  # type: ignore[union-attr]


# -- computer_13 --------------------------------------------------------------------------------
def test_every_computer_13_action_type() -> None:
    reply = [
        {"action_type": "MOVE_TO", "parameters": {"x": 10, "y": 20}},
        {"action_type": "CLICK", "parameters": {"button": "left", "num_clicks": 3}},
        {"action_type": "CLICK", "parameters": {"x": 5, "y": 6}},
        {"action_type": "RIGHT_CLICK", "parameters": {}},
        {"action_type": "DOUBLE_CLICK", "parameters": {"x": 7, "y": 8}},
        {"action_type": "MOUSE_DOWN", "parameters": {"button": "right"}},
        {"action_type": "MOUSE_UP"},
        {"action_type": "DRAG_TO", "parameters": {"x": 50, "y": 60}},
        {"action_type": "SCROLL", "parameters": {"dx": 2, "dy": -3}},
        {"action_type": "TYPING", "parameters": {"text": "é 😀"}},
        {"action_type": "PRESS", "parameters": {"key": "enter"}},
        {"action_type": "KEY_DOWN", "parameters": {"key": "shift"}},
        {"action_type": "KEY_UP", "parameters": {"key": "shift"}},
        {"action_type": "HOTKEY", "parameters": {"keys": ["ctrl", "s"]}},
        "WAIT",
        "DONE",
    ]
    parsed = computer13.parse(json.dumps(reply))
    assert [a.type.value for a in parsed.actions] == [
        "mouse_move", "triple_click", "click", "right_click", "double_click", "mouse_down", "mouse_up",
        "drag", "scroll", "scroll", "type", "hotkey", "press", "release", "hotkey", "wait", "finished"]
    assert parsed.verdict == "done"
    drag = parsed.actions[7].inputs
    assert (drag.start.raw.x, drag.start.raw.y, drag.end.raw.x, drag.end.raw.y) == (7, 8, 50, 60)  # type: ignore[union-attr]
    scrolls = [(a.inputs.direction, a.inputs.amount) for a in parsed.actions[8:10]]
    assert scrolls == [("right", 2), ("down", 3)]


def test_computer_13_fail_is_a_verdict() -> None:
    assert computer13.parse("FAIL").verdict == "fail"
    assert computer13.parse({"action_type": "FAIL"}).verdict == "fail"


@pytest.mark.parametrize(("reply", "message"), [
    ({"action_type": "CLICK", "parameters": {"x": 1}}, "action 0 (CLICK): give both x and y, or neither"),
    ({"action_type": "JUMP"}, "unknown action_type 'JUMP'"),
    ([], "no action in an empty list"),
    ("not json", "not a computer_13 action (JSON, or WAIT/FAIL/DONE)"),
    ({"action_type": "CLICK", "parameters": {"x": 1, "y": 2, "num_clicks": 9}}, "num_clicks"),
    (["DONE", "WAIT"], "action 1: WAIT comes after DONE"),
    ({"action_type": "DRAG_TO", "parameters": {"x": 1, "y": 2}}, "the pointer, whose position is not known"),
    ({"action_type": "TYPING", "parameters": {"text": "a", "speed": 1}}, "speed: Extra inputs are not permitted"),
    ([{"action_type": "MOVE_TO", "parameters": {"x": 1, "y": 2}}, 42], "action 1: a computer_13 action is an object"),
    ({"action_type": "PRESS", "parameters": {"key": "nosuchkey"}}, "unknown key 'nosuchkey'"),
])
def test_computer_13_errors_name_the_action_and_field(reply: Any, message: str) -> None:
    with pytest.raises(ParseError) as caught:
        computer13.parse(reply)
    assert message in str(caught.value)


@FUZZ
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                        st.sampled_from(["action_type", "parameters", "x", "y", "button", "keys", "text"]) | st.text(max_size=5),
                        inner, max_size=3), max_leaves=10))
def test_fuzzed_computer_13_replies_raise_only_parse_errors(reply: Any) -> None:
    try:
        computer13.parse(reply, pointer=(0, 0))
    except ParseError:
        pass


def test_set_of_marks_tags_are_points_only_when_given():
    tags = {"tag_1": (12.0, 34.0)}
    (click,) = pyautogui.parse("pyautogui.click(tag_1)", tags=tags).actions
    assert (click.inputs.point.raw.x, click.inputs.point.raw.y) == (12.0, 34.0)
    (move,) = pyautogui.parse("pyautogui.moveTo(tag_1, duration=0.2)", tags=tags).actions
    assert move.type.value == "mouse_move"
    for code, named in (("pyautogui.click(tag_1)", "tag_1"), ("pyautogui.click(tag_2)", "tag_2")):
        with pytest.raises(ParseError, match=named):
            pyautogui.parse(code, tags={} if named == "tag_1" else tags)

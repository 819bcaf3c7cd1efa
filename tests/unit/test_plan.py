"""The planner: what a validated batch turns into, before anything touches a desktop."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vdesk.actions import BaseAction, parse_batch
from vdesk.coords import ImageSpace, Screen
from vdesk.errors import InvalidAction
from vdesk.plan import (DRAG_HOLD, SUBMIT_PAUSE, Button, Input, Key, Motion, Pause, Plan, Sleep, TypeText, chained as _chained,
                        plan)


@dataclass(frozen=True)
class Target:
    """A screen and the image an agent saw of it: what a batch is planned for."""

    screen: Screen = Screen(1280, 800)
    image: ImageSpace | None = None

    def plan(self, actions: list[BaseAction]) -> Plan:
        return plan(actions, self.screen, self.image)


def steps(*actions: dict[str, Any], op: Target | None = None) -> list[Any]:
    return (op or Target()).plan(parse_batch(list(actions))).steps


def chained(*actions: dict[str, Any], op: Target | None = None) -> list[Any]:
    return list(_chained(steps(*actions, op=op)))


def events(*actions: dict[str, Any], op: Target | None = None) -> tuple[Any, ...]:
    (only,) = chained(*actions, op=op)
    assert isinstance(only, Input)
    return only.events


def act(kind: str, **inputs: Any) -> dict[str, Any]:
    return {"type": kind, "inputs": inputs}


def moves(sent: tuple[Any, ...]) -> list[tuple[int, int]]:
    return [(event.x, event.y) for event in sent if isinstance(event, Motion)]


def down(key: str) -> Key:
    return Key(key, down=True)


def up(key: str) -> Key:
    return Key(key, down=False)


def click(button: int) -> tuple[Button, Button]:
    return Button(button, down=True), Button(button, down=False)


# --- shape of the plan ----------------------------------------------------------------------


def test_consecutive_pointer_and_key_actions_chain_into_one_input_step() -> None:
    batch = chained(act("click", point=[10, 20]), act("hotkey", key="ctrl+a"),
                    act("scroll", direction="down"), act("mouse_move", point=[5, 5]), act("press", key="shift"))
    assert len(batch) == 1 and isinstance(batch[0], Input)
    assert batch[0].action == 0  # the first action it carries: a failure counts none of them as done


def test_typing_is_a_separate_step_between_chains() -> None:
    batch = chained(act("click", point=[10, 20]), act("hotkey", key="ctrl+a"), act("type", content="hi"),
                    act("click", point=[1, 1]))
    assert [type(step) for step in batch] == [Input, TypeText, Input]
    assert batch[1] == TypeText("hi")


# --- typing --------------------------------------------------------------------------------


def enter() -> Input:
    return Input((down("Return"), up("Return")))


def tab() -> Input:
    return Input((down("Tab"), up("Tab")))


def submit(key: Input) -> Input:
    """The first of the keys that end a text: it waits for the toolkit to take the text."""
    return Input((Pause(SUBMIT_PAUSE),) + key.events)


@pytest.mark.parametrize("line_end", ["\n", "\r\n", "\r"])
def test_every_line_end_in_typed_text_is_the_return_key(line_end: str) -> None:
    # inside a piece as "\r", which xdotool types as Return (its "\n" is Linefeed); at the end a key
    text = f"Hello{line_end}Second line.{line_end}"
    assert steps(act("type", content=text)) == [TypeText("Hello\rSecond line."), submit(enter())]


def test_line_ends_and_tabs_mixed_with_text_stay_in_one_typed_piece_as_return_and_tab() -> None:
    text = "\tname:\tAda\r\n\r\nLovelace\r\n\t\rend"
    assert steps(act("type", content=text)) == [TypeText("\tname:\tAda\r\rLovelace\r\t\rend")]
    assert steps(act("type", content="a\tb\r\n\t\n")) == [TypeText("a\tb"), submit(enter()), tab(), enter()]


def test_editing_control_characters_are_their_keys() -> None:
    assert steps(act("type", content="ab\bc\x1b\x7f")) == [
        TypeText("ab"), Input((down("BackSpace"), up("BackSpace"))), TypeText("c"),
        Input((down("Escape"), up("Escape"))), Input((down("Delete"), up("Delete")))]


def test_a_text_of_only_a_line_end_is_one_return_and_no_typing() -> None:
    assert steps(act("type", content="\r\n")) == [enter()]


def test_text_without_control_characters_is_one_typing_step_exactly() -> None:
    text = "héllo 你好 😀 <a href='x'> -rf ~"
    assert steps(act("type", content=text)) == [TypeText(text)]


def test_the_keys_of_a_text_belong_to_its_action_and_chain_with_the_next_keys() -> None:
    batch = chained(act("click", point=[1, 1]), act("type", content="path\n"), act("hotkey", key="ctrl+s"))
    assert [type(step) for step in batch] == [Input, TypeText, Input]
    assert batch[2].events[:3] == submit(enter()).events and batch[2].action == 1  # the text's Return ends it
    planned = steps(act("click", point=[1, 1]), act("type", content="a\nb\bc\n"))
    assert [step.action for step in planned] == [0, 1, 1, 1, 1]


def test_pasted_text_keeps_its_inner_line_ends_and_tabs_and_presses_the_ones_that_end_it() -> None:
    assert steps(act("type", content="a\r\nb\tc\r\n\t", method="paste")) == [
        TypeText("a\nb\tc", paste=True), submit(enter()), tab()]
    assert steps(act("type", content="/home/desk/two.odt\n", method="paste")) == [
        TypeText("/home/desk/two.odt", paste=True), submit(enter())]
    assert steps(act("type", content="\n", method="paste")) == [enter()]


@given(st.text(st.sampled_from("ab é日😀\n\r\t"), max_size=40))
def test_typed_pieces_and_keys_give_back_the_normalised_text_in_order(text: str) -> None:
    keys = {"Return": "\n", "Tab": "\t"}
    rebuilt = ""
    for step in steps(act("type", content=text)):
        if isinstance(step, TypeText):
            assert step.text and "\n" not in step.text and not step.paste
            rebuilt += step.text.replace("\r", "\n")
        else:
            *pause, press, release = step.events
            assert pause in ([], [Pause(SUBMIT_PAUSE)])
            assert press.down and not release.down and press.keysym == release.keysym
            rebuilt += keys[press.keysym]
    assert rebuilt == text.replace("\r\n", "\n").replace("\r", "\n")


def test_a_wait_becomes_a_sleep_that_breaks_the_chain() -> None:
    batch = chained(act("click", point=[1, 1]), act("wait", time=1.5), act("click", point=[2, 2]), act("wait"))
    assert [type(step) for step in batch] == [Input, Sleep, Input, Sleep]
    assert batch[1] == Sleep(1.5) and batch[3] == Sleep(5.0)


def test_finished_and_screenshot_send_nothing_to_the_desktop() -> None:
    assert not any(isinstance(step, Input) for step in steps(act("screenshot"), act("finished", content="ok")))


# --- pointer and keys ----------------------------------------------------------------------


def test_a_hotkey_presses_in_order_and_releases_in_reverse() -> None:
    assert events(act("hotkey", key="ctrl+shift+t")) == (
        down("Control_L"), down("Shift_L"), down("t"), up("t"), up("Shift_L"), up("Control_L"))


def test_press_and_release_are_key_down_only_and_key_up_only() -> None:
    assert events(act("press", key="shift")) == (down("Shift_L"),)
    assert events(act("release", key="shift")) == (up("Shift_L"),)


def test_hold_key_holds_between_two_input_steps() -> None:
    assert chained(act("hold_key", key="a", duration=0.3)) == [Input((down("a"),)), Sleep(0.3), Input((up("a"),))]


@pytest.mark.parametrize("amount, direction, button", [(1, "up", 4), (3, "down", 5), (7, "LEFT", 6), (10, "right", 7)])
def test_scroll_amount_gives_that_many_button_presses(amount: int, direction: str, button: int) -> None:
    sent = events(act("scroll", point=[100, 100], direction=direction, amount=amount))
    assert sent == (Motion(100, 100),) + click(button) * amount


def test_a_click_moves_then_clicks_and_zero_coordinates_are_honoured() -> None:
    assert events(act("click", point=[0, 0])) == (Motion(0, 0),) + click(1)


@pytest.mark.parametrize("kind, presses", [("double_click", 2), ("triple_click", 3), ("right_click", 1), ("middle_click", 1)])
def test_click_kinds_press_the_right_button_the_right_number_of_times(kind: str, presses: int) -> None:
    button = {"right_click": 3, "middle_click": 2}.get(kind, 1)
    assert events(act(kind, point=[5, 5]))[1:] == click(button) * presses


def test_a_modified_click_holds_the_modifier_around_the_click() -> None:
    sent = events(act("click", point=[5, 5], modifiers=["ctrl", "shift"]))
    assert sent[1:] == (down("Control_L"), down("Shift_L")) + click(1) + (up("Shift_L"), up("Control_L"))


def test_a_drag_presses_at_the_start_moves_with_pauses_and_releases_at_the_end() -> None:
    sent = events(act("drag", start=[10, 20], end=[110, 220]))
    assert sent[:2] == (Motion(10, 20), Button(1, down=True)) and sent[-1] == Button(1, down=False)
    assert moves(sent)[-1] == (110, 220) and len(moves(sent)) > 2
    assert all(isinstance(event, Pause) and event.seconds > 0 for event in sent[2:-1:2])  # after each event
    assert sent[-2] == Pause(DRAG_HOLD) and sent[-3] == Motion(110, 220)  # it rests at the end, then lets go


def test_mouse_down_and_up_use_the_named_button() -> None:
    assert events(act("mouse_down", point=[3, 4], button="right")) == (Motion(3, 4), Button(3, down=True))
    assert events(act("mouse_up")) == (Button(1, down=False),)


# --- coordinates ----------------------------------------------------------------------------


def test_raw_coordinates_from_a_model_sized_screenshot_map_to_the_screen() -> None:
    op = Target(Screen(1280, 800), image=ImageSpace(1024, 640))  # both 16:10
    assert moves(events(act("click", point=[512, 320]), op=op)) == [(640, 400)]
    assert moves(events(act("click", point=[1023, 639]), op=op)) == [(1279, 799)]
    assert moves(events(act("click", point=[0, 0]), op=op)) == [(0, 0)]


def test_hidpi_scale_two_doubles_physical_coordinates() -> None:
    op = Target(Screen(1280, 800, scale=2))
    (x, y), = moves(events(act("click", point=[100, 200]), op=op))
    assert x // 2 == 100 and y // 2 == 200  # a pixel of logical pixel (100, 200)'s 2x2 footprint
    assert moves(events(act("click", point={"normalized": {"x": 0.5, "y": 0.5}}), op=op)) == [(1280, 800)]


def test_an_out_of_screen_point_fails_naming_the_action_index() -> None:
    with pytest.raises(InvalidAction, match=r"action 1 \(click\).*\(1280, 10\).*1280x800"):
        steps(act("click", point=[10, 10]), act("click", point=[1280, 10]))


def test_missing_coordinates_fail_naming_the_action_index() -> None:
    with pytest.raises(InvalidAction, match=r"action 2 \(mouse_move\).*invalid coordinates"):
        steps(act("wait", time=0), act("click", point=[1, 1]), act("mouse_move", point={}))


def test_an_untypeable_character_fails_naming_the_action_index() -> None:
    with pytest.raises(InvalidAction, match=r"action 0 \(type\).*U\+0000"):
        steps(act("type", content="a\x00"))


numbers = st.integers(-50, 3000) | st.floats(allow_nan=True, allow_infinity=True)
points = st.one_of(
    st.tuples(numbers, numbers).map(list),
    st.builds(lambda x, y: {"normalized": {"x": x, "y": y}}, st.floats(-1, 2), st.floats(-1, 2)),
    st.builds(lambda a, b, c, d: {"referenceBox": {"x1": a, "y1": b, "x2": c, "y2": d}}, numbers, numbers, numbers, numbers),
)
planned_actions = st.one_of(
    st.builds(lambda k, p: act(k, point=p), st.sampled_from(["click", "double_click", "mouse_move", "mouse_down"]), points),
    st.builds(lambda s, e: act("drag", start=s, end=e), points, points),
    st.builds(lambda p, d: act("scroll", point=p, direction=d), points, st.sampled_from(["up", "down", "left", "right"])),
    st.builds(lambda t: act("type", content=t), st.text(max_size=8)),
)


@given(st.lists(planned_actions, min_size=1, max_size=4), st.sampled_from([1, 1.5, 2]))
def test_planning_parsed_actions_only_ever_raises_invalid_action(actions: list[dict[str, Any]], scale: float) -> None:
    op = Target(Screen(1280, 800, scale), image=ImageSpace(1024, 640))
    try:
        plan = op.plan(parse_batch(actions))
    except InvalidAction:
        return
    for step in plan.steps:
        for x, y in moves(step.events) if isinstance(step, Input) else []:
            assert 0 <= x < 1280 * scale and 0 <= y < 800 * scale

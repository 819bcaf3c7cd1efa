"""Every action arrives in the desktop as the events it promises (seen by an X event probe)."""

from __future__ import annotations

import pytest

from tests.desktop.helpers import HANG
from tests.desktop.probe import buttons, keys
from vdesk.desktop import Desktop


def act(desktop: Desktop, *actions: dict) -> None:
    result = desktop.input.execute(list(actions))
    assert result.status == "success", result.error_message


def raw(x: int, y: int) -> dict:
    return {"raw": {"x": x, "y": y}}


@pytest.mark.parametrize(("kind", "button"), [("click", 1), ("left_click", 1), ("right_click", 3),
                                               ("middle_click", 2), ("left_single", 1), ("right_single", 3)])
def test_click_presses_and_releases_the_button_at_the_exact_pixel(shared_desktop, probe, kind, button):
    act(shared_desktop, {"type": kind, "inputs": {"point": raw(100, 200)}})
    assert buttons(probe.events()) == [("button_press", button, 100, 200), ("button_release", button, 100, 200)]


@pytest.mark.parametrize(("kind", "count"), [("double_click", 2), ("left_double", 2), ("triple_click", 3)])
def test_multi_clicks_send_that_many_clicks_in_place(shared_desktop, probe, kind, count):
    act(shared_desktop, {"type": kind, "inputs": {"point": raw(321, 123)}})
    assert buttons(probe.events()) == [("button_press", 1, 321, 123), ("button_release", 1, 321, 123)] * count


def test_click_at_the_screen_origin_is_not_skipped(shared_desktop, probe):
    act(shared_desktop, {"type": "click", "inputs": {"point": raw(0, 0)}})
    assert buttons(probe.events()) == [("button_press", 1, 0, 0), ("button_release", 1, 0, 0)]


def test_normalized_centre_lands_on_the_centre_pixel(shared_desktop, probe):
    act(shared_desktop, {"type": "click", "inputs": {"point": {"normalized": {"x": 0.5, "y": 0.5}}}})
    assert buttons(probe.events())[0] == ("button_press", 1, 640, 400)


def test_reference_box_centre_is_the_target(shared_desktop, probe):
    box = {"referenceBox": {"x1": 100, "y1": 100, "x2": 200, "y2": 300}}
    act(shared_desktop, {"type": "click", "inputs": {"point": box}})
    assert buttons(probe.events())[0] == ("button_press", 1, 150, 200)


@pytest.mark.parametrize("alias", ["mouse_move", "hover", "move_to", "move"])
def test_mouse_move_moves_the_pointer_there(shared_desktop, probe, alias):
    act(shared_desktop, {"type": alias, "inputs": {"coordinate": raw(700, 500)}})
    motions = [(e.x, e.y) for e in probe.events() if e.kind == "motion"]
    assert motions[-1] == (700, 500)


def test_mouse_down_and_up_with_a_button_and_point(shared_desktop, probe):
    act(shared_desktop, {"type": "mouse_down", "inputs": {"point": raw(50, 60), "button": "right"}},
        {"type": "mouse_up", "inputs": {"point": raw(70, 80), "button": "right"}})
    assert buttons(probe.events()) == [("button_press", 3, 50, 60), ("button_release", 3, 70, 80)]


def test_drag_presses_at_start_moves_and_releases_at_end(shared_desktop, probe):
    act(shared_desktop, {"type": "drag", "inputs": {"start_box": raw(130, 226), "end_box": raw(400, 300)}})
    events = probe.events()
    assert buttons(events) == [("button_press", 1, 130, 226), ("button_release", 1, 400, 300)]
    held = [e for e in events if e.kind == "motion" and e.state & 0x100]  # Button1Mask
    assert len(held) >= 2 and (held[-1].x, held[-1].y) == (400, 300)


@pytest.mark.parametrize(("direction", "button"), [("up", 4), ("DOWN", 5), ("Left", 6), ("right", 7)])
def test_scroll_sends_amount_notches_in_each_direction(shared_desktop, probe, direction, button):
    act(shared_desktop, {"type": "scroll", "inputs": {"point": raw(600, 400), "direction": direction, "amount": 4}})
    assert buttons(probe.events()) == [("button_press", button, 600, 400), ("button_release", button, 600, 400)] * 4


@pytest.mark.parametrize("spec", ["ctrl+shift+t", "ctrl shift t", "Control_L+Shift_L+t", "CTRL+SHIFT+T"])
def test_hotkey_presses_all_then_releases_in_reverse(shared_desktop, probe, spec):
    act(shared_desktop, {"type": "hotkey", "inputs": {"key": spec}})
    assert keys(probe.events()) == [
        ("key_press", "Control_L"), ("key_press", "Shift_L"), ("key_press", "t"),
        ("key_release", "t"), ("key_release", "Shift_L"), ("key_release", "Control_L")]


@pytest.mark.parametrize(("spec", "keysym"), [("enter", "Return"), ("esc", "Escape"), ("page down", "Next"),
                                              ("arrowleft", "Left"), ("F11", "F11"), (",", "comma"),
                                              ("BACKSPACE", "BackSpace"), ("cmd", "Super_L")])
def test_key_names_reach_the_desktop_as_their_keysym(shared_desktop, probe, spec, keysym):
    act(shared_desktop, {"type": "hotkey", "inputs": {"key": spec}})
    assert keys(probe.events()) == [("key_press", keysym), ("key_release", keysym)]


def test_a_key_that_needs_shift_gets_it_inside_a_chord(shared_desktop, probe):
    act(shared_desktop, {"type": "hotkey", "inputs": {"key": "ctrl+!"}})
    events = [e for e in probe.events() if e.kind.startswith("key")]
    assert keys(events)[0] == ("key_press", "Control_L") and keys(events)[-1] == ("key_release", "Control_L")
    press = next(e for e in events if e.kind == "key_press" and e.keysym == "1")  # '!' is Shift+1 on this keymap
    assert press.state & 0x5 == 0x5, events  # ShiftMask | ControlMask


def test_pointer_and_keymap_keys_reach_the_desktop_without_a_command_in_it(shared_desktop, probe, monkeypatch):
    commands: list[list[str]] = []
    run = shared_desktop.channel.run
    monkeypatch.setattr(shared_desktop.channel, "run", lambda argv, **kw: commands.append(argv) or run(argv, **kw))
    act(shared_desktop, {"type": "click", "inputs": {"point": raw(30, 40)}},
        {"type": "scroll", "inputs": {"point": raw(30, 40), "direction": "down", "amount": 2}},
        {"type": "drag", "inputs": {"start": raw(30, 40), "end": raw(90, 99)}},
        {"type": "hotkey", "inputs": {"key": "ctrl+a"}}, {"type": "press", "inputs": {"key": "F5"}},
        {"type": "release", "inputs": {"key": "F5"}})
    events = probe.events()
    assert len(buttons(events)) == 8 and len(keys(events)) == 6
    assert commands == []  # all of it went over the held X connection
    act(shared_desktop, {"type": "hotkey", "inputs": {"key": "ctrl+!"}})
    assert [argv[0] for argv in commands] == ["xdotool"]  # the one key XTEST leaves to xdotool


def test_press_and_release_send_only_their_half(shared_desktop, probe):
    act(shared_desktop, {"type": "press", "inputs": {"key": "shift"}})
    assert keys(probe.events()) == [("key_press", "Shift_L")]
    act(shared_desktop, {"type": "release", "inputs": {"key": "shift"}})
    assert keys(probe.events()) == [("key_release", "Shift_L")]


def test_modifiers_are_held_during_a_click(shared_desktop, probe):
    act(shared_desktop, {"type": "click", "inputs": {"point": raw(10, 10), "modifiers": ["shift"]}})
    events = probe.events()
    press = next(e for e in events if e.kind == "button_press")
    assert press.state & 0x1  # ShiftMask
    assert keys(events) == [("key_press", "Shift_L"), ("key_release", "Shift_L")]


def test_hold_key_holds_for_the_duration(shared_desktop, probe):
    result = shared_desktop.input.execute([{"type": "hold_key", "inputs": {"key": "a", "duration": 0.3}}])
    assert result.status == "success"
    events = [e for e in probe.events() if e.kind.startswith("key")]
    # Held down, then let go. A loaded machine may hold it past the X server's autorepeat delay:
    # the repeats in between are the server's own (release and press again), as for a person's key.
    assert keys(events)[0] == ("key_press", "a") and keys(events)[-1] == ("key_release", "a"), keys(events)
    assert set(keys(events)) == {("key_press", "a"), ("key_release", "a")}, keys(events)
    held = events[-1].time - events[0].time  # as the X server saw it, not as the operator reports it
    assert 300 <= held < 300 + 1000 * HANG, held


def test_wait_honours_its_time(shared_desktop):
    result = shared_desktop.input.execute([{"type": "wait", "inputs": {"time": 0.25}}])
    assert result.status == "success" and 250 <= result.elapsed_ms < 250 + 1000 * HANG


def test_finished_and_call_user_are_reported_without_touching_the_desktop(shared_desktop, probe):
    result = shared_desktop.input.execute([{"type": "finished", "inputs": {"content": "done"}}])
    assert result.finished and result.finished_content == "done"
    result = shared_desktop.input.execute([{"type": "call_user", "inputs": {"content": "need a password"}}])
    assert result.call_user == "need a password"
    assert probe.events() == []


def test_a_point_off_screen_fails_the_batch_and_nothing_runs(shared_desktop, probe):
    result = shared_desktop.input.execute([{"type": "click", "inputs": {"point": raw(10, 10)}},
                                     {"type": "click", "inputs": {"point": raw(1280, 10)}}])
    assert result.status == "failed"
    assert "action 1" in result.error_message and "(1280, 10)" in result.error_message and "1280x800" in result.error_message
    assert probe.events() == []


def test_a_malformed_action_fails_the_whole_batch_before_anything_runs(shared_desktop, probe):
    result = shared_desktop.input.execute([{"type": "click", "inputs": {"point": raw(10, 10)}},
                                     {"type": "hotkey", "inputs": {"key": "ctrl+nosuchkey"}}])
    assert result.status == "failed" and "nosuchkey" in result.error_message
    assert probe.events() == []


@pytest.mark.parametrize("kind", ["navigate", "open_app", "swipe", "long_press", "home", "back", "navigate_back"])
def test_browser_and_mobile_actions_are_rejected_as_unsupported(shared_desktop, kind):
    result = shared_desktop.input.execute([{"type": kind, "inputs": {}}])
    assert result.status == "failed" and "unsupported on a desktop" in result.error_message

"""The operator contract, held on a real desktop: initialize once, screenshots that never raise,
batches with extra fields validated whole before anything runs, supported actions that all
execute, and the screen context."""

from __future__ import annotations

import base64
import io
import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.desktop.probe import Event, EventProbe
from vdesk.actions import UNSUPPORTED_ON_DESKTOP
from vdesk.desktop import Desktop
from vdesk.integrations.operator import Operator


def raw(x: int, y: int) -> dict:
    return {"raw": {"x": x, "y": y}}


def summary(events: list[Event]) -> list[str]:
    """Button and key events: "button_press B X Y", "key_press KEYSYM"."""
    return [f"{e.kind} {e.button} {e.x} {e.y}" if e.kind.startswith("button") else f"{e.kind} {e.keysym}"
            for e in events if e.kind.startswith(("button", "key"))]


class CountingScreen:
    """A desktop's screen seen through a wrapper that counts how often the frames are reached
    for, which is what ``initialize`` does in its body, and makes each reach slow enough for a race."""

    def __init__(self, screen: Any) -> None:
        self._screen = screen
        self._lock = threading.Lock()
        self.frames_reached = 0

    @property
    def frames(self) -> Any:
        with self._lock:
            self.frames_reached += 1
        time.sleep(0.1)
        return self._screen.frames

    def __getattr__(self, name: str) -> Any:
        return getattr(self._screen, name)


class CountingDesktop:
    """A desktop whose screen counts its frames' reaches (see :class:`CountingScreen`)."""

    def __init__(self, desktop: Desktop) -> None:
        self._desktop = desktop
        self.screen = CountingScreen(desktop.screen)

    @property
    def frames_reached(self) -> int:
        return self.screen.frames_reached

    def __getattr__(self, name: str) -> Any:
        return getattr(self._desktop, name)


# --- initialize -----------------------------------------------------------------------------


def test_initialize_called_from_eight_threads_at_once_runs_once(shared_desktop, probe):
    counting = CountingDesktop(shared_desktop)
    operator = Operator(counting)  # type: ignore[arg-type]
    start = threading.Barrier(8)
    errors: list[BaseException] = []

    def call() -> None:
        try:
            start.wait()
            operator.initialize()
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert errors == [] and counting.frames_reached == 1
    operator.initialize()  # and later calls do nothing either
    assert counting.frames_reached == 1
    # The initialized operator drives the desktop.
    assert operator.execute({"actions": [{"type": "click", "inputs": {"point": raw(5, 6)}}]}).status == "success"
    assert summary(probe.events()) == ["button_press 1 5 6", "button_release 1 5 6"]


# --- screenshot -----------------------------------------------------------------------------


def test_screenshot_of_a_desktop_removed_underneath_reports_failure_instead_of_raising():
    desktop = Desktop.up(size=(640, 480))
    try:
        operator = Operator(desktop)
        assert operator.screenshot().status == "success"
        desktop.container.remove(force=True)  # gone behind vdesk's back
        started = time.monotonic()
        shot = operator.screenshot()
        assert shot.status == "failed" and shot.base64 == ""
        assert shot.error_message and desktop.name in shot.error_message
        assert time.monotonic() - started < 15
        result = operator.execute({"actions": [{"type": "click", "inputs": {"point": raw(1, 1)}}]})
        assert result.status == "failed" and result.error_message
    finally:
        desktop.down()


def test_screenshot_succeeds_at_the_operators_image_size(shared_desktop):
    shot = Operator(shared_desktop).screenshot()
    assert shot.status == "success" and shot.error_message is None and (shot.width, shot.height) == (1280, 800)
    assert Image.open(io.BytesIO(base64.b64decode(shot.base64))).size == (1280, 800)


# --- execute --------------------------------------------------------------------------------


def test_execute_accepts_extra_fields_beside_the_actions(shared_desktop, probe):
    params = {
        "actions": [{"type": "click", "inputs": {"point": raw(100, 200)}, "meta": {"comment": "open it"}},
                    {"type": "hotkey", "inputs": {"key": "enter"}}],
        "raw_reply": "Thought: open it\nAction: click(start_box='(78,250)')\n\nhotkey(key='enter')",
        "step": 3,
        "screen_context": {"screen_width": 1280, "screen_height": 800},
        "thought": "open it",
    }
    result = Operator(shared_desktop).execute(params)
    assert result.status == "success", result.error_message
    assert summary(probe.events()) == ["button_press 1 100 200", "button_release 1 100 200",
                                       "key_press Return", "key_release Return"]


def test_execute_runs_the_batch_in_order(shared_desktop, probe):
    actions = [{"type": "click", "inputs": {"point": raw(10, 10)}},
               {"type": "hotkey", "inputs": {"key": "a"}},
               {"type": "right_click", "inputs": {"point": raw(20, 20)}},
               {"type": "hotkey", "inputs": {"key": "b"}}, {"type": "screenshot"}]
    result = Operator(shared_desktop).execute({"actions": actions})
    # Each action counts, the screenshot that sends nothing too, and each has when it completed.
    assert result.status == "success" and result.executed == 5 and len(result.completed_ms) == 5, result
    assert result.completed_ms == sorted(result.completed_ms) and result.completed_ms[-1] <= result.elapsed_ms
    assert summary(probe.events()) == [
        "button_press 1 10 10", "button_release 1 10 10", "key_press a", "key_release a",
        "button_press 3 20 20", "button_release 3 20 20", "key_press b", "key_release b"]


def test_the_door_stops_a_cancelled_batch_between_two_bursts(shared_desktop, probe):
    cancel = threading.Event()
    cancel.set()  # the first burst still goes: a cancel lands between two, never inside one
    batch = [{"type": "click", "inputs": {"point": raw(10, 10)}}, {"type": "wait", "inputs": {"time": 0.1}},
             {"type": "hotkey", "inputs": {"key": "b"}}]
    result = shared_desktop.input.execute(batch, cancel=cancel)
    assert result.status == "failed" and result.executed == 1, result
    assert "cancelled after 1 of 3 actions" in result.error_message
    assert summary(probe.events()) == ["button_press 1 10 10", "button_release 1 10 10"]


def test_the_door_takes_a_batch_as_json_text(shared_desktop, probe):
    result = shared_desktop.input.execute(json.dumps([{"type": "hotkey", "inputs": {"key": "a"}}]))
    assert result.status == "success", result.error_message
    assert summary(probe.events()) == ["key_press a", "key_release a"]


MALFORMED = {
    "unknown_type": ({"type": "teleport", "inputs": {}}, ["action 1", "teleport"]),
    "missing_point": ({"type": "click", "inputs": {}}, ["action 1", "point"]),
    "unknown_input": ({"type": "click", "inputs": {"point": raw(1, 1), "force": 3}}, ["action 1", "force"]),
    "unknown_key": ({"type": "hotkey", "inputs": {"key": "ctrl+nosuchkey"}}, ["action 1", "nosuchkey"]),
    "off_screen": ({"type": "click", "inputs": {"point": raw(5000, 1)}}, ["action 1", "(5000, 1)"]),
    "bad_direction": ({"type": "scroll", "inputs": {"direction": "sideways"}}, ["action 1", "direction"]),
    "not_an_object": ("click here", ["action 1"]),
    "mobile_action": ({"type": "swipe", "inputs": {}}, ["action 1", "unsupported on a desktop"]),
    "negative_wait": ({"type": "wait", "inputs": {"time": -1}}, ["action 1", "time"]),
}


@pytest.mark.parametrize("bad", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_action_fails_the_batch_before_anything_runs(shared_desktop, probe, bad):
    action, mentions = bad
    batch = [{"type": "click", "inputs": {"point": raw(10, 10)}}, action,
             {"type": "hotkey", "inputs": {"key": "enter"}}]
    result = Operator(shared_desktop).execute({"actions": batch, "step": 1})
    assert result.status == "failed" and result.executed == 0
    for part in mentions:
        assert part in result.error_message
    assert probe.events() == []


def test_actions_that_are_not_a_list_fail_with_a_message(shared_desktop, probe):
    result = Operator(shared_desktop).execute({"actions": "click(100, 200)"})
    assert result.status == "failed" and "list" in result.error_message
    assert probe.events() == []


# --- supported actions ----------------------------------------------------------------------

# For each supported action: what to do first, the action, what to undo afterwards, and what
# must be seen: "events" (buttons and keys in order), "pointer" (last motion), "result"
# (fields of the ExecuteResult), "min_ms".
EXAMPLES: dict[str, dict[str, Any]] = {
    "screenshot": {"action": {"type": "screenshot"}, "events": []},
    "click": {"action": {"type": "click", "inputs": {"point": raw(10, 20)}},
              "events": ["button_press 1 10 20", "button_release 1 10 20"]},
    "double_click": {"action": {"type": "double_click", "inputs": {"point": raw(30, 40)}},
                     "events": ["button_press 1 30 40", "button_release 1 30 40"] * 2},
    "triple_click": {"action": {"type": "triple_click", "inputs": {"point": raw(30, 40)}},
                     "events": ["button_press 1 30 40", "button_release 1 30 40"] * 3},
    "right_click": {"action": {"type": "right_click", "inputs": {"point": raw(50, 60)}},
                    "events": ["button_press 3 50 60", "button_release 3 50 60"]},
    "middle_click": {"action": {"type": "middle_click", "inputs": {"point": raw(70, 80)}},
                     "events": ["button_press 2 70 80", "button_release 2 70 80"]},
    "mouse_move": {"action": {"type": "mouse_move", "inputs": {"point": raw(700, 500)}},
                   "events": [], "pointer": (700, 500)},
    "mouse_down": {"action": {"type": "mouse_down", "inputs": {"point": raw(90, 100), "button": "left"}},
                   "events": ["button_press 1 90 100"],
                   "undo": {"type": "mouse_up", "inputs": {"button": "left"}}},
    "mouse_up": {"before": {"type": "mouse_down", "inputs": {"point": raw(90, 100), "button": "right"}},
                 "action": {"type": "mouse_up", "inputs": {"point": raw(110, 120), "button": "right"}},
                 "events": ["button_release 3 110 120"]},
    "drag": {"action": {"type": "drag", "inputs": {"start": raw(100, 100), "end": raw(300, 200)}},
             "events": ["button_press 1 100 100", "button_release 1 300 200"], "pointer": (300, 200)},
    "scroll": {"action": {"type": "scroll", "inputs": {"point": raw(640, 400), "direction": "down", "amount": 2}},
               "events": ["button_press 5 640 400", "button_release 5 640 400"] * 2},
    "type": {"action": {"type": "type", "inputs": {"content": "ab"}},
             "events": ["key_press a", "key_release a", "key_press b", "key_release b"]},
    "hotkey": {"action": {"type": "hotkey", "inputs": {"key": "ctrl+a"}},
               "events": ["key_press Control_L", "key_press a", "key_release a", "key_release Control_L"]},
    "press": {"action": {"type": "press", "inputs": {"key": "shift"}}, "events": ["key_press Shift_L"],
              "undo": {"type": "release", "inputs": {"key": "shift"}}},
    "release": {"before": {"type": "press", "inputs": {"key": "shift"}},
                "action": {"type": "release", "inputs": {"key": "shift"}}, "events": ["key_release Shift_L"]},
    "hold_key": {"action": {"type": "hold_key", "inputs": {"key": "x", "time": 0.3}},
                 "events": ["key_press x", "key_release x"], "min_ms": 300},
    "wait": {"action": {"type": "wait", "inputs": {"time": 0.2}}, "events": [], "min_ms": 200},
    "finished": {"action": {"type": "finished", "inputs": {"content": "all done"}}, "events": [],
                 "result": {"finished": True, "finished_content": "all done"}},
    "call_user": {"action": {"type": "call_user", "inputs": {"content": "which account?"}}, "events": [],
                  "result": {"call_user": "which account?"}},
}


def declared_actions() -> set[str]:
    """The action types the documentation's schema table declares (first column, aliases aside)."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "actions.md").read_text()
    table = page.split("| type (aliases) |", 1)[1].split("\n\n", 1)[0]
    rows = [line.split("|")[1] for line in table.splitlines()[2:] if line.startswith("|")]
    return {name for cell in rows for name in re.findall(r"`(\w+)`", re.sub(r"\([^)]*\)", "", cell))}


def test_supported_actions_are_exactly_the_ones_the_schema_declares():
    supported = Operator.supported_actions()
    assert set(supported) == declared_actions()
    assert set(EXAMPLES) == set(supported)  # every one of them is run below
    assert not set(supported) & UNSUPPORTED_ON_DESKTOP


@pytest.mark.parametrize("kind", Operator.supported_actions())
def test_every_supported_action_executes(shared_desktop, probe: EventProbe, kind):
    example = EXAMPLES[kind]
    operator = Operator(shared_desktop)
    operator.execute({"actions": [{"type": "mouse_move", "inputs": {"point": raw(3, 797)}}]})
    if "before" in example:
        assert operator.execute({"actions": [example["before"]]}).status == "success"
    probe.events()
    try:
        result = operator.execute({"actions": [example["action"]]})
        assert result.status == "success", result.error_message
        events = probe.events()
    finally:
        if "undo" in example:
            operator.execute({"actions": [example["undo"]]})
    assert summary(events) == example["events"]
    if "pointer" in example:
        assert [(e.x, e.y) for e in events if e.kind == "motion"][-1] == example["pointer"]
    for name, value in example.get("result", {}).items():
        assert getattr(result, name) == value
    assert result.elapsed_ms >= example.get("min_ms", 0)


@pytest.mark.parametrize("kind", sorted(UNSUPPORTED_ON_DESKTOP))
def test_actions_outside_the_supported_list_are_refused(shared_desktop, probe, kind):
    assert kind not in Operator.supported_actions()
    result = Operator(shared_desktop).execute({"actions": [{"type": kind, "inputs": {}}]})
    assert result.status == "failed" and "unsupported on a desktop" in result.error_message
    assert probe.events() == []


# --- screen context -------------------------------------------------------------------------


def test_screen_context_reports_the_logical_size_and_scale(shared_desktop, probe):
    context = Operator(shared_desktop).screen_context()
    assert context.model_dump() == {"screen_width": 1280, "screen_height": 800, "scale_x": 1.0, "scale_y": 1.0}
    root = probe.display.screen()  # what the X server itself says
    assert (root.width_in_pixels, root.height_in_pixels) == (
        round(context.screen_width * context.scale_x), round(context.screen_height * context.scale_y))
    assert shared_desktop.screen.shot().size == (context.screen_width, context.screen_height)


def test_screen_context_of_a_hidpi_desktop_and_its_normalized_centre():
    with Desktop.up(size=(800, 500), scale=1.5) as desktop, EventProbe(desktop) as probe:
        operator = Operator(desktop)
        context = operator.screen_context()
        assert context.model_dump() == {"screen_width": 800, "screen_height": 500, "scale_x": 1.5, "scale_y": 1.5}
        assert (probe.display.screen().width_in_pixels, probe.display.screen().height_in_pixels) == (1200, 750)
        shot = operator.screenshot()
        assert (shot.width, shot.height) == (800, 500)
        operator.execute({"actions": [{"type": "click", "inputs": {"point": {"normalized": {"x": 0.5, "y": 0.5}}}}]})
        assert summary(probe.events())[0] == "button_press 1 600 375"

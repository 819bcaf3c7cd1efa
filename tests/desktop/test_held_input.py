"""A batch leaves no key or button down, however it ends.

A desktop is shared between calls: a key a batch pressed and never let go of modifies every
later hotkey and click (Shift held: hotkeys a, b, c type "ABC", Ctrl+S opens Save As). What a
batch holds is let go when it is interrupted (Ctrl-C), cancelled, out of time, failed or cut
off, and when its controller is killed outright; each test holds keys and buttons for real and
then asks the X server what is still down.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from Xlib import X, XK

from tests.desktop.helpers import HANG, separate_exec
from tests.desktop.probe import EventProbe, buttons, keys
from vdesk.actions import MAX_TYPED_CHARS
from vdesk.desktop import Desktop
from vdesk.harness.episode import EpisodeLimits, Stop

VDESK = str(Path(sys.executable).parent / "vdesk")
BUTTONS = X.Button1Mask | X.Button2Mask | X.Button3Mask | X.Button4Mask | X.Button5Mask
NOTHING: tuple[set[int], int] = (set(), 0)


def act(kind: str, **inputs: object) -> dict[str, object]:
    return {"type": kind, "inputs": inputs}


def at(x: int, y: int) -> dict[str, object]:
    return {"raw": {"x": x, "y": y}}


def down(desktop: Desktop) -> tuple[set[int], int]:
    """The keycodes the X server has down, and the mask of the pointer buttons it has down."""
    keymap = desktop.windows.request(lambda display: display.query_keymap())
    pointer = desktop.windows.request(lambda display: display.screen().root.query_pointer())
    return {8 * index + bit for index, byte in enumerate(keymap) for bit in range(8) if byte >> bit & 1}, pointer.mask & BUTTONS


def keycode(desktop: Desktop, keysym: int) -> int:
    return int(desktop.windows.request(lambda display: display.keysym_to_keycode(keysym)))


def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + HANG
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def pressed_and_let_go(probe: EventProbe) -> tuple[list[tuple[str, str]], list[tuple[str, int]]]:
    """The Shift and button events the probe saw: what a held shift-drag shows once let go."""
    events = probe.events()
    return ([k for k in keys(events) if k[1] == "Shift_L"],
            [(kind, button) for kind, button, _, _ in buttons(events)])


# A shift-drag held half-way: the left button down, the pointer moved, Shift held for a minute.
SHIFT_DRAG = [act("mouse_down", point=at(200, 200)), act("mouse_move", point=at(400, 300)),
              act("hold_key", key="shift", time=60)]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_a_stopped_vdesk_exec_leaves_no_key_or_button_down(shared_desktop: Desktop, probe: EventProbe,
                                                            signum: signal.Signals) -> None:
    shift = keycode(shared_desktop, XK.XK_Shift_L)
    holding = subprocess.Popen([VDESK, "exec", shared_desktop.name, json.dumps(SHIFT_DRAG)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        until(lambda: down(shared_desktop) == ({shift}, X.Button1Mask), "the batch never held Shift and the left button")
        holding.send_signal(signum)
        _, stderr = holding.communicate(timeout=HANG)
    finally:
        holding.kill()
    if signum == signal.SIGINT:
        assert (holding.returncode, stderr) == (130, "vdesk: interrupted\n")
        assert down(shared_desktop) == NOTHING  # let go before vdesk exited
    else:  # a process ended outright runs nothing more: its channel's end in the desktop lets go
        with Desktop.attach(shared_desktop.name) as fresh:
            until(lambda: down(fresh) == NOTHING, "a key or button is still down after the controller was killed")
    assert pressed_and_let_go(probe) == ([("key_press", "Shift_L"), ("key_release", "Shift_L")],
                                         [("button_press", 1), ("button_release", 1)])
    # What the report saw: hotkeys after it came out as "ABC".
    hotkeys = [json.dumps(act("hotkey", key=key)) for key in "abc"]
    assert subprocess.run([VDESK, "exec", shared_desktop.name, *hotkeys], capture_output=True,
                          timeout=HANG).returncode == 0
    assert [(e.keysym, e.state) for e in probe.events() if e.kind == "key_press"] == [("a", 0), ("b", 0), ("c", 0)]


def _held_then(desktop: Desktop, stop: Callable[[], None]) -> None:
    """Once the X server has Shift and the right button down, ``stop()`` (from another thread)."""
    shift = keycode(desktop, XK.XK_Shift_L)

    def watch() -> None:
        until(lambda: down(desktop) == ({shift}, X.Button3Mask), "the batch never held Shift and the right button")
        stop()

    threading.Thread(target=watch, daemon=True).start()


HOLD_RIGHT_AND_SHIFT = [act("mouse_down", point=at(300, 300), button="right"), act("hold_key", key="shift", time=60)]


def test_a_cancel_cuts_a_hold_short_and_lets_go(shared_desktop: Desktop, probe: EventProbe) -> None:
    cancel = threading.Event()
    _held_then(shared_desktop, cancel.set)
    result = shared_desktop.input.execute(HOLD_RIGHT_AND_SHIFT, cancel=cancel, receipt=False)
    assert (result.status, result.executed, result.error_message) == ("failed", 1, "cancelled after 1 of 2 actions")
    assert down(shared_desktop) == NOTHING
    assert pressed_and_let_go(probe) == ([("key_press", "Shift_L"), ("key_release", "Shift_L")],
                                         [("button_press", 3), ("button_release", 3)])


def test_an_episode_out_of_time_lets_go_of_what_its_step_holds(shared_desktop: Desktop, probe: EventProbe) -> None:
    """The harness stops a step's batch once the episode's time is up (its Stop): the hold that
    would outlast it is cut short and let go."""
    out_of_time = Stop(None, EpisodeLimits(max_steps=10, time_limit=1.0))
    result = shared_desktop.input.execute(HOLD_RIGHT_AND_SHIFT, cancel=out_of_time, receipt=False)
    assert (result.status, result.executed) == ("failed", 1)
    assert down(shared_desktop) == NOTHING
    assert pressed_and_let_go(probe) == ([("key_press", "Shift_L"), ("key_release", "Shift_L")],
                                         [("button_press", 3), ("button_release", 3)])


def test_ctrl_c_in_the_python_api_lets_go(shared_desktop: Desktop, probe: EventProbe) -> None:
    _held_then(shared_desktop, lambda: os.kill(os.getpid(), signal.SIGINT))
    with pytest.raises(KeyboardInterrupt):
        shared_desktop.input.execute(HOLD_RIGHT_AND_SHIFT, receipt=False)
    assert down(shared_desktop) == NOTHING  # let go before the interrupt came out of execute
    assert pressed_and_let_go(probe) == ([("key_press", "Shift_L"), ("key_release", "Shift_L")],
                                         [("button_press", 3), ("button_release", 3)])


# The typing's xdotool ends (killed: an error) or the channel it runs in dies under it (a lost
# connection) while F5 is held (a key no typing lets go of by itself) and the right button too.
CUT_OFF = {"xdotool killed": "kill $(pgrep -x xdotool)",
           "channel lost": "kill -KILL $(ps -o ppid= -C xdotool)"}


@pytest.mark.parametrize("cut", list(CUT_OFF), ids=list(CUT_OFF))
def test_a_batch_that_fails_part_way_lets_go(shared_desktop: Desktop, probe: EventProbe, cut: str) -> None:
    text = "abc " * (MAX_TYPED_CHARS // 4)  # ~16 s of typing: far longer than the test waits

    def cut_off() -> None:
        until(lambda: separate_exec(shared_desktop, ["pgrep", "-x", "xdotool"]).exit_code == 0, "the typing never started")
        assert separate_exec(shared_desktop, ["sh", "-c", CUT_OFF[cut]]).exit_code == 0

    threading.Thread(target=cut_off, daemon=True).start()
    with Desktop.attach(shared_desktop.name) as controller:  # a channel of its own, cut under it
        result = controller.input.execute([act("mouse_down", point=at(300, 300), button="right"),
                                           act("press", key="F5"), act("type", content=text)], receipt=False)
    assert (result.status, result.executed) == ("failed", 2), result
    assert down(shared_desktop) == NOTHING
    events = probe.events()
    assert [k for k in keys(events) if k[1] == "F5"][-1] == ("key_release", "F5")
    assert buttons(events)[-1][:2] == ("button_release", 3)


def test_a_batch_that_completes_keeps_what_it_pressed_on_purpose(shared_desktop: Desktop) -> None:
    """press and mouse_down stay held for a later batch (or `vdesk exec`) to release: a drag
    made of steps, as Anthropic's and OSWorld's actions come."""
    shift = keycode(shared_desktop, XK.XK_Shift_L)
    for batch in ([act("mouse_down", point=at(100, 100))], [act("press", key="shift")], [act("mouse_move", point=at(300, 200))]):
        assert subprocess.run([VDESK, "exec", shared_desktop.name, json.dumps(batch)], capture_output=True,
                              timeout=HANG).returncode == 0
    try:
        assert down(shared_desktop) == ({shift}, X.Button1Mask)
    finally:
        shared_desktop.input.execute([act("release", key="shift"), act("mouse_up")], receipt=False)
    assert down(shared_desktop) == NOTHING

"""What planned input turns into on the X connection: XTEST requests, and the keys left to xdotool."""

from __future__ import annotations

from Xlib import X

from vdesk.keys import keysym_number
from vdesk.plan import Button, Key, Motion, Pause
from vdesk.xtest import Burst, Fake, XdotoolKeys, schedule

# A US keymap's unshifted keysyms, as unshifted_keycodes() reads them; "€" bound by typing.
KEYCODES = {keysym_number(name): code for name, code in
            (("Control_L", 37), ("Shift_L", 50), ("t", 28), ("1", 10), ("equal", 21), ("Return", 36),
             ("U20AC", 200))}


def test_pointer_events_are_one_burst_in_order() -> None:
    sent = schedule((Motion(3, 4), Button(1, down=True), Button(1, down=False), Button(5, down=True)), KEYCODES)
    assert sent == [Burst((Fake(X.MotionNotify, 0, 3, 4), Fake(X.ButtonPress, 1), Fake(X.ButtonRelease, 1),
                           Fake(X.ButtonPress, 5)))]


def test_keys_the_keymap_types_unshifted_are_their_keycodes() -> None:
    sent = schedule((Key("Control_L", True), Key("t", True), Key("t", False), Key("Control_L", False)), KEYCODES)
    assert sent == [Burst((Fake(X.KeyPress, 37), Fake(X.KeyPress, 28), Fake(X.KeyRelease, 28),
                           Fake(X.KeyRelease, 37)))]


def test_a_keysym_bound_for_typing_goes_by_xtest_too() -> None:
    assert schedule((Key("U20AC", True),), KEYCODES) == [Burst((Fake(X.KeyPress, 200),))]


def test_a_shifted_or_missing_keysym_goes_to_xdotool_in_its_place() -> None:
    sent = schedule((Key("Control_L", True), Key("exclam", True), Key("exclam", False), Key("U00E9", True),
                     Key("Control_L", False)), KEYCODES)
    assert sent == [Burst((Fake(X.KeyPress, 37),)),
                    XdotoolKeys(("keydown", "--delay", "0", "exclam", "keyup", "--delay", "0", "exclam",
                                 "keydown", "--delay", "0", "U00E9")),
                    Burst((Fake(X.KeyRelease, 37),))]


def test_a_keysym_python_xlib_cannot_name_goes_to_xdotool() -> None:
    assert schedule((Key("ISO_Level5_Shift", True),), KEYCODES) == [
        XdotoolKeys(("keydown", "--delay", "0", "ISO_Level5_Shift"))]


def test_pauses_split_bursts_and_are_kept() -> None:
    sent = schedule((Motion(1, 1), Button(1, True), Pause(0.02), Motion(9, 9), Pause(0.02), Button(1, False)),
                    KEYCODES)
    assert sent == [Burst((Fake(X.MotionNotify, 0, 1, 1), Fake(X.ButtonPress, 1))), Pause(0.02),
                    Burst((Fake(X.MotionNotify, 0, 9, 9),)), Pause(0.02), Burst((Fake(X.ButtonRelease, 1),))]


def test_no_events_send_nothing() -> None:
    assert schedule((), KEYCODES) == []

"""Pointer and key input through the X server's XTEST extension, on the controller's held X
connection (:class:`vdesk.windows.Windows`, through its tunnel).

xdotool makes the same XTEST requests, but from a process started in the desktop for every batch
of actions: about 5 ms of the container's CPU per step, and a round trip through the exec channel.
Here the requests go on a connection that is already open, and a sync ends each burst: when
:meth:`XTest.send` returns, the X server has processed every event, so a receipt or a settle that
follows sees their effect.

What goes by XTEST: motion to a pixel, buttons 1-7 going down and up (4-7 are the scroll notches),
pauses between them (a drag's), and keys whose keysym a keycode of the desktop's keymap types
unshifted, as it is now (modifiers, letters, digits, Return, F-keys, arrows, keys ``vdesk.keymap``
bound for typing, ...): such a key event is exactly that keycode going down or up.

What stays with xdotool: a keysym the keymap carries only with a modifier (``exclam``, ``plus`` on
a US keymap) or not at all (``U20AC``, a keysym python-xlib does not name). For those xdotool works
out which modifiers to press around the key, or binds the keysym to a spare keycode for the
press; doing that here would be a second copy of its keysym search (the modifier map, XKB
levels, spare keycodes that :mod:`vdesk.keymap` shares with other controllers), for keys that
are rare in hotkeys. Typing text never comes here: it is ``vdesk.keymap``'s exact typing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from Xlib import X
from Xlib.display import Display

from vdesk.errors import XServerError
from vdesk.keys import keysym_number
from vdesk.plan import Button, InputEvent, Key, Motion, Pause
from vdesk.windows import Windows

INPUT_TIMEOUT = 5.0  # seconds the X server may take to process one burst of events (as for a frame)


@dataclass(frozen=True)
class Fake:
    """One XTEST FakeInput request: ``kind`` is X's event type, ``detail`` a button or keycode."""

    kind: int
    detail: int = 0
    x: int = 0
    y: int = 0


@dataclass(frozen=True)
class Burst:
    """Requests sent together and synced once."""

    fakes: tuple[Fake, ...]


@dataclass(frozen=True)
class XdotoolKeys:
    """Key events left to xdotool (see the module's docstring): its arguments."""

    args: tuple[str, ...]


Part = Burst | XdotoolKeys | Pause


def schedule(events: Sequence[InputEvent], keycodes: Mapping[int, int]) -> list[Part]:
    """The parts that send ``events`` in order, given the keymap's ``keycodes`` (keysym → the
    keycode that types it unshifted): bursts of XTEST requests, runs of keys for xdotool, and
    the pauses between."""
    parts: list[Part] = []
    fakes: list[Fake] = []
    keys: list[str] = []

    def flush() -> None:
        if fakes:
            parts.append(Burst(tuple(fakes)))
            fakes.clear()
        if keys:
            parts.append(XdotoolKeys(tuple(keys)))
            keys.clear()

    for event in events:
        fake = _fake(event, keycodes)
        if fake is not None:
            if keys:
                flush()
            fakes.append(fake)
        elif isinstance(event, Key):
            if fakes:
                flush()
            # xdotool waits 12 ms after each keydown/keyup unless told otherwise.
            keys.extend(("keydown" if event.down else "keyup", "--delay", "0", event.keysym))
        else:  # a pause
            flush()
            parts.append(event)
    flush()
    return parts


def _fake(event: InputEvent, keycodes: Mapping[int, int]) -> Fake | None:
    if isinstance(event, Motion):
        return Fake(X.MotionNotify, 0, event.x, event.y)  # detail 0: an absolute position
    if isinstance(event, Button):
        return Fake(X.ButtonPress if event.down else X.ButtonRelease, event.number)
    if isinstance(event, Key) and (code := keycodes.get(keysym_number(event.keysym))):
        return Fake(X.KeyPress if event.down else X.KeyRelease, code)
    return None


def unshifted_keycodes(display: Display) -> dict[int, int]:
    """Keysym → the lowest keycode that types it with no modifier, in the keymap as it is now
    (read each time: typing rebinds spare keycodes, and other clients may change the keymap)."""
    first, last = display.display.info.min_keycode, display.display.info.max_keycode
    found: dict[int, int] = {}
    for offset, row in enumerate(display.get_keyboard_mapping(first, last - first + 1)):
        if row and row[0]:
            found.setdefault(row[0], first + offset)
    return found


class XTest:
    """Sends planned input events to one desktop: by XTEST on its shared X connection, and the
    keys XTEST does not take through ``xdotool(args)``, which runs xdotool in the desktop."""

    def __init__(self, windows: Windows, xdotool: Callable[[tuple[str, ...]], None]) -> None:
        self._windows = windows
        self._xdotool = xdotool

    def send(self, events: Sequence[InputEvent]) -> None:
        """Send ``events`` in order; return once the X server has processed them all."""
        keycodes = self._windows.request(unshifted_keycodes) if any(isinstance(e, Key) for e in events) else {}
        for part in schedule(events, keycodes):
            if isinstance(part, Burst):
                self._windows.send_once(lambda display: _send(display, part.fakes), INPUT_TIMEOUT)
            elif isinstance(part, XdotoolKeys):
                self._xdotool(part.args)
            else:
                time.sleep(part.seconds)  # not holding the connection: window queries go on meanwhile


def _send(display: Display, fakes: tuple[Fake, ...]) -> None:
    if not display.has_extension("XTEST"):
        raise XServerError("the desktop's X server has no XTEST extension: it cannot take input")
    for fake in fakes:
        display.xtest_fake_input(fake.kind, fake.detail, x=fake.x, y=fake.y)
    display.sync()  # a reply comes once the server has processed every request before it

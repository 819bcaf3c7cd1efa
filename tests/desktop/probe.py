"""An X event probe: a full-screen window inside the desktop that records what arrives.

It talks X directly (python-xlib through vdesk's tunnel), so a test sees the very events an
application would: button numbers, exact positions, key symbols, in order.
"""

from __future__ import annotations

import select
import time
from dataclasses import dataclass

from Xlib import X, XK
from Xlib.protocol import event

from vdesk.desktop import Desktop
from vdesk.xconn import open_display

XK.load_keysym_group("xf86")
KEYSYM_NAMES = {getattr(XK, n): n[3:] for n in sorted(dir(XK), reverse=True) if n.startswith("XK_")}
MASK = (X.ButtonPressMask | X.ButtonReleaseMask | X.PointerMotionMask | X.KeyPressMask
        | X.KeyReleaseMask | X.ExposureMask | X.StructureNotifyMask)


@dataclass(frozen=True)
class Event:
    kind: str  # button_press, button_release, motion, key_press, key_release
    x: int
    y: int
    button: int = 0
    keysym: str = ""
    state: int = 0
    time: int = 0  # the X server's timestamp, milliseconds


class EventProbe:
    """Covers the screen with a white window that has the keyboard focus, and records events."""

    def __init__(self, desktop: Desktop) -> None:
        self.display, self._tunnel = open_display(desktop.client.api, desktop.id)
        self._wait_for_window_manager()
        screen = self.display.screen()
        self.window = screen.root.create_window(
            0, 0, screen.width_in_pixels, screen.height_in_pixels, 0, screen.root_depth,
            override_redirect=True, background_pixel=screen.white_pixel, event_mask=MASK)
        self.window.map()
        self.window.raise_window()
        self._wait_for(X.MapNotify)
        self.window.set_input_focus(X.RevertToParent, X.CurrentTime)
        self.display.sync()
        self._mark_atom = self.display.intern_atom("VDESK_PROBE_MARK")
        self._marks = 0
        self.events()  # drop map/expose noise
        desktop.screen.settle(quiet=0.1)  # frames taken next show the probe window

    def events(self, timeout: float = 5.0) -> list[Event]:
        """Every event the X server queued for the probe so far. A marker sent through the same
        server ends the read: what an action that already returned made arrived before it, so
        nothing waits for a quiet spell that a loaded machine could stretch or cut short."""
        self._marks += 1
        mark = event.ClientMessage(window=self.window, client_type=self._mark_atom,
                                   data=(32, [self._marks, 0, 0, 0, 0]))
        self.window.send_event(mark, event_mask=0)  # no mask: to the window's creator, this probe
        self.display.flush()
        found: list[Event] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.display.pending_events():
                select.select([self.display.fileno()], [], [], 0.05)
                continue
            raw = self.display.next_event()
            if raw.type == X.ClientMessage and raw.client_type == self._mark_atom:
                if raw.data[1][0] == self._marks:
                    return found
                continue
            converted = self._convert(raw)
            if converted is not None:
                found.append(converted)
        raise TimeoutError(f"the probe's marker did not come back within {timeout:g} s")

    def close(self) -> None:
        try:
            self.window.destroy()
            self.display.sync()
            self.display.close()
        finally:
            self._tunnel.close()

    def __enter__(self) -> EventProbe:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _convert(self, raw) -> Event | None:  # type: ignore[no-untyped-def]
        if raw.type == X.ButtonPress:
            return Event("button_press", raw.event_x, raw.event_y, button=raw.detail, state=raw.state)
        if raw.type == X.ButtonRelease:
            return Event("button_release", raw.event_x, raw.event_y, button=raw.detail, state=raw.state)
        if raw.type == X.MotionNotify:
            return Event("motion", raw.event_x, raw.event_y, state=raw.state)
        if raw.type in (X.KeyPress, X.KeyRelease):
            keysym = self.display.keycode_to_keysym(raw.detail, 0)
            name = KEYSYM_NAMES.get(keysym, f"0x{keysym:x}")
            kind = "key_press" if raw.type == X.KeyPress else "key_release"
            return Event(kind, raw.event_x, raw.event_y, keysym=name, state=raw.state, time=raw.time)
        return None

    def _wait_for_window_manager(self, timeout: float = 30.0) -> None:
        """Return once the window manager is past the step of its start-up that sends the
        focus to a window of its own: a probe focused before that loses every key (a whole run
        saw it once). ``Desktop.up`` returns once X answers, which can be before openbox has
        started; openbox names the screen's managed windows (``_NET_CLIENT_LIST``) after that
        step, and takes the focus only for windows it manages from then on."""
        root, listed = self.display.screen().root, self.display.intern_atom("_NET_CLIENT_LIST")
        deadline = time.monotonic() + timeout
        while root.get_full_property(listed, X.AnyPropertyType) is None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the window manager did not finish starting within {timeout:g} s")
            time.sleep(0.01)

    def _wait_for(self, event_type: int, timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.display.pending_events():
                if self.display.next_event().type == event_type:
                    return
            else:
                select.select([self.display.fileno()], [], [], 0.05)
        raise TimeoutError("the probe window was not mapped")


def buttons(events: list[Event]) -> list[tuple[str, int, int, int]]:
    """Just the button events: (kind, button, x, y)."""
    return [(e.kind, e.button, e.x, e.y) for e in events if e.kind.startswith("button")]


def keys(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.kind, e.keysym) for e in events if e.kind.startswith("key")]

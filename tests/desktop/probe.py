"""An X event probe: a full-screen window inside the desktop that records what arrives.

It talks X directly (python-xlib through vdesk's tunnel), so a test sees the very events an
application would: button numbers, exact positions, key symbols, in order.
"""

from __future__ import annotations

import select
import time
from dataclasses import dataclass

from Xlib import X, XK

from vdesk.desktop import Desktop

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


class EventProbe:
    """Covers the screen with a white window that has the keyboard focus, and records events."""

    def __init__(self, desktop: Desktop) -> None:
        self.display, self._tunnel = desktop.x_display()
        screen = self.display.screen()
        self.window = screen.root.create_window(
            0, 0, screen.width_in_pixels, screen.height_in_pixels, 0, screen.root_depth,
            override_redirect=True, background_pixel=screen.white_pixel, event_mask=MASK)
        self.window.map()
        self.window.raise_window()
        self._wait_for(X.MapNotify)
        self.window.set_input_focus(X.RevertToParent, X.CurrentTime)
        self.display.sync()
        self.events(quiet=0.05)  # drop map/expose noise
        desktop.wait_until_settled(quiet=0.1)  # frames taken next show the probe window

    def events(self, quiet: float = 0.15, timeout: float = 5.0) -> list[Event]:
        """Events received until none arrive for ``quiet`` seconds."""
        found: list[Event] = []
        deadline = time.monotonic() + timeout
        last = time.monotonic()
        while time.monotonic() < deadline and time.monotonic() - last < quiet:
            if not self.display.pending_events():
                select.select([self.display.fileno()], [], [], 0.01)
                continue
            raw = self.display.next_event()
            last = time.monotonic()
            event = self._convert(raw)
            if event is not None:
                found.append(event)
        return found

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
            return Event(kind, raw.event_x, raw.event_y, keysym=name, state=raw.state)
        return None

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

"""Window queries over X itself (python-xlib): list, title, class, focus, close, wait for a window.

xdotool and wmctrl answer these with a process per question and polling; asking X directly, on
the desktop's held connection (:mod:`vdesk.xconn`), costs a fraction of a millisecond per
request and sees the window manager's own view (``_NET_CLIENT_LIST``, ``_NET_ACTIVE_WINDOW``).
"""

from __future__ import annotations

import builtins
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from Xlib import X, Xatom, display as xdisplay, error as xerror
from Xlib.protocol import event as xevent

from vdesk.errors import DesktopTimeout, InvalidArgument
from vdesk.xconn import XConnection

# Bounds on what the desktop's X server can make us hold (a program there sets them at will).
MAX_WINDOWS = 1000  # windows list() describes: the newest ones
MAX_TITLE_BYTES = 4096  # of a title; longer ones are cut
MAX_CLIENT_IDS = 1 << 16  # ids read from _NET_CLIENT_LIST
MAX_CLASS_BYTES = 512  # of a WM_CLASS
FOCUS_ASK_EVERY = 0.25  # seconds between requests for the focus while a window has not taken it
T = TypeVar("T")


@dataclass(frozen=True)
class Window:
    """A top-level window as the window manager knows it (geometry in physical pixels)."""

    id: int
    title: str
    wm_class: str
    x: int
    y: int
    width: int
    height: int
    viewable: bool = True


class Windows:
    """Window queries on one desktop's X display, on its shared connection. Thread-safe."""

    def __init__(self, connection: XConnection) -> None:
        self.connection = connection

    def list(self, limit: int = MAX_WINDOWS) -> builtins.list[Window]:
        """The managed top-level windows, oldest first: the newest ``limit`` of them (titles cut
        at :data:`MAX_TITLE_BYTES`); :meth:`count` says how many there are in all."""
        return self.connection.request(lambda display: [
            w for w in (self._window(display, i) for i in self._client_ids(display)[-limit:]) if w is not None])

    def stacked(self, limit: int = MAX_WINDOWS) -> builtins.list[Window]:
        """The managed top-level windows from the bottom of the stack to the top (what covers
        what: the accessibility tree's occlusion)."""
        def ask(display: xdisplay.Display) -> builtins.list[Window]:
            ids: builtins.list[int] = self._property(display, display.screen().root, "_NET_CLIENT_LIST_STACKING",
                                                     Xatom.WINDOW) or []
            return [w for w in (self._window(display, i) for i in ids[-limit:]) if w is not None]
        return self.connection.request(ask)

    def selection_owner(self, selection: str) -> int:
        """The id of the window that owns the X selection ``selection`` (``"CLIPBOARD"``,
        ``"PRIMARY"``); 0 when none does."""
        def ask(display: xdisplay.Display) -> int:
            owner = display.get_selection_owner(display.intern_atom(selection))
            return int(getattr(owner, "id", owner) or 0)
        return self.connection.request(ask)

    def count(self) -> int:
        """How many windows the window manager manages (up to :data:`MAX_CLIENT_IDS`)."""
        return self.connection.request(lambda display: len(self._client_ids(display)))

    def focused(self) -> Window | None:
        def ask(display: xdisplay.Display) -> Window | None:
            ids = self._property(display, display.screen().root, "_NET_ACTIVE_WINDOW", Xatom.WINDOW)
            return self._window(display, ids[0]) if ids and ids[0] else None
        return self.connection.request(ask)

    def find(self, title: str, *, regex: bool = False) -> Window | None:
        """The newest window whose title contains ``title`` (or matches it, with ``regex``)."""
        if regex:
            try:
                pattern = re.compile(title)
            except re.error as error:
                raise InvalidArgument(f"invalid regular expression {title!r}: {error}") from None
        matches = (lambda t: pattern.search(t) is not None) if regex else (lambda t: title in t)
        found = [w for w in self.list() if matches(w.title)]
        return found[-1] if found else None

    def wait_for(self, title: str, *, regex: bool = False, timeout: float = 10.0) -> Window:
        """Wait until a window with that title is on screen (mapped and viewable);
        :class:`DesktopTimeout` names the windows it saw instead."""
        deadline = time.monotonic() + timeout
        while (window := self.find(title, regex=regex)) is None or not window.viewable:
            if time.monotonic() > deadline:
                seen = ", ".join(repr(w.title) for w in self.list()) or "no windows"
                raise DesktopTimeout(f"no window titled {title!r} within {timeout:g} s (saw {seen})")
            time.sleep(0.02)
        return window

    def wait_gone(self, window: Window, timeout: float = 10.0) -> None:
        """Wait until the window manager has let go of ``window`` (it left ``_NET_CLIENT_LIST``).

        A program started next may get the same X window id; requests the window manager still
        sends for the old window would land on the new one (a new xterm shrunk to one cell was
        seen). Wait for this before starting a program right after another one closed.
        """
        deadline = time.monotonic() + timeout
        while window.id in self.connection.request(self._client_ids):
            if time.monotonic() > deadline:
                raise DesktopTimeout(f"window {window.title!r} was still managed after {timeout:g} s")
            time.sleep(0.01)

    def focus(self, window: Window, timeout: float = 5.0) -> None:
        """Ask the window manager to activate ``window`` and wait until it has the focus, asking
        again every :data:`FOCUS_ASK_EVERY` seconds while it has not. Once carried out, a request
        is spent: another window that takes the focus a moment later (openbox gives it to every
        new window; a program started earlier may show just then on a loaded machine) kept it,
        and a task's activation timed out in a whole run. Asking again is harmless."""
        def ask(display: xdisplay.Display) -> None:
            message = xevent.ClientMessage(window=window.id, client_type=display.get_atom("_NET_ACTIVE_WINDOW"),
                                           data=(32, [2, X.CurrentTime, 0, 0, 0]))
            display.screen().root.send_event(message, event_mask=X.SubstructureRedirectMask | X.SubstructureNotifyMask)
            display.flush()
        self.connection.request(ask)  # asked even when it has the focus: activating also raises it
        asked = time.monotonic()
        deadline = asked + timeout
        while (focused := self.focused()) is None or focused.id != window.id:
            now = time.monotonic()
            if now > deadline:
                raise DesktopTimeout(f"window {window.title!r} did not take the focus within {timeout:g} s")
            if now - asked >= FOCUS_ASK_EVERY:
                self.connection.request(ask)
                asked = now
            time.sleep(0.01)

    def pid(self, window: Window) -> int | None:
        """The process id the window's program gave it (``_NET_WM_PID``, in the desktop's
        process namespace); None when it gave none or the window is gone."""
        def ask(display: xdisplay.Display) -> int | None:
            value = self._first(display, window, "_NET_WM_PID", Xatom.CARDINAL)
            return None if value is None else int(value)

        return self.connection.request(ask)

    def wm_class(self, window: Window) -> str | None:
        """The window's whole ``WM_CLASS`` as wmctrl -x shows it, ``instance.class``; None when
        the window is gone."""
        def ask(display: xdisplay.Display) -> str | None:
            resource = display.create_resource_object("window", window.id)
            try:
                reply = resource.get_property(Xatom.WM_CLASS, Xatom.STRING, 0, MAX_CLASS_BYTES // 4)
            except (xerror.BadWindow, xerror.BadDrawable):
                return None
            return ".".join(reply.value.decode("latin-1").rstrip("\0").split("\0")) if reply else ""

        return self.connection.request(ask)

    def window_type(self, window: Window) -> str | None:
        """The window's kind as its program declares it (``_NET_WM_WINDOW_TYPE``, the first
        one): ``"normal"``, ``"dialog"``, ``"splash"`` …; None when it declares none or is gone."""
        def ask(display: xdisplay.Display) -> str | None:
            atom = self._first(display, window, "_NET_WM_WINDOW_TYPE", Xatom.ATOM)
            return None if atom is None else display.get_atom_name(atom).removeprefix("_NET_WM_WINDOW_TYPE_").lower()

        return self.connection.request(ask)

    def close(self, window: Window) -> None:
        """Ask the window manager to close ``window`` (``_NET_CLOSE_WINDOW``), as its close
        button does: the program may ask first (unsaved work) or refuse."""
        def send(display: xdisplay.Display) -> None:
            message = xevent.ClientMessage(window=window.id, client_type=display.get_atom("_NET_CLOSE_WINDOW"),
                                           data=(32, [X.CurrentTime, 2, 0, 0, 0]))
            display.screen().root.send_event(message, event_mask=X.SubstructureRedirectMask | X.SubstructureNotifyMask)
            display.flush()
        self.connection.request(send)

    def drawn(self) -> bool:
        """Whether anything was drawn on screen since the last call (see :mod:`vdesk.damage`); True
        at the first call on a connection, a new one after a drop included. One round trip."""
        return self.connection.drawn()

    def request(self, send: Callable[[xdisplay.Display], T]) -> T:
        """Run ``send(display)`` on the desktop's X connection (see :meth:`XConnection.request`)."""
        return self.connection.request(send)

    @staticmethod
    def _first(display: xdisplay.Display, window: Window, name: str, kind: int) -> int | None:
        """The first 32-bit value of the window's property ``name``; None when it has none or is gone."""
        resource = display.create_resource_object("window", window.id)
        try:
            reply = resource.get_property(display.get_atom(name), kind, 0, 1)
        except (xerror.BadWindow, xerror.BadDrawable):
            return None
        return int(reply.value[0]) if reply is not None and len(reply.value) else None

    @staticmethod
    def _property(display: xdisplay.Display, window: Any, name: str, kind: int) -> builtins.list[int] | None:
        reply = window.get_property(display.get_atom(name), kind, 0, MAX_CLIENT_IDS)
        return list(reply.value) if reply is not None else None

    def _client_ids(self, display: xdisplay.Display) -> builtins.list[int]:
        """The managed windows' ids, oldest first."""
        return self._property(display, display.screen().root, "_NET_CLIENT_LIST", Xatom.WINDOW) or []

    @staticmethod
    def _window(display: xdisplay.Display, window_id: int) -> Window | None:
        window = display.create_resource_object("window", window_id)
        words = MAX_TITLE_BYTES // 4  # property lengths are asked in 32-bit units
        try:
            name = (window.get_property(display.get_atom("_NET_WM_NAME"), display.get_atom("UTF8_STRING"), 0, words)
                    or window.get_property(Xatom.WM_NAME, X.AnyPropertyType, 0, words))
            title = name.value if name else b""
            class_reply = window.get_property(Xatom.WM_CLASS, Xatom.STRING, 0, 64)
            wm_class = class_reply.value.decode("latin-1").split("\0") if class_reply else None
            geometry = window.get_geometry()
            viewable = window.get_attributes().map_state == X.IsViewable
            origin = window.translate_coords(display.screen().root, 0, 0)
        except (xerror.BadWindow, xerror.BadDrawable):
            return None  # it closed while we looked
        if isinstance(title, bytes):
            title = title.decode("utf-8", "replace")
        return Window(window_id, title, wm_class[1] if wm_class and len(wm_class) > 1 else "",
                      -origin.x, -origin.y, geometry.width, geometry.height, viewable)

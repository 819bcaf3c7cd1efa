"""Window queries over X itself (python-xlib): list, title, focus, wait for a window.

xdotool answers these with a process per question and polling; talking X directly through a
tunnel into the desktop costs a fraction of a millisecond per request and sees the window
manager's own view (``_NET_CLIENT_LIST``, ``_NET_ACTIVE_WINDOW``).
"""

from __future__ import annotations

import random
import re
import threading
import time
from dataclasses import dataclass

import docker
from Xlib import X, Xatom, display as xdisplay, error as xerror
from Xlib.protocol import event as xevent

from vdesk.errors import DesktopTimeout
from vdesk.tunnel import Tunnel

X_SOCKET = "UNIX-CONNECT:/tmp/.X11-unix/X0"


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


def open_display(api: docker.APIClient, container_id: str) -> tuple[xdisplay.Display, Tunnel]:
    """Connect python-xlib to a desktop's X server through a tunnel; the caller owns both."""
    for _ in range(50):
        number = random.randint(100, 3000)  # python-xlib reaches TCP displays at port 6000 + N
        try:
            tunnel = Tunnel(api, container_id, X_SOCKET, tcp_port=6000 + number)
            break
        except OSError:
            continue
    else:
        raise OSError("no free local port for the X tunnel")
    try:
        return xdisplay.Display(f"127.0.0.1:{number}"), tunnel
    except BaseException:
        tunnel.close()
        raise


class Windows:
    """Window queries on one X display. Thread-safe."""

    def __init__(self, display: xdisplay.Display) -> None:
        self._display = display
        self._root = display.screen().root
        self._lock = threading.Lock()
        self._atoms = {name: display.intern_atom(name) for name in
                       ("_NET_CLIENT_LIST", "_NET_ACTIVE_WINDOW", "_NET_WM_NAME", "UTF8_STRING")}

    def list(self) -> list[Window]:
        """Every managed top-level window, oldest first."""
        with self._lock:
            return [w for w in (self._describe(i) for i in self._client_ids()) if w is not None]

    def focused(self) -> Window | None:
        with self._lock:
            ids = self._property(self._root, "_NET_ACTIVE_WINDOW", Xatom.WINDOW)
            return self._describe(ids[0]) if ids and ids[0] else None

    def find(self, title: str, *, regex: bool = False) -> Window | None:
        """The newest window whose title contains ``title`` (or matches it, with ``regex``)."""
        matches = (lambda t: re.search(title, t) is not None) if regex else (lambda t: title in t)
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
        while True:
            with self._lock:
                if window.id not in self._client_ids():
                    return
            if time.monotonic() > deadline:
                raise DesktopTimeout(f"window {window.title!r} was still managed after {timeout:g} s")
            time.sleep(0.01)

    def focus(self, window: Window, timeout: float = 5.0) -> None:
        """Ask the window manager to activate ``window`` and wait until it has the focus."""
        with self._lock:
            message = xevent.ClientMessage(window=window.id, client_type=self._atoms["_NET_ACTIVE_WINDOW"],
                                           data=(32, [2, X.CurrentTime, 0, 0, 0]))
            self._root.send_event(message, event_mask=X.SubstructureRedirectMask | X.SubstructureNotifyMask)
            self._display.flush()
        deadline = time.monotonic() + timeout
        while (focused := self.focused()) is None or focused.id != window.id:
            if time.monotonic() > deadline:
                raise DesktopTimeout(f"window {window.title!r} did not take the focus within {timeout:g} s")
            time.sleep(0.01)

    def close(self) -> None:
        """Close the X connection; one the X server already closed (it died) is fine."""
        with self._lock:
            try:
                self._display.close()
            except (xerror.ConnectionClosedError, OSError):
                pass

    def _property(self, window, name: str, kind: int) -> list[int] | None:  # type: ignore[no-untyped-def]
        reply = window.get_full_property(self._atoms[name], kind)
        return list(reply.value) if reply is not None else None

    def _client_ids(self) -> list[int]:
        """The managed windows' ids, oldest first; call with the lock held."""
        return self._property(self._root, "_NET_CLIENT_LIST", Xatom.WINDOW) or []

    def _describe(self, window_id: int) -> Window | None:
        window = self._display.create_resource_object("window", window_id)
        try:
            name = window.get_full_property(self._atoms["_NET_WM_NAME"], self._atoms["UTF8_STRING"])
            title = name.value.decode("utf-8", "replace") if name else (window.get_wm_name() or "")
            wm_class = window.get_wm_class()
            geometry = window.get_geometry()
            viewable = window.get_attributes().map_state == X.IsViewable
            origin = window.translate_coords(self._root, 0, 0)
        except (xerror.BadWindow, xerror.BadDrawable):
            return None  # it closed while we looked
        return Window(window_id, title if isinstance(title, str) else title.decode("latin-1"),
                      wm_class[1] if wm_class else "", -origin.x, -origin.y, geometry.width, geometry.height,
                      viewable)

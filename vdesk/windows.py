"""Window queries over X itself (python-xlib): list, title, focus, wait for a window.

xdotool answers these with a process per question and polling; talking X directly through a
tunnel into the desktop costs a fraction of a millisecond per request and sees the window
manager's own view (``_NET_CLIENT_LIST``, ``_NET_ACTIVE_WINDOW``). The keyboard mapping
(:mod:`vdesk.keymap`) and the input events (:mod:`vdesk.xtest`) share the connection.
"""

from __future__ import annotations

import math
import random
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import docker
from Xlib import X, Xatom, display as xdisplay, error as xerror
from Xlib.protocol import event as xevent

from vdesk.damage import ScreenDamage
from vdesk.errors import ChannelLost, DesktopGone, DesktopTimeout, InvalidArgument, XServerError
from vdesk.tunnel import Tunnel

X_SOCKET = "UNIX-CONNECT:/tmp/.X11-unix/X0"
# Bounds on what the desktop's X server can make us hold (a program there sets them at will).
MAX_WINDOWS = 1000  # windows list() describes: the newest ones
MAX_TITLE_BYTES = 4096  # of a title; longer ones are cut
MAX_CLIENT_IDS = 1 << 16  # ids read from _NET_CLIENT_LIST
CONNECT_TIMEOUT = 15.0  # seconds for a new connection: its tunnel's docker exec is slow on a loaded machine
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


def open_display(api: docker.APIClient, container_id: str,
                 timeout: float = CONNECT_TIMEOUT) -> tuple[xdisplay.Display, Tunnel]:
    """Connect python-xlib to a desktop's X server through a tunnel; the caller owns both.
    A server that does not answer within ``timeout`` seconds raises :class:`DesktopTimeout`."""
    for _ in range(50):
        number = random.randint(100, 3000)  # python-xlib reaches TCP displays at port 6000 + N
        try:
            tunnel = Tunnel(api, container_id, X_SOCKET, tcp_port=6000 + number)
            break
        except OSError:
            continue
    else:
        raise XServerError("no free local port for the X tunnel")
    with _cut_after(timeout, tunnel.close) as late:
        try:
            return xdisplay.Display(f"127.0.0.1:{number}"), tunnel
        except BaseException:
            tunnel.close()
            if late.is_set():
                raise DesktopTimeout(f"the desktop's X server did not answer a new connection within {timeout:g} s") from None
            raise


@contextmanager
def _cut_after(timeout: float, cut: Callable[[], None]) -> Iterator[threading.Event]:
    """Run the block; when it lasts past ``timeout`` seconds, ``cut()`` (from another thread)
    ends the connection it waits on: python-xlib's waits have no timeout of their own. The
    event yielded says whether that happened."""
    late = threading.Event()

    def expire() -> None:
        late.set()
        cut()

    watchdog = threading.Timer(timeout, expire)
    watchdog.daemon = True
    watchdog.start()
    try:
        yield late
    finally:
        watchdog.cancel()


class _Watchdog:
    """Cuts the connection under a request that outlives its deadline: one thread serves every
    input request of a connection (a timer thread per request cost 0.1 ms of CPU each)."""

    def __init__(self) -> None:
        self._wake = threading.Condition()
        self._armed: tuple[float, Callable[[], None], threading.Event] | None = None
        self._sleeps_until = math.inf  # when the thread wakes next on its own
        self._thread: threading.Thread | None = None
        self._closed = False

    @contextmanager
    def guard(self, timeout: float, cut: Callable[[], None]) -> Iterator[threading.Event]:
        """Run the block; past ``timeout`` seconds ``cut()`` ends what it waits on. The event
        yielded says whether that happened."""
        late = threading.Event()
        deadline = time.monotonic() + timeout
        with self._wake:
            self._armed = (deadline, cut, late)
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="vdesk-x-watchdog", daemon=True)
                self._thread.start()
            elif self._sleeps_until > deadline:  # else it wakes in time by itself: no switch to it
                self._wake.notify()
        try:
            yield late
        finally:
            with self._wake:
                self._armed = None

    def close(self) -> None:
        with self._wake:
            self._closed = True
            self._wake.notify()

    def _watch(self) -> None:
        with self._wake:
            while not self._closed:
                now = time.monotonic()
                if self._armed is not None and self._armed[0] <= now:
                    _, cut, late = self._armed
                    self._armed = None
                    late.set()
                    cut()  # a socket shutdown: quick
                    continue
                self._sleeps_until = self._armed[0] if self._armed is not None else math.inf
                self._wake.wait(None if self._sleeps_until == math.inf else self._sleeps_until - now)
                self._sleeps_until = math.inf


@dataclass
class _Link:
    """An open connection: the display, the tunnel it travels through, and what was looked up once."""

    display: xdisplay.Display
    tunnel: Tunnel
    root: Any
    atoms: dict[str, int]
    damage: ScreenDamage

    def close(self) -> None:
        try:
            self.display.close()
        except (xerror.ConnectionClosedError, OSError):
            pass  # the X server or the tunnel already closed it
        self.tunnel.close()

    def cut(self) -> None:
        """End the connection under a request that waits for the server: it then raises
        ConnectionClosedError."""
        try:
            self.display.display.socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # closed already


class Windows:
    """Window queries on one desktop's X display. Thread-safe.

    The connection is opened by ``connect`` at the first request and opened again when it
    dropped (its tunnel died): a request that finds it closed is sent once more on a new one.
    Other X requests share it through :meth:`request`.
    """

    def __init__(self, connect: Callable[[], tuple[xdisplay.Display, Tunnel]], name: str = "") -> None:
        self._connect = connect
        self._label = f"desktop {name}" if name else "the desktop"  # for errors
        self._lock = threading.Lock()
        self._link: _Link | None = None
        self._watchdog = _Watchdog()
        self._closed = False

    def list(self, limit: int = MAX_WINDOWS) -> list[Window]:
        """The managed top-level windows, oldest first: the newest ``limit`` of them (titles cut
        at :data:`MAX_TITLE_BYTES`); :meth:`count` says how many there are in all."""
        return self._x(lambda link: [w for w in (self._window(link, i) for i in self._client_ids(link)[-limit:])
                                     if w is not None])

    def stacked(self, limit: int = MAX_WINDOWS) -> list[Window]:
        """The managed top-level windows from the bottom of the stack to the top (what covers
        what: the accessibility tree's occlusion)."""
        def ask(link: _Link) -> list[Window]:
            ids = self._property(link, link.root, "_NET_CLIENT_LIST_STACKING", Xatom.WINDOW) or []
            return [w for w in (self._window(link, i) for i in ids[-limit:]) if w is not None]
        return self._x(ask)

    def count(self) -> int:
        """How many windows the window manager manages (up to :data:`MAX_CLIENT_IDS`)."""
        return self._x(lambda link: len(self._client_ids(link)))

    def focused(self) -> Window | None:
        def ask(link: _Link) -> Window | None:
            ids = self._property(link, link.root, "_NET_ACTIVE_WINDOW", Xatom.WINDOW)
            return self._window(link, ids[0]) if ids and ids[0] else None
        return self._x(ask)

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
        while window.id in self._x(self._client_ids):
            if time.monotonic() > deadline:
                raise DesktopTimeout(f"window {window.title!r} was still managed after {timeout:g} s")
            time.sleep(0.01)

    def focus(self, window: Window, timeout: float = 5.0) -> None:
        """Ask the window manager to activate ``window`` and wait until it has the focus."""
        def ask(link: _Link) -> None:
            message = xevent.ClientMessage(window=window.id, client_type=link.atoms["_NET_ACTIVE_WINDOW"],
                                           data=(32, [2, X.CurrentTime, 0, 0, 0]))
            link.root.send_event(message, event_mask=X.SubstructureRedirectMask | X.SubstructureNotifyMask)
            link.display.flush()
        self._x(ask)
        deadline = time.monotonic() + timeout
        while (focused := self.focused()) is None or focused.id != window.id:
            if time.monotonic() > deadline:
                raise DesktopTimeout(f"window {window.title!r} did not take the focus within {timeout:g} s")
            time.sleep(0.01)

    def pid(self, window: Window) -> int | None:
        """The process id the window's program gave it (``_NET_WM_PID``, in the desktop's
        process namespace); None when it gave none or the window is gone."""
        def ask(link: _Link) -> int | None:
            resource = link.display.create_resource_object("window", window.id)
            try:
                reply = resource.get_property(link.display.intern_atom("_NET_WM_PID"), Xatom.CARDINAL, 0, 1)
            except (xerror.BadWindow, xerror.BadDrawable):
                return None
            return int(reply.value[0]) if reply is not None and len(reply.value) else None

        return self._x(ask)

    def drawn(self) -> bool:
        """Whether anything was drawn on screen since the last call (see :mod:`vdesk.damage`); True
        at the first call on a connection, a new one after a drop included. One round trip."""
        return self._x(lambda link: link.damage.drawn())

    def drawing_seen(self) -> bool:
        """Whether drawing since the last :meth:`drawn` is known already, without a round trip
        (see :mod:`vdesk.damage`)."""
        return self._x(lambda link: link.damage.seen())

    def request(self, send: Callable[[xdisplay.Display], T]) -> T:
        """Run ``send(display)`` on this connection, alone; it runs again on a new connection
        when the old one turns out closed, so it must be safe to repeat."""
        return self._x(lambda link: send(link.display))

    def send_once(self, send: Callable[[xdisplay.Display], None], timeout: float) -> None:
        """Run ``send(display)`` on this connection, alone and at most once: for requests that
        must not be repeated (input events). A connection that closed while idle (its tunnel
        died) is replaced before ``send`` starts. One that drops while ``send`` runs raises
        :class:`ChannelLost`, and one whose server does not answer within ``timeout`` seconds is
        cut and raises :class:`DesktopTimeout`; how much of it arrived is unknown either way.
        The next request opens a new connection."""
        with self._lock:
            if self._closed:
                raise DesktopGone("the desktop's X connection is closed")
            link = self._idle_link()
            with self._watchdog.guard(timeout, link.cut) as late:
                try:
                    send(link.display)
                except xerror.ConnectionClosedError:
                    self._drop()
                    if late.is_set():
                        raise DesktopTimeout(f"{self._label}: the X server did not take input within {timeout:g} s") from None
                    raise ChannelLost(f"{self._label}: the X connection dropped while input was sent on it") from None

    def _idle_link(self) -> _Link:
        """The connection, checked without waiting (what the server sent is read): one it
        closed is replaced once."""
        for _ in range(2):
            try:
                link = self._connected()
                while link.display.pending_events():  # e.g. MappingNotify: nobody else reads events
                    link.damage.note(link.display.next_event())
                return link
            except xerror.ConnectionClosedError:
                self._drop()
        raise DesktopGone("the desktop's X connection dropped twice")

    def disconnect(self) -> None:
        """Close the connection and its tunnel for now; the next request opens a new one."""
        with self._lock:
            self._drop()

    def close(self) -> None:
        """Close the connection and its tunnel; one the X server already closed is fine."""
        with self._lock:
            self._closed = True
            self._drop()
        self._watchdog.close()

    def _x(self, send: Callable[[_Link], T]) -> T:
        with self._lock:
            if self._closed:
                raise DesktopGone("the desktop's X connection is closed")
            try:
                return send(self._connected())
            except xerror.ConnectionClosedError:
                self._drop()
            try:
                return send(self._connected())  # once more, on a new connection
            except xerror.ConnectionClosedError as error:
                self._drop()
                raise DesktopGone(f"the desktop's X connection dropped twice: {error}") from None

    def _drop(self) -> None:
        if self._link is not None:
            self._link.close()
            self._link = None

    def _connected(self) -> _Link:
        if self._link is None:
            self._link = self._open()
        return self._link

    def _open(self) -> _Link:
        display, tunnel = self._connect()
        try:
            atoms = {name: display.intern_atom(name) for name in
                     ("_NET_CLIENT_LIST", "_NET_CLIENT_LIST_STACKING", "_NET_ACTIVE_WINDOW", "_NET_WM_NAME",
                      "UTF8_STRING")}
        except BaseException:
            _Link(display, tunnel, None, {}, ScreenDamage(display)).close()
            raise
        return _Link(display, tunnel, display.screen().root, atoms, ScreenDamage(display))

    @staticmethod
    def _property(link: _Link, window: Any, name: str, kind: int) -> list[int] | None:
        reply = window.get_property(link.atoms[name], kind, 0, MAX_CLIENT_IDS)
        return list(reply.value) if reply is not None else None

    def _client_ids(self, link: _Link) -> list[int]:
        """The managed windows' ids, oldest first."""
        return self._property(link, link.root, "_NET_CLIENT_LIST", Xatom.WINDOW) or []

    @staticmethod
    def _window(link: _Link, window_id: int) -> Window | None:
        window = link.display.create_resource_object("window", window_id)
        words = MAX_TITLE_BYTES // 4  # property lengths are asked in 32-bit units
        try:
            name = (window.get_property(link.atoms["_NET_WM_NAME"], link.atoms["UTF8_STRING"], 0, words)
                    or window.get_property(Xatom.WM_NAME, X.AnyPropertyType, 0, words))
            title = name.value if name else b""
            class_reply = window.get_property(Xatom.WM_CLASS, Xatom.STRING, 0, 64)
            wm_class = class_reply.value.decode("latin-1").split("\0") if class_reply else None
            geometry = window.get_geometry()
            viewable = window.get_attributes().map_state == X.IsViewable
            origin = window.translate_coords(link.root, 0, 0)
        except (xerror.BadWindow, xerror.BadDrawable):
            return None  # it closed while we looked
        if isinstance(title, bytes):
            title = title.decode("utf-8", "replace")
        return Window(window_id, title, wm_class[1] if wm_class and len(wm_class) > 1 else "",
                      -origin.x, -origin.y, geometry.width, geometry.height, viewable)

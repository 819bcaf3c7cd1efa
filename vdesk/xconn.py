"""The X connection to one desktop: a python-xlib connection through a tunnel into the
container (:mod:`vdesk.tunnel`), held open and shared by window queries (:mod:`vdesk.windows`),
pointer and key input (:mod:`vdesk.xtest`), the keymap of exact typing (:mod:`vdesk.keymap`) and
what was drawn on screen (:mod:`vdesk.damage`, whose object lives with the connection).

Opening one costs a tunnel (a ``docker exec``: tens of milliseconds, seconds on a loaded machine)
and the X handshake; a request on an open one costs a fraction of a millisecond. So the
connection is opened at the first request and held, and its users hand it requests
(:meth:`XConnection.request`) instead of holding connections of their own.

A tunnel can die under it (its ``socat`` killed, the engine's stream cut). A request that finds
the connection closed runs once more on a new one: :meth:`XConnection.request` is for requests
that may repeat (queries, the keymap's grab-read-write), :meth:`XConnection.send_once` for those
that must not (input events), which report a drop instead. python-xlib's waits have no timeout of
their own: one watchdog thread per connection cuts the socket under a request that outlives its
deadline (a timer thread per request cost 0.1 ms of CPU each, on every input burst).
"""

from __future__ import annotations

import math
import random
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

import docker
from Xlib import display as xdisplay, error as xerror

from vdesk.damage import ScreenDamage
from vdesk.errors import ChannelLost, DesktopGone, DesktopTimeout, XServerError
from vdesk.tunnel import Tunnel

X_SOCKET = "UNIX-CONNECT:/tmp/.X11-unix/X0"
CONNECT_TIMEOUT = 15.0  # seconds for a new connection: its tunnel's docker exec is slow on a loaded machine
T = TypeVar("T")
Connect = Callable[[], tuple[xdisplay.Display, Tunnel]]


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
    watchdog = _Watchdog()  # the handshake waits with no timeout of its own
    try:
        with watchdog.guard(timeout, tunnel.close) as late:
            try:
                return xdisplay.Display(f"127.0.0.1:{number}"), tunnel
            except BaseException:
                tunnel.close()
                if late.is_set():
                    raise DesktopTimeout(f"the desktop's X server did not answer a new connection within {timeout:g} s") from None
                raise
    finally:
        watchdog.close()


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
    """An open connection: the display, the tunnel it travels through, and its screen's damage."""

    display: xdisplay.Display
    tunnel: Tunnel
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


class XConnection:
    """One desktop's X connection, opened by ``connect`` at the first request and again after it
    dropped. Thread-safe: one request at a time. ``name`` (the desktop's) is for errors."""

    def __init__(self, connect: Connect, name: str = "") -> None:
        self._connect = connect
        self._label = f"desktop {name}" if name else "the desktop"
        self._lock = threading.Lock()
        self._link: _Link | None = None
        self._watchdog = _Watchdog()
        self._closed = False

    def request(self, send: Callable[[xdisplay.Display], T]) -> T:
        """Run ``send(display)`` on this connection, alone; it runs again on a new connection
        when the old one turns out closed, so it must be safe to repeat."""
        return self._on_link(lambda link: send(link.display))

    def send_once(self, send: Callable[[xdisplay.Display], None], timeout: float) -> None:
        """Run ``send(display)`` on this connection, alone and at most once: for requests that
        must not be repeated (input events). A connection that closed while idle (its tunnel
        died) is replaced before ``send`` starts. One that drops while ``send`` runs raises
        :class:`ChannelLost`, and one whose server does not answer within ``timeout`` seconds is
        cut and raises :class:`DesktopTimeout`; how much of it arrived is unknown either way, and
        so when ``send`` is interrupted (Ctrl-C). The next request opens a new connection."""
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
                except BaseException:
                    self._drop()  # cut off mid-request or mid-reply (Ctrl-C): the stream cannot go on
                    raise

    def drawn(self) -> bool:
        """Whether anything was drawn on screen since the last call (see :mod:`vdesk.damage`); True
        at the first call on a connection, a new one after a drop included. One round trip."""
        return self._on_link(lambda link: link.damage.drawn())

    def disconnect(self) -> None:
        """Close the connection and its tunnel for now (a checkpoint cannot hold them); the next
        request opens a new one."""
        with self._lock:
            self._drop()

    def close(self) -> None:
        """Close the connection and its tunnel; one the X server already closed is fine."""
        with self._lock:
            self._closed = True
            self._drop()
        self._watchdog.close()

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

    def _on_link(self, send: Callable[[_Link], T]) -> T:
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
            display, tunnel = self._connect()
            self._link = _Link(display, tunnel, ScreenDamage(display))
        return self._link

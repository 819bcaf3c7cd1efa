"""Frames over VNC: one held RFB connection per desktop and a copy of its screen, pulled on demand.

A VNC server keeps, per client, the region that changed since its last update, and sends an
update only when the client asks. So nothing is pulled while nobody wants a frame: a busy
screen (a video, an animation, a blinking cursor) costs this process nothing until then.

* A *fresh* frame asks for the accumulated change (an incremental request for the whole
  screen) together with a 1x1 non-incremental request for pixel (0, 0), which the server must
  answer at once; the answer carries every pending change: one round trip.
* While someone *watches* (a settle wait, a change wait, :meth:`LiveFramebuffer.watching`),
  one incremental request is kept outstanding, so every change streams in as it happens and
  the waits see when the screen last moved.
* :meth:`LiveFramebuffer.latest` is the frame as last pulled (by a fresh frame, a wait or a
  recording), at no cost.

The screen is a canvas of the framebuffer's size, each rectangle painted at its place.
vncdotool's client makes a connection's first rectangle the whole screen, at (0, 0), and grows
it with black as later ones reach further; Xvnc sends the single-colour areas of an update first
to a client that takes LastRect, so a full update starts wherever the first such area is. A
connection opened later — ``vdesk shot`` or ``Desktop.attach`` on a desktop from ``vdesk up``, a
reconnect, an outside vncdotool client — showed black where that area was (the wallpaper right
of Chromium's window, a strip beside Writer's sidebar, the Save dialog's file-name field),
while XGetImage of the root had the wallpaper; ``Desktop.up``'s own connection opens on a
one-colour screen, so it was spared. Measured on such a desktop: the rectangles a client asking
for RAW and LastRect gets, painted at their places, equal the X server's pixels exactly; painted
as vncdotool paints them, (1060, 0)–(1280, 770) stays black. Not asking for LastRect hides it
too (Xvnc then sends strips from the top-left), but that order is the server's habit, not the
protocol's promise; the canvas holds whatever the order, for one allocation per connection.

Pixels come RAW: on this loopback tunnel a full 1280x800 frame of text took 39 ms raw against
180 ms with ZRLE and 660 ms with Hextile, whose decoders run in Python.

The connection is an exec'd ``socat`` to the VNC server whose socket the event loop reads
itself (:class:`_ExecFraming` takes off the engine's stream headers): no relay thread and no
local socket between the server and the client (a fifth of this process's CPU per step). An
engine reached over TLS or ssh hands back a socket the loop cannot take; its frames go through
a :class:`~vdesk.tunnel.Tunnel` at an ``address`` instead.
"""

from __future__ import annotations

import os
import struct
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from PIL import Image, ImageChops
from twisted.internet import reactor
from twisted.logger import FilteringLogObserver, LogLevel, LogLevelFilterPredicate, STDLibLogObserver, globalLogPublisher
from vncdotool import rfb
from vncdotool.client import AuthenticationError, VNCDoToolClient, VNCDoToolFactory, factory_connect
from vncdotool.command import parse_server

from vdesk.coords import Box
from vdesk.errors import (DesktopGone, DesktopTimeout, ForkedProcess, PasswordRefused,
                          VNCUnavailable, VdeskError)
from vdesk.execstream import ExecSocket, FrameReader
from vdesk.vncauth import vnc_auth_response


CHANGE_TILE = 16  # pixels: changes closer than this are one region
MAX_REGIONS = 8  # more separate changes than this are reported as the box around them all
_REACTOR_START = threading.Lock()  # the first connections of a process start the shared reactor
_reactor_started = False

OpenExec = Callable[[], ExecSocket]  # starts the exec'd relay to the VNC server


def _start_reactor() -> None:
    """Run twisted's reactor in a daemon thread, once per process. Only its errors reach Python's
    logging: vncdotool logs a message for every rectangle it reads, and handing each one to
    ``logging`` cost more than decoding the rectangle."""
    global _reactor_started
    with _REACTOR_START:
        if _reactor_started or reactor.running:
            return
        _reactor_started = True
        errors_only = LogLevelFilterPredicate(defaultLogLevel=LogLevel.error)
        globalLogPublisher.addObserver(FilteringLogObserver(STDLibLogObserver(), [errors_only]))
        threading.Thread(target=reactor.run, name="Twisted Reactor", kwargs={"installSignalHandlers": False},
                         daemon=True).start()


class _Fork:
    """Whether this process was forked from one whose reactor ran: the child inherits a reactor
    that says it runs, without the thread that ran it, so no connection could ever complete."""

    inherited_reactor = False

    @staticmethod
    def note_child() -> None:
        _Fork.inherited_reactor = bool(reactor.running)


os.register_at_fork(after_in_child=_Fork.note_child)


@dataclass(frozen=True)
class Frame:
    """A copy of the screen and the update count it reflects."""

    image: Image.Image
    version: int


class _LiveUpdates:
    """What makes an RFB client keep ``screen`` current and report each update (the client is
    :class:`_LiveClient`)."""

    live: LiveFramebuffer

    def sendPassword(self, password: str) -> None:
        self.transport.write(vnc_auth_response(password, self._challenge))

    def vncConnectionMade(self) -> None:
        if self._refuse(self.width, self.height, "framebuffer"):
            return
        super().vncConnectionMade()
        self.framebufferUpdateRequest(incremental=False)

    def setEncodings(self, list_of_encodings) -> None:  # type: ignore[no-untyped-def]
        # CopyRect as well: a scrolling window then costs its new lines, not all of its pixels.
        super().setEncodings([*list_of_encodings, rfb.Encoding.COPY_RECTANGLE])

    def copyRectangle(self, srcx: int, srcy: int, x: int, y: int, width: int, height: int) -> None:
        with self.live._lock:
            assert self.screen is not None
            self.screen.paste(self.screen.crop((srcx, srcy, srcx + width, srcy + height)), (x, y))

    # A framebuffer or rectangle larger than the desktop's size is refused before its pixels
    # are read: a hostile server could otherwise make this process hold gigabytes.
    def updateDesktopSize(self, width: int, height: int) -> None:
        if not self._refuse(width, height, "new framebuffer size"):
            super().updateDesktopSize(width, height)

    def _handleRectangle(self, block: bytes) -> None:
        x, y, width, height = struct.unpack("!HHHH", block[:8])
        if width and height and self._refuse(x + width, y + height, "rectangle reaching"):
            return
        super()._handleRectangle(block)

    def _refuse(self, width: int, height: int, what: str) -> bool:
        limit = self.live.max_size
        if limit is None or (width <= limit[0] and height <= limit[1]):
            return False
        self.live.refused = (f"{self.live.name}: refused a {what} {width}x{height}, larger than the "
                             f"desktop's {limit[0]}x{limit[1]}")
        self.transport.loseConnection()
        return True

    _echoes = 0  # 1x1 answers to a sync that repainted a pixel with its own value

    def updateRectangle(self, x: int, y: int, width: int, height: int, data: bytes) -> None:
        with self.live._lock:
            if self.screen is None and width and height:
                # The screen is a canvas of the framebuffer's size, each rectangle painted where
                # it belongs. vncdotool would make the connection's first rectangle the screen,
                # placed at (0, 0) whatever its position, and grow it with black: the server
                # sends single-colour areas first (it does so for clients that take LastRect),
                # so a new connection to a screen whose first such area was not at the
                # top-left showed a black box where that area was.
                self.screen = Image.new("RGB", (self.width, self.height))
            if (x, y, width, height) == (0, 0, 1, 1) and self.screen is not None:
                before = self.screen.getpixel((0, 0))
                super().updateRectangle(x, y, width, height, data)
                self._echoes += self.screen.getpixel((0, 0)) == before
            else:
                super().updateRectangle(x, y, width, height, data)

    def commitUpdate(self, rectangles: list[tuple[int, int, int, int]] | None = None) -> None:
        if self.screen is None:
            # The answer to the first request held no pixels, only a pseudo-rectangle (the
            # server sends a new cursor shape, e.g. openbox's as it starts, in an update of its
            # own): ask for the screen again, or the first frame never comes.
            self.framebufferUpdateRequest(incremental=False)
            return
        rectangles = rectangles or []
        self.live._on_update(rectangles, changed=len(rectangles) > self._echoes)
        self._echoes = 0
        if self.live._watchers:  # someone watches: keep one request outstanding
            self.framebufferUpdateRequest(incremental=True)

    def connectionLost(self, reason) -> None:  # type: ignore[no-untyped-def]
        self.live._on_lost()
        super().connectionLost(reason)


class _ExecFraming:
    """What makes an RFB client read an exec's output: each piece comes behind an 8-byte header
    (:class:`~vdesk.execstream.FrameReader`), which is taken off before the bytes reach the
    client's parser. What the client writes goes to the exec's stdin as it is."""

    _frames: FrameReader | None = None

    def dataReceived(self, data: bytes) -> None:
        if self._frames is None:
            self._frames = FrameReader()
        if payload := b"".join(piece for _, piece in self._frames.feed(data)):
            super().dataReceived(payload)  # type: ignore[misc]


with warnings.catch_warnings():
    # vncdotool warns each subclass that overrides updateRectangle that its signature may
    # change; ours only wraps the inherited method and calls it with the same arguments.
    warnings.filterwarnings("ignore", message="updateRectangle will change", category=FutureWarning)

    class _LiveClient(_LiveUpdates, VNCDoToolClient):
        """An RFB client that keeps ``screen`` current and reports each update."""

    class _ExecLiveClient(_ExecFraming, _LiveClient):
        """A :class:`_LiveClient` reading an exec's framed output."""


def _adopt(stream: ExecSocket, factory: _LiveFactory) -> None:
    """In the reactor: read and write the exec's socket from the event loop, which takes a
    duplicate of it (so ours is closed)."""
    try:
        transport = reactor.adoptStreamConnection(stream.sock.fileno(), stream.sock.family, factory)
        if stream.early:  # the server's first bytes (its version) came with the HTTP headers
            transport.protocol.dataReceived(stream.early)
    except OSError as error:  # the connection already broke
        factory.deferred.errback(error)
    finally:
        stream.close()


def _ask_for_changes(client: _LiveClient) -> None:
    """In the reactor: request the accumulated change and an answer now, back to back."""
    client.framebufferUpdateRequest(incremental=True)
    client.framebufferUpdateRequest(0, 0, 1, 1, False)


class _LiveFactory(VNCDoToolFactory):
    protocol = _LiveClient
    # Not noisy: twisted keeps every log event (each naming its factory, and through it the
    # client and its screen) in a global buffer until logging starts, which it never does here.
    noisy = False
    pseudodesktop = True
    # The cursor comes as a separate shape (and is ignored), never painted into frames.
    nocursor = True
    qemu_extended_key = False

    live: LiveFramebuffer

    def buildProtocol(self, address):  # type: ignore[no-untyped-def]
        client = super().buildProtocol(address)
        client.live = self.live
        return client

    def clientConnectionLost(self, connector, reason) -> None:  # type: ignore[no-untyped-def]
        # Lost before the handshake finished (the server was not listening yet): a failure,
        # not a silent wait.
        if not self.deferred.called:
            self.deferred.errback(reason)
        super().clientConnectionLost(connector, reason)


class LiveFramebuffer:
    """The live screen of one desktop, fed by a held VNC connection.

    ``source`` is how to reach the VNC server: an :data:`OpenExec` that starts a relay in the
    desktop (read by the event loop itself), or the address of one, a Unix socket path or
    ``host::port``. ``password`` is the VNC password.
    """

    def __init__(self, source: str | OpenExec, password: str, name: str = "desktop",
                 max_size: tuple[int, int] | None = None) -> None:
        self.source = source
        self.name = name
        self.max_size = max_size  # physical pixels; a larger framebuffer is refused
        self.refused: str | None = None
        self._password = password
        self._lock = threading.Lock()
        self._changed = threading.Condition(threading.Lock())
        self._client: _LiveClient | None = None
        self._shared: Frame | None = None  # the copy of the screen at its version (see latest)
        self._version = 0  # counts updates that painted something
        self._updates = 0  # counts every update message
        self._last_change = 0.0
        self._origin_seen = 0  # the update count at which pixel (0, 0) was last sent
        self._watchers = 0  # waits and recordings that want every change as it happens
        self._connected = False

    # -- connection -------------------------------------------------------------------------
    def connect(self, timeout: float = 10.0) -> None:
        """Open the connection and wait for the first full frame."""
        if _Fork.inherited_reactor:
            raise ForkedProcess(f"{self.name}: this process was forked from one that already held frames of a "
                             "desktop, and a forked child cannot run their event loop; start it with "
                             "multiprocessing's 'spawn' method (e.g. AsyncVectorEnv(..., context='spawn'))")
        # Each connection gets its own factory, which binds its client to this framebuffer.
        client_class = _LiveClient if isinstance(self.source, str) else _ExecLiveClient
        factory = type("BoundLiveFactory", (_LiveFactory,), {"live": self, "protocol": client_class})()
        factory.password = self._password
        stream = None if isinstance(self.source, str) else self._open_exec(self.source)
        done, abandoned = threading.Event(), threading.Event()
        outcome: list[object] = []

        def made(protocol: _LiveClient) -> _LiveClient:
            outcome.append(protocol)
            done.set()
            if abandoned.is_set():  # came after the wait gave up: not kept
                protocol.transport.loseConnection()
            return protocol

        def failed(reason) -> None:  # type: ignore[no-untyped-def]
            outcome.append(reason.value)
            done.set()

        _start_reactor()
        reactor.callFromThread(factory.deferred.addCallbacks, made, failed)
        if stream is not None:
            reactor.callFromThread(_adopt, stream, factory)
        else:
            assert isinstance(self.source, str)
            family, host, port = parse_server(self.source)
            reactor.callFromThread(factory_connect, factory, host, port, family)
        if not done.wait(timeout):
            abandoned.set()
            if outcome and isinstance(outcome[0], _LiveClient):  # made it between the two lines above
                reactor.callFromThread(outcome[0].transport.loseConnection)
            raise DesktopTimeout(f"{self.name}: no VNC handshake within {timeout:g} s")
        if isinstance(outcome[0], AuthenticationError):
            raise PasswordRefused(f"{self.name}: the VNC server refused the password ({outcome[0]})")
        if self.refused:
            raise VNCUnavailable(self.refused)
        if not isinstance(outcome[0], _LiveClient):
            raise VNCUnavailable(f"{self.name}: VNC connection failed: {outcome[0]}")
        client = self._client = outcome[0]
        self._connected = True
        try:
            self._wait(lambda: client.screen is not None, timeout, "the first frame")
        except VdeskError:
            self.close()  # a retry opens a connection of its own
            raise

    def _open_exec(self, open_exec: OpenExec) -> ExecSocket:
        stream = open_exec()
        if not stream.plain:
            stream.close()
            raise VNCUnavailable(f"{self.name}: the engine's exec connection ({type(stream.sock).__name__}) cannot be "
                             "read by the event loop; reach the VNC server through a Tunnel's address instead")
        return stream

    def close(self) -> None:
        """Drop the connection (idempotent)."""
        client, self._client = self._client, None
        self._connected = False
        if client is not None and client.transport is not None:
            reactor.callFromThread(client.transport.loseConnection)

    @property
    def connected(self) -> bool:
        return self._connected

    # -- frames -----------------------------------------------------------------------------
    def latest(self) -> Frame:
        """The screen as last pulled (by a fresh frame, a wait or a recording): no round trip.

        One copy of the screen is made per version and handed to every caller until the next
        change (a step's receipt, its settle and its screenshot share it): never draw on a
        frame's image, copy it first (:meth:`~vdesk.screen.DesktopScreen.shot` hands out copies).
        """
        client = self._require()
        version = self._version  # read first: the copy is at least this new
        shared = self._shared
        if shared is not None and shared.version == version:
            return shared
        with self._lock:
            assert client.screen is not None
            image = client.screen.copy()
        self._shared = Frame(image, version)
        return self._shared

    def fresh(self, timeout: float = 5.0) -> Frame:
        """The screen including every change the server knew of when asked: one round trip.
        The very frame of the last call when nothing was painted since."""
        self.sync(timeout)
        return self.latest()

    def sync(self, timeout: float = 5.0) -> None:
        """Pull every change the server has accumulated; return once it arrived.

        The whole screen is asked for incrementally (the changes) and pixel (0, 0)
        non-incrementally (so the server answers at once even when nothing changed); the two
        requests merge into one update. A request the server folds into an update already
        under way goes unanswered, so both are repeated every 250 ms until ``timeout``.
        """
        client = self._require()
        deadline = time.monotonic() + timeout
        while True:
            before = self._updates
            reactor.callFromThread(_ask_for_changes, client)
            remaining = deadline - time.monotonic()
            try:
                self._wait(lambda: self._origin_seen > before, min(0.25, max(remaining, 0.01)), "a fresh frame")
                return
            except DesktopTimeout:
                if time.monotonic() >= deadline:
                    raise DesktopTimeout(f"{self.name}: no fresh frame within {timeout:g} s") from None

    def wait_until_settled(self, quiet: float = 0.03, timeout: float = 10.0) -> Frame:
        """Return once the screen has not changed for ``quiet`` seconds; :class:`DesktopTimeout`
        when it kept changing for ``timeout``.

        The quiet period counts from this call at the earliest: a program still reacting to
        the last input (it has not drawn yet) is not mistaken for calm. Changes stream in
        meanwhile; the server is asked for what it holds only once the screen should have been
        calm for ``quiet``, so a screen that holds still costs one round trip.
        """
        frame, unsettled = self._settle(quiet, timeout)
        if unsettled is not None:
            raise DesktopTimeout(unsettled)
        return frame

    def settle(self, quiet: float, timeout: float) -> tuple[Frame, bool]:
        """As :meth:`wait_until_settled`, but a screen that kept changing for ``timeout`` (a
        video, a spinner) is no error: its frame at that moment comes back with False. Returns
        within ``timeout`` and one round trip."""
        frame, unsettled = self._settle(quiet, timeout)
        return frame, unsettled is None

    def _settle(self, quiet: float, timeout: float) -> tuple[Frame, str | None]:
        """The frame once calm and None, or the frame at ``timeout`` and what was seen."""
        started = time.monotonic()
        deadline = started + timeout
        first_version = self._version
        with self.watching():
            while True:
                calm_since = max(self._last_change, started)
                time.sleep(max(0.0, min(calm_since + quiet, deadline) - time.monotonic()))
                try:
                    self.sync(max(0.1, deadline - time.monotonic()))
                except DesktopTimeout:  # a server busy painting a changing screen answers late
                    return self.latest(), f"{self.name}: the screen was still being painted at {timeout:g} s"
                now = time.monotonic()
                if now - max(self._last_change, started) >= quiet:
                    return self.latest(), None
                if now >= deadline:
                    return self.latest(), (
                        f"{self.name}: the screen kept changing for {timeout:g} s "
                        f"({self._version - first_version} updates, last {(now - self._last_change) * 1000:.0f} ms ago)")

    def wait_for_change(self, region: Box | None = None, timeout: float = 10.0,
                        differs: Callable[[Frame], bool] | None = None) -> Frame:
        """Return the first frame that differs from the current one (within ``region``, physical
        pixels), or the first for which ``differs`` says so — the current one included, which is
        how a caller compares with a frame from before it acted and misses no change."""
        with self.watching():
            return self._first_change(region, timeout, differs)

    def _first_change(self, region: Box | None, timeout: float, differs: Callable[[Frame], bool] | None) -> Frame:
        start = self.fresh(timeout)
        crop = Box.of(region, "physical").pixels() if region is not None else None
        if differs is None:
            from_start = image_differs(start.image, crop)

            def differs(frame: Frame) -> bool:
                return from_start(frame.image)
        elif differs(start):
            return start
        deadline = time.monotonic() + timeout
        seen = start.version
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                where = f"in region {crop}" if crop else "anywhere on screen"
                raise DesktopTimeout(f"{self.name}: nothing changed {where} within {timeout:g} s")
            with self._changed:
                self._changed.wait_for(lambda: self._version > seen or not self._connected, remaining)
            self._require()
            frame = self.latest()
            seen = frame.version
            if differs(frame):
                return frame

    def next_change(self, after_version: int, timeout: float) -> Frame | None:
        """The frame once an update after ``after_version`` painted something, or None after
        ``timeout``; call it inside :meth:`watching`, else nothing is pulled meanwhile."""
        with self._changed:
            self._changed.wait_for(lambda: self._version > after_version or not self._connected, timeout)
        self._require()
        frame = self.latest()
        return frame if frame.version > after_version else None

    @contextmanager
    def watching(self) -> Iterator[None]:
        """Stream every change while inside: one update request is kept outstanding. Outside,
        nothing is pulled until a frame is asked for."""
        client = self._require()
        with self._changed:
            self._watchers += 1
            first = self._watchers == 1
        if first:
            reactor.callFromThread(client.framebufferUpdateRequest, incremental=True)
        try:
            yield
        finally:
            with self._changed:
                self._watchers -= 1

    # -- called from the reactor thread -----------------------------------------------------
    def _on_update(self, rectangles: list[tuple[int, int, int, int]], changed: bool) -> None:
        with self._changed:
            self._updates += 1
            if changed:
                self._version += 1
                self._last_change = time.monotonic()
            if any(x == 0 and y == 0 and w > 0 and h > 0 for x, y, w, h in rectangles):
                self._origin_seen = self._updates
            self._changed.notify_all()

    def _on_lost(self) -> None:
        with self._changed:
            self._connected = False
            self._changed.notify_all()

    # -- helpers ----------------------------------------------------------------------------
    def _require(self) -> _LiveClient:
        if not self._connected or self._client is None:
            raise DesktopGone(f"{self.name}: the VNC connection is closed")
        return self._client

    def _wait(self, condition, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
        with self._changed:
            ok = self._changed.wait_for(lambda: condition() or not self._connected, timeout)
        if not self._connected:
            if self.refused:
                raise VNCUnavailable(self.refused)
            raise DesktopGone(f"{self.name}: the VNC connection closed while waiting for {what}")
        if not ok:
            raise DesktopTimeout(f"{self.name}: no {what} within {timeout:g} s")


def image_differs(reference: Image.Image, crop: tuple[int, int, int, int] | None) -> Callable[[Image.Image], bool]:
    """Whether an image differs from ``reference`` within ``crop`` (all of it when None); the
    reference's pixels are read once, not at every frame compared with them."""
    expected = (reference.crop(crop) if crop else reference).tobytes()
    return lambda image: (image.crop(crop) if crop else image).tobytes() != expected


def changed_regions(before: Image.Image, after: Image.Image) -> list[Box]:
    """The regions where two frames of one size differ, largest first: each the exact box of
    the changed pixels of a group of touching ``CHANGE_TILE``-pixel tiles (so a menu and a
    caret far from it are two regions); more than ``MAX_REGIONS`` become one box around all.
    Empty when the frames are equal. Boxes of the frames' pixels (physical ones for a desktop's)."""
    difference = ImageChops.difference(before, after)
    whole = difference.getbbox()
    if whole is None:
        return []
    # The rest looks only inside the box around every change (a terminal's worth of a busy
    # screen, not all of it), its corners on the tile grid so that the tiles are the screen's;
    # what a corner rounded up adds past the screen's edge is zeros: no difference.
    x0, y0 = whole[0] - whole[0] % CHANGE_TILE, whole[1] - whole[1] % CHANGE_TILE
    x1, y1 = (-(-edge // CHANGE_TILE) * CHANGE_TILE for edge in whole[2:])
    difference = difference.crop((x0, y0, x1, y1))
    # One channel that is non-zero wherever any channel differs, then one cell per tile.
    red, green, blue = difference.convert("RGB").split()
    mask = ImageChops.lighter(ImageChops.lighter(red, green), blue).point(lambda v: 255 if v else 0)
    columns, rows = -(-mask.width // CHANGE_TILE), -(-mask.height // CHANGE_TILE)
    tiles = mask.resize((columns, rows), Image.Resampling.BOX, reducing_gap=None).load()
    assert tiles is not None
    regions = []
    for group in _touching({(x, y) for y in range(rows) for x in range(columns) if tiles[x, y]}):
        left, top = min(x for x, _ in group) * CHANGE_TILE, min(y for _, y in group) * CHANGE_TILE
        right = min((max(x for x, _ in group) + 1) * CHANGE_TILE, mask.width)
        bottom = min((max(y for _, y in group) + 1) * CHANGE_TILE, mask.height)
        exact = mask.crop((left, top, right, bottom)).getbbox()
        if exact is not None:
            regions.append(Box(x0 + left + exact[0], y0 + top + exact[1], x0 + left + exact[2], y0 + top + exact[3],
                               "physical"))
    if not regions or len(regions) > MAX_REGIONS:
        return [Box(*whole, space="physical")]
    return sorted(regions, key=lambda r: r.width * r.height, reverse=True)


def _touching(cells: set[tuple[int, int]]) -> list[set[tuple[int, int]]]:
    """The groups of cells that touch (diagonals too)."""
    groups = []
    while cells:
        group, todo = set(), [cells.pop()]
        while todo:
            x, y = todo.pop()
            group.add((x, y))
            for neighbour in ((x + dx, y + dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1)):
                if neighbour in cells:
                    cells.remove(neighbour)
                    todo.append(neighbour)
        groups.append(group)
    return groups

"""Desktop: one sandboxed Linux desktop in a container, from ``up`` to ``down``.

    with Desktop.up(size=(1280, 800)) as desktop:
        desktop.execute([{"type": "click", "inputs": {"point": {"raw": {"x": 10, "y": 10}}}}])
        desktop.screenshot().save("shot.png")

A desktop owns its container, a held VNC connection (frames), a persistent exec channel
(commands), an X connection (windows, keymap, pointer and key input) and, when started from
Python, a lease: if this process dies in any way, the
container stops and removes itself. How the container is started is :mod:`vdesk.container`;
the desktops on an engine are :mod:`vdesk.inventory`; what a batch of actions turns into is
:mod:`vdesk.plan`, which :meth:`Desktop.execute` runs.
"""

from __future__ import annotations

import functools
import itertools
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import docker
import docker.errors
from docker.models.containers import Container
from PIL import Image
from Xlib.display import Display as XDisplay

from vdesk import engine as engines, forks, images as desktop_image, video
from vdesk.accessibility import marks as set_of_marks, text as text_on_screen
from vdesk.accessibility.text import Pattern as TextPattern, TextBox, TextLine
from vdesk.accessibility.tree import (Limits as TreeLimits, Node, Tree, describe_query, mark_covered, TreeReader,
                                      silent_windows)
from vdesk.actions import Batch, BaseAction, Coordinates, ElementQuery, ExecuteResult, Receipt, parse_batch
from vdesk.channel import OUTPUT_LIMIT, Channel, Completed
from vdesk.clipboard import Clipboard
from vdesk.clock import ClockSettings
from vdesk.container import (VNC_TARGET, RunOptions, check_name, last_log, published_port, remove_container,
                             run_container, stop_reason)
from vdesk.coords import Box, ImageSpace, Screen
from vdesk.errors import ChannelLost, CommandFailed, DesktopGone, ForkedProcess, DesktopTimeout, InvalidAction, InvalidArgument, VdeskError
from vdesk.execstream import plain_sockets, start_exec
from vdesk.files import Files
from vdesk.forks import Checkpoint
from vdesk.interrupts import Interrupted, SignalGuard
from vdesk.inventory import DesktopInfo, desktop_info, find_desktop
from vdesk.keymap import ScratchKeymap, XKeyboardMapping
from vdesk.lease import Lease
from vdesk.plan import Input, Mark, Sleep, Step, TypeText, chained, plan
from vdesk.progress import Progress
from vdesk.spec import DEFAULT_SIZE, DesktopSpec, Limits, Network, parse_size
from vdesk.tunnel import Tunnel
from vdesk.windows import Windows
from vdesk.xconn import XConnection, open_display
from vdesk.xtest import XTest

if TYPE_CHECKING:  # imported on first use: the VNC client library takes ~0.3 s to load, Playwright more
    from vdesk.browser import Browser
    from vdesk.frames import Frame, LiveFramebuffer, OpenExec

WM_PROBE_TITLE = "vdesk-window-manager-probe"
WM_READY_TIMEOUT = 120.0  # openbox can take many seconds to manage its first window on a busy machine
WM_PROBE_PATIENCE = 30.0  # the longest one probe window is given (a loaded machine starts and frames it slowly)
XDOTOOL_TIMEOUT = 30.0  # one xdotool invocation (typing, keys XTEST does not take)
SETTLE_QUIET = 0.03  # seconds the screen must hold still after a batch run with settle=True
SETTLE_TIMEOUT = 1.0  # seconds settle=True waits at most: a screen still changing then is taken as it is
TYPED_TREE_TIMEOUT = 3.0  # seconds for the tree a typing receipt reads
TEXT_PROGRESS_EVERY = 2.0  # seconds between progress lines of a text wait
SESSION_READY_LABEL = "vdesk.session-ready"  # an image's label: the file its session makes once it is up
FORKS_AT_ONCE = 8  # forks started in parallel; more only queue in the engine on a small machine


class _Forking:
    """``fork`` on a desktop (checkpoint it, fork that) and on the class (fork a checkpoint)."""

    def __get__(self, desktop: Desktop | None, owner: type[Desktop]) -> Callable[..., list[Desktop]]:
        return owner._fork_checkpoint if desktop is None else desktop._fork_self


class Desktop:
    """A running desktop. Create with :meth:`up` or :meth:`attach`; release with :meth:`down`."""

    def __init__(self, client: docker.DockerClient, container: Container, password: str | None,
                 screen: Screen, *, owned: bool, lease: Lease | None = None) -> None:
        self.client = client
        self.container = container
        self.name: str = container.name
        self.id: str = container.id
        self._password = password
        self._view_password: str | None = None
        self._window_manager_ready = False
        self.screen = screen
        self._owned = owned
        self._lease = lease
        self.channel = Channel(client.api, container.id, self.name)
        self.clipboard = Clipboard(self.channel)
        self.files = Files(client.api, container.id, self.name, self.channel)
        self.clock = ClockSettings.from_labels(container.labels or {})
        self._x = XConnection(lambda: self._guard(self.x_display), self.name)
        self._windows = Windows(self._x)
        self.keymap = ScratchKeymap(XKeyboardMapping(self._x))
        self._input = XTest(self._x, self._xdotool)
        self._vnc_tunnel: Tunnel | None = None
        self._frames: LiveFramebuffer | None = None
        self._browser: Browser | None = None  # made on first use
        self._marks: set_of_marks.Marks | None = None  # the last marks(), which element numbers name
        self._tree_reader = TreeReader(client.api, container.id, self.name)
        self._tree_readable: bool | None = None  # None: not tried yet (receipts of typing read it)
        self._receipt_before: Frame | None = None  # the frame before the last batch, for receipt()
        self._still_frame: tuple[Any, Frame] | None = None  # (its connection, the frame) of _current_frame
        self._closed = False

    # -- lifecycle ----------------------------------------------------------------------------
    @classmethod
    def up(cls, size: tuple[int, int] | DesktopSpec = DEFAULT_SIZE, *, scale: float | None = None,
           name: str | None = None, image: str | None = None, engine: str | None = None,
           network: Network | None = None, ttl: float | None = None, lease: bool = True,
           limits: Limits | None = None, timeout: float = 30.0,
           environment: dict[str, str] | None = None, clock: str | datetime | None = None,
           announce: Callable[[Desktop], None] | None = None) -> Desktop:
        """Start a desktop and return once X answers and the first VNC frame arrived (on the
        apps image, once its session and taskbar are up too).

        What desktop is a :class:`~vdesk.spec.DesktopSpec`, given whole
        (``Desktop.up(DesktopSpec(size=(1024, 768), image="apps"))``) or as its keywords
        (``Desktop.up((1024, 768), image="apps")``), not both; what a keyword left out means
        is the spec's default. ``image`` is ``"lean"`` (xterm and openbox, the default),
        ``"apps"`` (a browser, an office suite and more), ``"osworld"`` (the apps plus what
        OSWorld's tasks assume, see :mod:`vdesk.images`) or a Docker image name.
        ``network="none"`` (the default) gives it no network at all. ``ttl`` (seconds) stops it
        after that long regardless. ``clock`` (``"2026-01-01 00:00:00"``, UTC) sets the time
        every program in the desktop sees at the start; it runs on from there (needs an image
        with libfaketime: the apps image; see :mod:`vdesk.clock`). A bad setting or name raises
        :class:`InvalidArgument` before any container starts.

        ``lease=True`` (the default) ties the desktop to this process: it is removed when the
        process ends, however it ends. ``announce(desktop)`` runs once it is up; until it (or,
        without it, this method) returns, Ctrl-C or SIGTERM at any moment removes the desktop
        again: it is either up and announced, or gone.
        """
        keywords = {key: value for key, value in dict(scale=scale, image=image, network=network, ttl=ttl,
                                                     limits=limits, environment=environment, clock=clock).items()
                    if value is not None}
        if isinstance(size, DesktopSpec):
            if keywords:
                raise InvalidArgument(f"give the desktop's settings as a DesktopSpec or as keywords, not both "
                                      f"(got {', '.join(keywords)} beside a DesktopSpec)")
            spec = size
        else:
            spec = DesktopSpec(size=size, **keywords)
        options = RunOptions(name=name or f"vdesk-{secrets.token_hex(4)}", spec=spec, leased=lease,
                             password=secrets.token_urlsafe(12)[:8])  # VNC authentication uses at most 8 characters
        start = spec.start_time()
        client = engines.connect(engine)
        image_name = desktop_image.ensure(client, spec.image_name, source=_local_engine() if engine else None)
        image_labels = client.images.get(image_name).labels or {}
        if start is not None:
            options = replace(options, clock=ClockSettings.starting(start, image_name, image_labels))
        with SignalGuard() as guard:  # held while it is created, removed, announced
            container = run_container(client, image_name, options)
            desktop: Desktop | None = None
            try:
                desktop = cls(client, container, options.password, options.screen, owned=True)
                ready_file = image_labels.get(SESSION_READY_LABEL)
                with guard.armed():  # waits that Ctrl-C may cut short
                    if ready_file:  # the session is asked after: its channel starts meanwhile
                        desktop.channel.start()
                    if lease:
                        desktop._lease = _take_lease(client, container, timeout)
                    desktop._connect_frames(timeout)
                    if ready_file:
                        desktop._wait_for_session(ready_file, timeout)
                if announce is not None:
                    announce(desktop)
                elif guard.pending is not None:  # the caller will never see it
                    raise Interrupted(guard.pending)
            except BaseException:
                desktop.down() if desktop is not None else remove_container(container)
                raise
        return desktop

    @classmethod
    def attach(cls, name: str, *, engine: str | None = None, timeout: float = 10.0) -> Desktop:
        """Drive a desktop started elsewhere (e.g. by ``vdesk up``). Leaving a ``with`` block
        of an attached desktop only disconnects; :meth:`down` still removes it."""
        check_name(name)
        client = engines.connect(engine)
        container = find_desktop(client, name)
        if container.status != "running":
            raise DesktopGone(f"desktop {name} is {container.status}, not running")
        labels = container.labels
        screen = Screen(*parse_size(labels["vdesk.size"]), float(labels.get("vdesk.scale", "1")))
        return cls(client, container, None, screen, owned=False)

    # -- checkpoints and forks (see vdesk.forks) ------------------------------------------------
    def checkpoint(self, name: str | None = None) -> Checkpoint:
        """Save the desktop as it is now (screen, programs, files in /tmp and the home) without
        stopping it: a :class:`~vdesk.forks.Checkpoint` to :meth:`fork` or :meth:`restore` from.
        vdesk's own VNC and X connections are closed for the dump and open again on next use.
        Raises :class:`~vdesk.errors.CheckpointUnavailable` on an engine that cannot (it says
        what is missing). Costs runc's dump: about 0.3 s for a lean desktop, 0.65 s for 430 MB of
        programs, on an idle 2-core machine."""
        if self._closed:
            raise DesktopGone(f"desktop {self.name} is closed")
        forks.docker_root(self.client)  # an engine that cannot checkpoint: nothing disconnected
        password = self.vnc_password  # read before the dump when attached: the channel is one more connection
        self._disconnect()
        return self._guard(lambda: forks.take(self.client, self.container, name, password))

    fork = _Forking()
    """``desktop.fork(n=1)`` checkpoints this desktop and starts ``n`` forks of it (the checkpoint
    stays, for more forks, until removed or pruned); ``Desktop.fork(checkpoint, n=1)`` starts ``n``
    forks of a checkpoint. See :meth:`_fork_checkpoint`."""

    @classmethod
    def _fork_checkpoint(cls, checkpoint: Checkpoint | str, n: int = 1, *, names: list[str] | None = None,
                         lease: bool = True, ttl: float | None = None, engine: str | None = None,
                         timeout: float = 30.0) -> list[Desktop]:
        """``n`` new desktops started from ``checkpoint`` (a Checkpoint or its name), at once: each
        its own container (named ``names`` or ``<source>-f<random>``) with the checkpoint's
        screen, programs, options and hardening, but its own VNC password, lease and ``ttl``.
        Each returns once its first frame arrived. If one fails, none is left running."""
        client = engines.connect(engine)
        if isinstance(checkpoint, str):
            checkpoint = forks.load(client, checkpoint)
        return cls._forks_on(client, checkpoint, forks.fork_names(checkpoint.source, n, names), lease, ttl, timeout)

    def _fork_self(self, n: int = 1, *, names: list[str] | None = None, lease: bool = True,
                   ttl: float | None = None, timeout: float = 30.0) -> list[Desktop]:
        chosen = forks.fork_names(self.name, n, names)  # checked before anything is dumped
        return self._forks_on(self.client, self.checkpoint(), chosen, lease, ttl, timeout)

    @classmethod
    def _forks_on(cls, client: docker.DockerClient, checkpoint: Checkpoint, names: list[str], lease: bool,
                  ttl: float | None, timeout: float) -> list[Desktop]:
        made: list[Desktop] = []
        failed: list[BaseException] = []
        with ThreadPoolExecutor(max_workers=min(len(names), FORKS_AT_ONCE)) as pool:
            futures = [pool.submit(cls._start_fork, client, checkpoint, name, lease, ttl, timeout) for name in names]
            for future in futures:
                try:
                    made.append(future.result())
                except BaseException as error:  # the others are waited for, then removed
                    failed.append(error)
        if failed:
            for desktop in made:
                desktop.down()
            raise failed[0]
        return made

    @classmethod
    def _start_fork(cls, client: docker.DockerClient, checkpoint: Checkpoint, name: str, lease: bool,
                    ttl: float | None, timeout: float) -> Desktop:
        desktop = cls.__new__(cls)
        desktop._become_fork(client, checkpoint, name, lease, ttl, timeout, owned=True)
        return desktop

    def _become_fork(self, client: docker.DockerClient, checkpoint: Checkpoint, name: str, lease: bool,
                     ttl: float | None, timeout: float, *, owned: bool) -> None:
        """Start a container from ``checkpoint`` and make this object drive it."""
        password = secrets.token_urlsafe(12)[:8]
        options = checkpoint.run_options(name, password, leased=lease, ttl=ttl)
        container = forks.start(client, checkpoint, options)
        Desktop.__init__(self, client, container, password, options.screen, owned=owned)
        try:
            self._resume(forks.source_password(client, checkpoint), lease, ttl, timeout)
        except BaseException:
            self.down()
            raise

    def _resume(self, first_password: str | None, lease: bool, ttl: float | None, timeout: float) -> None:
        """A restored desktop made its own: lease, password, time-to-live, first frame. Each is an
        exec of its own (~0.1-0.3 s), so they run side by side: the frames connect with
        ``first_password`` (the checkpointed desktop's, which the fork accepts until its own is
        written) while the new password is written, and again with the new one if they lost
        that race."""
        with ThreadPoolExecutor(max_workers=2) as pool:
            leasing = pool.submit(_take_lease, self.client, self.container, timeout) if lease else None
            framing = pool.submit(self._connect_frames, timeout, first_password) if first_password else None
            try:
                view_password = secrets.token_hex(4)
                password = self._password
                assert password is not None  # a fork is made with one
                self._guard(lambda: forks.reset(self.client.api, self.container, password, view_password, ttl, timeout))
                self._view_password = view_password
                self._window_manager_ready = True  # it ran at the checkpoint, and runs on
                if framing is None or not _connected(framing):
                    if self._frames is not None:
                        self._frames.close()
                    self._connect_frames(timeout)
            finally:
                if framing is not None:
                    _connected(framing)  # done either way before this object is used or closed
                if leasing is not None:
                    self._lease = leasing.result()  # held (and so released by down()) even when the rest failed

    def restore(self, checkpoint: Checkpoint | str, *, timeout: float = 30.0) -> None:
        """Put this desktop back to ``checkpoint`` (a Checkpoint or its name): its container is
        replaced by one of the same name, lease and time-to-live started from the checkpoint, with
        a new VNC password; this object drives the new one. What ran since is gone."""
        if self._closed:
            raise DesktopGone(f"desktop {self.name} is closed")
        if isinstance(checkpoint, str):
            checkpoint = forks.load(self.client, checkpoint)
        forks.docker_root(self.client)  # an engine that cannot: the desktop stays as it is
        leased, ttl, owned = self._lease is not None, forks.remaining_ttl(self.container), self._owned
        remove_container(self.container)  # first: a released lease would stop and remove it meanwhile
        self.close()
        self._become_fork(self.client, checkpoint, self.name, leased, ttl, timeout, owned=owned)

    def _disconnect(self) -> None:
        """Close the connections a checkpoint cannot take along (CRIU refuses sockets to outside
        the container); each opens again on next use."""
        for part in (self._browser, self._frames, self._vnc_tunnel):
            if part is not None:
                part.close()
        self._browser, self._frames, self._vnc_tunnel, self._still_frame = None, None, None, None
        self._x.disconnect()
        self._tree_reader.close()

    def close(self) -> None:
        """Disconnect from the desktop (frames, channel, tunnels) and let go of its lease."""
        if self._closed:
            return
        self._closed = True
        for part in (self._browser, self._frames, self._vnc_tunnel, self._x, self._tree_reader, self.channel):
            if part is not None:
                part.close()
        if self._lease is not None:
            self._lease.release()

    def down(self) -> None:
        """Remove the desktop's container (idempotent) and disconnect."""
        self.close()
        remove_container(self.container)

    def __enter__(self) -> Desktop:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.down() if self._owned else self.close()

    def __repr__(self) -> str:
        return f"<Desktop {self.name} {self.screen.width}x{self.screen.height}@{self.screen.scale:g}>"

    # -- state --------------------------------------------------------------------------------
    @property
    def vnc_password(self) -> str:
        """The desktop's VNC password (random per desktop)."""
        if self._password is None:  # attached: read it from the desktop itself
            argv = ["cat", "/tmp/vdesk/vnc-password"]
            self._password = self._guard(lambda: self.channel.run(argv, timeout=5).check().stdout.strip())
        return self._password

    @property
    def vnc_view_password(self) -> str:
        """A second VNC password of the desktop: a viewer that gives it only watches (the VNC
        server drops its keys and clicks)."""
        if self._view_password is None:
            argv = ["cat", "/tmp/vdesk/vnc-view-password"]
            self._view_password = self._guard(lambda: self.channel.run(argv, timeout=5).check().stdout.strip())
        return self._view_password

    @property
    def frames(self) -> LiveFramebuffer:
        """The held VNC connection, opened on first use and reopened if it dropped."""
        if self._closed:
            raise DesktopGone(f"desktop {self.name} is closed")
        if self._frames is None:
            self._connect_frames(timeout=10.0)
        elif not self._frames.connected:
            self._reconnect_frames()
        assert self._frames is not None
        return self._frames

    @property
    def windows(self) -> Windows:
        """Window queries (list, find, wait_for, focus) over a direct X connection."""
        if self._closed:
            raise DesktopGone(f"desktop {self.name} is closed")
        return self._windows

    @property
    def browser(self) -> Browser:
        """The desktop's Chromium (apps image), read and driven over CDP: a
        :class:`vdesk.browser.Browser`, started and connected on first use, closed with the desktop."""
        if self._closed:
            raise DesktopGone(f"desktop {self.name} is closed")
        if self._browser is None:
            from vdesk.browser import Browser  # Playwright is loaded only by desktops that use it

            self._browser = Browser(self)
        return self._browser

    def x_display(self) -> tuple[XDisplay, Tunnel]:
        """A new python-xlib connection to the desktop's X server; the caller closes both."""
        return open_display(self.client.api, self.id)

    @property
    def vnc_address(self) -> str:
        """Where a VNC viewer reaches this desktop from this machine: a published
        ``127.0.0.1::PORT`` (bridge network) or this process's private tunnel socket."""
        published = published_port(self.container)
        if not published and self.container.attrs.get("HostConfig", {}).get("PortBindings"):
            self.container.reload()  # ports are assigned on start, after `run` read the attributes
            published = published_port(self.container)
        if published:
            return f"127.0.0.1::{published}"
        return self._private_vnc_tunnel().address

    def _private_vnc_tunnel(self) -> Tunnel:
        if self._vnc_tunnel is None:
            self._vnc_tunnel = Tunnel(self.client.api, self.id, VNC_TARGET)
        return self._vnc_tunnel

    def forward_vnc(self, port: int = 0) -> Tunnel:
        """A tunnel from ``127.0.0.1:port`` on this machine (0: a free port) to the desktop's
        VNC server, for a viewer; the server still asks for :attr:`vnc_password`. Close it."""
        return Tunnel(self.client.api, self.id, VNC_TARGET, tcp_port=port)

    def info(self) -> DesktopInfo:
        self.container.reload()
        return desktop_info(self.container)

    def is_alive(self) -> bool:
        try:
            self.container.reload()
        except docker.errors.NotFound:
            return False
        return self.container.status == "running"

    # -- frames -------------------------------------------------------------------------------
    def screenshot(self, size: tuple[int, int] | ImageSpace | None = None, *, fresh: bool = True) -> Image.Image:
        """The screen as an RGB image at the logical size (or resized to ``size``).

        ``fresh=True`` includes every change the VNC server has seen (one round trip);
        ``fresh=False`` returns the last received frame at no cost.
        """
        frame = self._with_frames(lambda frames: frames.fresh() if fresh else frames.latest())
        return self.to_image(frame.image, size)

    def to_image(self, physical: Image.Image, size: tuple[int, int] | ImageSpace | None = None) -> Image.Image:
        """A physical frame scaled to the logical size, or to ``size`` for a model: an image of
        the caller's own (frames are shared, see :meth:`LiveFramebuffer.latest`)."""
        scaled = self._scaled(physical, size)
        return scaled.copy() if scaled is physical else scaled

    def _scaled(self, physical: Image.Image, size: tuple[int, int] | ImageSpace | None = None) -> Image.Image:
        target = _image_space(size).size if size is not None else self.screen.size
        if physical.size == target:
            return physical
        return physical.resize(target, Image.Resampling.LANCZOS, reducing_gap=2.0)

    def wait_until_settled(self, quiet: float = 0.03, timeout: float = 10.0) -> Image.Image:
        """Return the screen once it has not changed for ``quiet`` seconds."""
        return self.to_image(self._with_frames(lambda frames: frames.wait_until_settled(quiet, timeout)).image)

    def settle(self, quiet: float = 0.03, timeout: float = 10.0) -> None:
        """Wait until the screen has not changed for ``quiet`` seconds, for ``timeout`` at most:
        a screen that never stops changing (a video, a spinner) is taken as it is."""
        try:
            self.wait_until_settled(quiet, timeout)
        except DesktopTimeout:
            pass

    def wait_for_change(self, region: Box | Sequence[float] | None = None, timeout: float = 10.0) -> Image.Image:
        """Return the first frame that differs from the current one, within ``region``
        (a logical Box, or (left, top, right, bottom) in logical pixels) if given."""
        physical = Box.of(region).physical(self.screen.scale) if region else None
        frame = self._with_frames(lambda frames: frames.wait_for_change(physical, timeout))
        return self.to_image(frame.image)

    # -- text on screen (see vdesk.accessibility.text) -----------------------------------------
    def read_text(self, region: Box | Sequence[int] | None = None) -> list[TextLine]:
        """The lines of text on the screen now (OCR of a fresh frame), within ``region``
        (logical pixels: left, top, right, bottom) if given; bounds in logical pixels."""
        frame = self._with_frames(lambda frames: frames.fresh())
        return text_on_screen.read(frame.image, scale=self.screen.scale, region=region)

    def find_text(self, pattern: TextPattern, region: Box | Sequence[int] | None = None) -> list[TextBox]:
        """The boxes where text matching ``pattern`` is on the screen now, top to bottom.

        ``pattern`` is a plain string (matched literally, any whitespace standing for any) or a
        compiled regex; a match may span the words of a line. An empty list when it is not there.
        """
        text_on_screen.compile_pattern(pattern)  # a bad pattern fails before any frame is read
        return text_on_screen.find(self.read_text(region), pattern)

    def wait_for_text(self, pattern: TextPattern, *, region: Box | Sequence[int] | None = None, timeout: float = 10.0,
                      progress: Progress | None = None) -> list[TextBox]:
        """Wait until text matching ``pattern`` (see :meth:`find_text`) is on screen; return its
        boxes. Each new frame of the live framebuffer is read as it comes (the newest one when
        several came during a read); ``progress`` hears how the wait goes every few seconds.
        Raises :class:`DesktopTimeout` naming the pattern and what was last read."""
        text_on_screen.compile_pattern(pattern)
        return self._guard(lambda: self._wait_for_text(pattern, region, timeout, progress))

    def _wait_for_text(self, pattern: TextPattern, region: Box | Sequence[int] | None, timeout: float,
                       progress: Progress | None) -> list[TextBox]:
        started = time.monotonic()
        deadline, told = started + timeout, started
        reads, lines = 0, []
        with self.frames.watching():
            frame: Frame | None = self.frames.fresh(timeout=max(1.0, timeout))
            while frame is not None:
                lines = text_on_screen.read(frame.image, scale=self.screen.scale, region=region)
                reads += 1
                if found := text_on_screen.find(lines, pattern):
                    return found
                now = time.monotonic()
                if progress is not None and now - told >= TEXT_PROGRESS_EVERY:
                    told = now
                    progress(f"{self.name}: waiting for text {text_on_screen.describe(pattern)}: "
                             f"{reads} frames read in {now - started:.0f} s")
                frame = self.frames.next_change(frame.version, deadline - now) if now < deadline else None
        seen = " | ".join(line.text for line in lines)
        seen = seen if len(seen) <= 160 else seen[:157] + "..."
        raise DesktopTimeout(f"desktop {self.name}: no text matching {text_on_screen.describe(pattern)} "
                             f"appeared within {timeout:g} s ({reads} frames read; the last said: {seen!r})")

    def record(self, path: str | Path, *, fps: float = video.DEFAULT_FPS,
               seconds: float | None = None) -> AbstractContextManager[video.Recording]:
        """Record the screen (logical size) into an MP4 at ``fps`` while inside the ``with``
        block, or ``seconds`` of video at most (``recording.wait()`` returns once they are
        written); the frames come from the held VNC connection (see :mod:`vdesk.video`)."""
        last: list[tuple[Frame, Image.Image]] = []  # the frame grabbed last, and its image at the logical size

        def grab() -> Image.Image:
            frame = self._with_frames(lambda frames: frames.fresh())
            if not last or frame is not last[0][0]:  # else the screen did not change: the same image again
                last[:] = [(frame, self._scaled(frame.image))]
            return last[0][1]

        return video.record(grab, path, size=self.screen.size, fps=fps, seconds=seconds)

    # -- programs and actions -----------------------------------------------------------------
    def run(self, argv: Sequence[str], *, wait: bool = False, timeout: float = 60.0,
            stdin: str | None = None, output_limit: int = OUTPUT_LIMIT, clock: bool = True) -> Completed:
        """Start ``argv`` in the desktop as the desktop user.

        By default it returns at once and the program keeps running, even after this process
        ends; with ``wait=True`` it waits (up to ``timeout``) and returns the exit code and the
        first ``output_limit`` bytes (default 1 MiB) of each output — ``result.cut`` and
        ``result.stdout_bytes`` say whether more came and how much. A waited command ends when
        this process does (or when the call is interrupted). With a desktop clock (see
        :mod:`vdesk.clock`) the program sees it; ``clock=False`` runs it on the real time.
        """
        argv = list(argv)
        if not argv or not all(isinstance(a, str) and a for a in argv):
            raise InvalidArgument("argv must be a non-empty list of non-empty strings")
        if not wait and not self._window_manager_ready:
            self.wait_for_window_manager()  # else a window the program maps may stay unmanaged
        command = argv
        if clock and self.clock is not None:  # the program and all it starts see the desktop's clock
            command = ["env", "--", *(f"{k}={v}" for k, v in self.clock.environment.items()), *argv]
        result = self._guard(lambda: self.channel.run(command, stdin=stdin, timeout=timeout, detach=not wait,
                                                      limit=output_limit))
        if wait and result.timed_out:
            cut = f"; {result.cut_note}" if result.cut else ""
            raise DesktopTimeout(f"desktop {self.name}: {argv[0]} did not finish within {timeout:g} s "
                                 f"(it was killed){cut}")
        if not wait and result.returncode != 0:
            result.check()
        return result

    # -- files (see vdesk.files for their bounds) ---------------------------------------------
    def upload(self, local: str | os.PathLike[str], remote: str) -> str:
        """Copy a local file or folder into the desktop (``docker cp`` semantics)."""
        return self._guard(lambda: self.files.upload(local, remote))

    def download(self, remote: str, local: str | os.PathLike[str]) -> Path:
        """Copy a file or folder out of the desktop, refusing what could escape ``local``."""
        return self._guard(lambda: self.files.download(remote, local))

    def read_file(self, path: str) -> bytes:
        """The bytes of a file in the desktop (at most :data:`vdesk.files.READ_LIMIT`)."""
        return self._guard(lambda: self.files.read_file(path))

    def write_file(self, path: str, data: bytes) -> None:
        """Write ``data`` to a file in the desktop (``~`` and ``/tmp`` are writable)."""
        self._guard(lambda: self.files.write_file(path, data))

    def wait_for_window_manager(self, timeout: float = WM_READY_TIMEOUT) -> None:
        """Return once the window manager manages new windows; :meth:`run` does this before the
        first program it starts.

        Openbox manages windows a second or so after the desktop answers, and a window mapped
        before that stays unmanaged for good (no frame, no focus, not listed). So a probe window
        is shown until one is managed, an unmanaged one replaced by a new one given longer each
        time (a busy machine makes the window manager slow), and the managed one closed again.
        """
        deadline = time.monotonic() + timeout
        patience = 0.5
        for attempt in itertools.count(1):
            title = f"{WM_PROBE_TITLE}-{attempt}"
            self._guard(lambda: self.channel.run(["xmessage", "-geometry", "+0+0", "-title", title, "-name", title, "."],
                                                 detach=True, timeout=10).check())
            try:
                probe = self.windows.wait_for(title, timeout=min(patience, max(0.1, deadline - time.monotonic())))
            except DesktopTimeout:
                if time.monotonic() >= deadline:
                    raise DesktopTimeout(f"desktop {self.name}: the window manager did not manage a window "
                                         f"within {timeout:g} s") from None
                patience = min(2 * patience, WM_PROBE_PATIENCE)
                continue
            finally:
                self._guard(lambda: self.channel.run(["pkill", "-f", title], timeout=10))
            # The next program may get the probe's window id: let the window manager finish with it.
            self.windows.wait_gone(probe, timeout=max(1.0, deadline - time.monotonic()))
            self._window_manager_ready = True
            return

    def execute(self, actions: Batch, *, image: ImageSpace | None = None, settle: bool = False,
                receipt: bool = True, cancel: threading.Event | None = None) -> ExecuteResult:
        """The one door for actions: validate the whole batch once (names, inputs, keys, every
        point against the screen), then run it in order as the planner chains it (pointer and
        keys over X, :mod:`vdesk.xtest`; typing through the channel), so a reply's actions go
        in one call and adjacent ones join into one burst.

        ``actions`` are BaseActions or their dicts, or the JSON of such a list; ``raw`` points
        are pixels of ``image`` (default: a screenshot at the logical size), and so are the
        receipt's regions. A malformed action fails the whole batch before anything runs. What
        goes wrong with the batch comes back as ``status="failed"``, never raised (a bad
        ``image`` is an :class:`InvalidArgument`). ``cancel``, once set, stops the batch between
        two chained bursts (``executed`` says how many actions ran; the result is failed).

        With ``settle=True`` it returns once the screen held still for ``SETTLE_QUIET`` after
        the last action, or after ``SETTLE_TIMEOUT`` (and a round trip) on a screen that never
        does: ``result.settled`` says which (a video, a spinner or a printing terminal never
        settle; the batch still succeeds).

        With ``receipt=True`` (the default) ``result.receipt`` says which regions of the screen
        differ between a fresh frame before the first action and a frame after the last (see
        :class:`~vdesk.actions.Receipt`). Without ``settle`` that is a fresh frame as soon as
        the X server has processed the batch, no waiting: where the X server says nothing was
        drawn, the frame last taken (one X round trip, :mod:`vdesk.damage`), else a round trip
        on the held VNC connection and a comparison, so a program still answering shows
        as ``outcome="unknown"`` and :meth:`receipt` reads the change later. With ``settle`` it
        is the settled frame, and "nothing changed" is ``unchanged``. With ``settle``, a batch
        that typed, where the accessibility tree is readable (the apps image), also reads the
        focused element's text (0.1-1.5 s with big programs open) before its frame is taken. Not
        by default: besides its cost, reading the tree of VLC's Qt dialog while it takes typed text
        ends VLC (its accessibility bridge crashes: seen 2 of 2, never with receipt=False).
        """
        started = time.perf_counter()
        image = _image_space(image) if image is not None else None
        try:
            batch = self._resolve_elements(parse_batch(actions))
            planned = plan(batch, self.screen, image)
        except (InvalidAction, CommandFailed, DesktopTimeout) as error:  # nothing ran (the tree could not be read)
            return ExecuteResult(status="failed", error_message=str(error))
        result = ExecuteResult()
        sends = any(not isinstance(step, Mark) for step in planned.steps)
        try:
            before = self._frame_before() if receipt and sends else None
            if sends:
                self._receipt_before = before  # a batch without a receipt leaves nothing to read later
            for step in self._run(planned.steps, cancel):
                result.executed = step.action + 1
                if isinstance(step, Mark) and step.kind == "finished":
                    result.finished, result.finished_content = True, step.content
                elif isinstance(step, Mark):
                    result.call_user = step.content or ""
            if result.executed < len(batch) and cancel is not None and cancel.is_set():
                result.status = "failed"
                result.error_message = f"cancelled after {result.executed} of {len(batch)} actions"
            typed = [step.text for step in planned.steps if isinstance(step, TypeText)]
            into_focus = self._typed_into_focus(typed[-1]) if settle and before is not None and typed else (None, None)
            if settle:
                after, result.settled = self._with_frames(lambda frames: frames.settle(SETTLE_QUIET, SETTLE_TIMEOUT))
            elif before is not None:
                after = self._frame_after()
            if before is not None:
                result.receipt = self._receipt(before, after, result.settled)
                result.receipt.typed, result.receipt.focused = into_focus
                if image is not None:
                    result.receipt = result.receipt.in_image(self.screen, image)
        except VdeskError as error:
            result.status, result.error_message = "failed", str(error)
        result.elapsed_ms = (time.perf_counter() - started) * 1000
        return result

    def receipt(self, *, wait: float = 0.0, image: ImageSpace | None = None) -> Receipt:
        """The last batch's receipt read now: its frame from before the batch against a fresh
        frame (one round trip), for a program that answers after :meth:`execute` returned.

        With ``wait`` (seconds) it waits that long at most for the screen to differ from before
        the batch, and returns at the first difference. It never waits for the screen to calm
        (``settled`` is None: ``changed`` or ``unknown``; ``typed`` is not read again). What
        changed since the batch for any reason counts. Raises :class:`InvalidArgument` when the
        last batch that sent something took no receipt (``receipt=False``) or there was none.
        ``image``: the regions in pixels of that image, as :meth:`execute` gives them.
        """
        if not (isinstance(wait, (int, float)) and not isinstance(wait, bool) and 0 <= wait <= 3600):
            raise InvalidArgument(f"wait must be between 0 and 3600 seconds, got {wait!r}")
        before = self._receipt_before
        if before is None:
            raise InvalidArgument("no receipt to read: the last batch ran with receipt=False, or none ran yet")
        after = self._with_frames(lambda frames: _first_difference(frames, before, wait))
        found = self._receipt(before, after, None)
        return found.in_image(self.screen, _image_space(image)) if image is not None else found

    # -- what is on screen, beyond pixels -----------------------------------------------------
    def accessibility_tree(self, limits: TreeLimits = TreeLimits(), *, apps: Sequence[str] = (),
                           strict: bool = False) -> Tree:
        """The accessibility tree of every application on the desktop (apps image), or of
        ``apps`` only, bounds in logical pixels; ``tree.silent`` lists the windows whose programs
        expose none, and an application that did not answer in time has ``error`` set (the
        others are complete). ``strict``: an application of ``apps`` not on the bus is an
        InvalidArgument naming those that are (else it is simply not in the tree).
        See :mod:`vdesk.accessibility.tree`."""
        self._refuse_lean_tree()
        tree = self._guard(lambda: self._tree_reader.read(self.screen, limits, tuple(apps)))
        missing = [name for name in apps if name not in {app.name for app in tree.applications}]
        if strict and missing:
            self._no_such_application(missing[0], limits.timeout)
        stack = self.windows.stacked()
        mark_covered(tree, stack, self.screen.scale)
        if not apps:
            tree.silent = silent_windows(tree, stack)
        return tree

    def _no_such_application(self, name: str, timeout: float) -> NoReturn:
        """Raise InvalidArgument naming ``name`` and the applications the bus has (read shallowly)."""
        present = self._guard(lambda: self._tree_reader.read(self.screen, TreeLimits(max_depth=1, timeout=timeout)))
        names = sorted({app.name for app in present.applications if app.name})
        there = f"the applications on it are {', '.join(names)}" if names else "no application is on it"
        raise InvalidArgument(f"no application named {name!r} on the accessibility bus of desktop {self.name}: {there}")

    def _refuse_lean_tree(self) -> None:
        """The lean image has no accessibility bus: say so before asking a reader it lacks."""
        if desktop_image.resolve(self.container.attrs.get("Config", {}).get("Image") or "?") == desktop_image.IMAGE:
            self._tree_readable = False
            raise CommandFailed(f"desktop {self.name} runs the lean image, which has no accessibility bus: "
                                "the tree (and marks) needs the apps image (vdesk up --apps, image='apps')")

    def marks(self, tree: Tree | None = None) -> set_of_marks.Marks:
        """Number the interactive elements on screen (from a fresh tree) and draw them on a
        screenshot; an action's ``{"element": N}`` then names mark N of the last call. Windows
        whose program exposes no tree (or an empty one) get marks from the text read on them
        (OCR), in the same numbering; each mark says its source."""
        tree = tree or self.accessibility_tree()
        frame = self._with_frames(lambda frames: frames.fresh())
        shot = self.to_image(frame.image)
        sources: dict[str, set_of_marks.Source] = {app.name: "tree" for app in tree.applications if not app.empty}
        boxes = []
        for title, region in self._treeless_windows(tree):
            sources[title] = "ocr"
            for line in text_on_screen.read(frame.image, scale=self.screen.scale, region=region):
                boxes.append(TextBox(line.text, line.bounds, min(word.confidence for word in line.words)))
        found = set_of_marks.number(tree, self.screen.size, boxes)
        self._marks = set_of_marks.Marks(found, set_of_marks.draw(shot, found), sources)
        return self._marks

    def _treeless_windows(self, tree: Tree) -> list[tuple[str, Box]]:
        """The windows on screen without a usable tree, as (title, region in logical pixels)."""
        empty_titles = {top.name for app in tree.applications if app.empty for top in app.root.children}
        width, height = self.screen.size
        found = []
        for window in tree.silent + [w for w in self.windows.stacked() if w.title in empty_titles and w.viewable]:
            s = self.screen.scale
            left, top = max(0, round(window.x / s)), max(0, round(window.y / s))
            right, bottom = min(width, round((window.x + window.width) / s)), min(height, round((window.y + window.height) / s))
            if right > left and bottom > top:
                found.append((window.title, Box(left, top, right, bottom)))
        return found

    def find(self, role: str | None = None, name: str | None = None, index: int | None = None) -> Node:
        """The one element on screen with this role and name (see :meth:`Tree.find`)."""
        return self.accessibility_tree().find(role, name, index)

    def wait_for_element(self, role: str | None = None, name: str | None = None, *, states: Sequence[str] = (),
                         timeout: float = 10.0) -> Node:
        """Wait until an element with this role, name and states is on screen; return the first."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.accessibility_tree().query(role, name, states=tuple(states))
            if found:
                return found[0]
            if time.monotonic() > deadline:
                raise DesktopTimeout(f"desktop {self.name}: no element {describe_query(role, name)} "
                                     f"appeared within {timeout:g} s")
            time.sleep(0.1)

    def _resolve_elements(self, actions: list[BaseAction]) -> list[BaseAction]:
        """Replace each action's element by the centre of its bounds: a mark of the last
        marks(), or a query against one fresh tree. Raises InvalidAction (nothing has run)."""
        if not any(action.inputs.element is not None for action in actions):
            return actions
        tree = self.accessibility_tree() if any(isinstance(a.inputs.element, ElementQuery) for a in actions) else None
        resolved = []
        for index, action in enumerate(actions):
            element = action.inputs.element
            if element is None:
                resolved.append(action)
                continue
            try:
                if isinstance(element, ElementQuery):
                    assert tree is not None
                    x, y = tree.find(element.role, element.name, element.index).bounds.centre  # type: ignore[union-attr]
                elif self._marks is None:
                    raise InvalidAction(f"mark {element} names nothing: call marks() first")
                else:
                    x, y = self._marks.get(element).centre
            except InvalidAction as error:
                raise InvalidAction(f"action {index} ({action.type.value}): {error}") from None
            width, height = self.screen.size
            point = Coordinates(normalized={"x": min(max(x / width, 0), 1), "y": min(max(y / height, 0), 1)})
            inputs = action.inputs.model_copy(update={"element": None, "point": point})
            resolved.append(action.model_copy(update={"inputs": inputs}))
        return resolved

    # -- internals ----------------------------------------------------------------------------
    def _typed_into_focus(self, typed: str) -> tuple[bool | None, str | None]:
        """Whether the focused element's text contains the last line of ``typed``, and which
        element that is; (None, None) where there is no tree (the lean image: remembered) or no
        focused element with text. A fresh tree costs 0.1-1.5 s with big programs open."""
        wanted = next((line.strip() for line in reversed(typed.splitlines()) if line.strip()), "")
        if not wanted or self._tree_readable is False:
            return None, None
        try:
            tree = self._guard(lambda: self._tree_reader.read(self.screen, TreeLimits(timeout=TYPED_TREE_TIMEOUT)))
        except CommandFailed as error:
            if "needs the apps image" in str(error):  # no reader in this image: never ask again
                self._tree_readable = False
            return None, None
        except VdeskError:  # slow or too big this time: say nothing rather than fail the batch
            return None, None
        self._tree_readable = True
        focused = [node for node in tree.nodes() if "focused" in node.states and node.text is not None]
        if not focused:
            return None, None
        node = focused[-1]  # the innermost
        return wanted in (node.text or ""), node.label()

    def _frame_before(self) -> Frame:
        """The screen before a batch: the last receipt's frame when the X connection holds no
        word of drawing since (no round trip, see :mod:`vdesk.damage`), else a fresh one."""
        still = self._still_frame
        if still is not None and still[0] is self._frames and not self._guard(self.windows.drawing_seen):
            return still[1]
        return self._fresh_still()

    def _frame_after(self) -> Frame:
        """The screen after a batch: the frame before it when the X server says nothing was drawn
        since the last receipt's (one X round trip), else a fresh one."""
        still = self._still_frame
        if not self._guard(self.windows.drawn) and still is not None and still[0] is self._frames:
            return still[1]
        return self._fresh_still()

    def _fresh_still(self) -> Frame:
        frame = self._with_frames(lambda frames: frames.fresh())
        self._still_frame = (self._frames, frame)  # versions count per VNC connection
        return frame

    def _receipt(self, before: Frame, after: Frame, settled: bool | None) -> Receipt:
        from vdesk.frames import changed_regions  # loaded already: the frames came through it

        # No update painted anything since `before`: nothing to compare.
        found = changed_regions(before.image, after.image) if after.version != before.version else []
        regions = [region.logical(self.screen.scale).pixels() for region in found]
        return Receipt(changed=bool(regions), regions=regions, settled=settled)

    def _run(self, steps: list[Step], cancel: threading.Event | None = None) -> Iterator[Step]:
        for number, batch in enumerate(chained(steps)):
            if cancel is not None and number and cancel.is_set():
                return  # between two bursts: nothing is left half sent
            if isinstance(batch, Input):
                self._guard(lambda: self._input.send(batch.events))
            elif isinstance(batch, TypeText) and batch.paste:  # a removed desktop is gone, not a lost channel
                self._guard(lambda: self.clipboard.paste(batch.text))
            elif isinstance(batch, TypeText):
                self._guard(lambda: self._type(batch.text))
            elif isinstance(batch, Sleep):
                time.sleep(batch.seconds)
            yield batch

    def _xdotool(self, args: tuple[str, ...]) -> None:
        self.channel.run(["xdotool", *args], timeout=XDOTOOL_TIMEOUT).check()

    def _type(self, text: str) -> None:
        # The text travels on stdin: a leading '-', quotes and shell characters are just text.
        for piece in self.keymap.segments(text):
            argv = ["xdotool", "type", "--delay", "0", "--clearmodifiers", "--file", "-"]
            self.channel.run(argv, stdin=piece, timeout=XDOTOOL_TIMEOUT + len(piece) / 100).check()

    def _wait_for_session(self, ready_file: str, timeout: float) -> None:
        """Wait until the image's session (wallpaper, taskbar) says it is up, so that the
        first frames an agent sees are the ones every later run sees too."""
        deadline = time.monotonic() + timeout
        while self._guard(lambda: self.channel.run(["test", "-e", ready_file], timeout=10)).returncode != 0:
            if time.monotonic() > deadline:
                raise DesktopTimeout(f"desktop {self.name}: its session did not start within {timeout:g} s")
            time.sleep(0.02)

    def _connect_frames(self, timeout: float, password: str | None = None) -> None:
        """Hold the VNC connection (with ``password``, default the desktop's) once a first frame came."""
        from vdesk.frames import LiveFramebuffer, PasswordRefused  # not loaded by commands that need no frames

        api = self.client.api
        source: str | OpenExec
        if plain_sockets(api):  # the frames' event loop reads the relay's socket itself
            source = functools.partial(start_exec, api, self.id, ["socat", "STDIO", VNC_TARGET], label=self.name)
        else:
            source = self._private_vnc_tunnel().address
        self._frames = LiveFramebuffer(source, password or self.vnc_password, self.name, max_size=self.screen.physical_size)
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._frames.connect(timeout=min(5.0, max(1.0, deadline - time.monotonic())))
                return
            except (PasswordRefused, ForkedProcess):
                raise
            except VdeskError as error:
                if time.monotonic() > deadline:
                    raise DesktopTimeout(f"desktop {self.name} did not show a first frame within {timeout:g} s: {error}") from None
                if not self.is_alive():
                    raise DesktopGone(f"desktop {self.name} stopped while starting: {last_log(self.container)}") from None
                time.sleep(0.05)

    def _reconnect_frames(self) -> None:
        # The connection dropped (its tunnel died) while the desktop lives on: pick up where we were.
        if not self.is_alive():
            raise DesktopGone(f"desktop {self.name} is gone")
        assert self._frames is not None
        self._frames.close()
        self._connect_frames(timeout=5.0)

    def _with_frames(self, call):  # type: ignore[no-untyped-def]
        """Run ``call(frames)``; when the VNC connection dropped under it, reconnect and retry once."""
        try:
            return self._guard(lambda: call(self.frames))
        except DesktopGone:
            if self._closed or not self.is_alive():
                raise
            return self._guard(lambda: call(self.frames))

    def _guard(self, call):  # type: ignore[no-untyped-def]
        """Run ``call``; turn a failure of a dead container into DesktopGone naming it."""
        try:
            return call()
        except (DesktopGone, DesktopTimeout, ChannelLost) as error:
            # A broken connection often arrives before the engine reports the container stopped.
            settle = time.monotonic() + (0 if isinstance(error, DesktopTimeout) else 0.5)
            while not self._closed and self.is_alive() and time.monotonic() < settle:
                time.sleep(0.05)
            if not self._closed and not self.is_alive():
                raise DesktopGone(f"desktop {self.name} is gone (its container stopped or was removed)"
                                  f"{stop_reason(self.container)}") from error
            raise


def _local_engine() -> docker.DockerClient | None:
    """The default engine, as a source of the image for another engine; None if unreachable."""
    try:
        return engines.connect()
    except VdeskError:
        return None


def _first_difference(frames: LiveFramebuffer, before: Frame, wait: float) -> Frame:
    """A fresh frame; with ``wait``, the first one within that many seconds whose pixels
    differ from ``before`` (else the last one seen)."""
    frame = frames.fresh()
    if wait <= 0 or _differs(frame, before):
        return frame
    deadline = time.monotonic() + wait
    with frames.watching():
        frame = frames.fresh()  # a change between the first look and the watch started
        while not _differs(frame, before) and (remaining := deadline - time.monotonic()) > 0:
            frame = frames.next_change(frame.version, remaining) or frame
    return frame


def _differs(frame: Frame, before: Frame) -> bool:
    """Whether ``frame`` shows other pixels than ``before`` (an update may repaint a pixel
    with its own value: the version alone does not say)."""
    return frame.version != before.version and frame.image.tobytes() != before.image.tobytes()


def _image_space(size: tuple[int, int] | ImageSpace) -> ImageSpace:
    """``size`` as an image space: a (width, height) pair or an ImageSpace."""
    if isinstance(size, ImageSpace):
        return size
    if not (isinstance(size, (tuple, list)) and len(size) == 2):
        raise InvalidArgument(f"an image size must be (width, height) or an ImageSpace, got {size!r}")
    return ImageSpace(*size)


def _connected(framing: Future[None]) -> bool:
    """Whether ``framing`` (a first connection of a fork's frames) connected; a failed one is
    closed (the fork connects again with its own password)."""
    try:
        framing.result()
        return True
    except VdeskError:
        return False


def _take_lease(client: docker.DockerClient, container: Container, timeout: float) -> Lease:
    try:
        return Lease(client.api, container.id, timeout=timeout)
    except DesktopGone as error:  # its entrypoint gave up: say why
        raise DesktopGone(f"{error}: {last_log(container)}") from None



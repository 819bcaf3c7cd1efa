"""Desktop: one sandboxed Linux desktop in a container, from ``up`` to ``down``.

    with Desktop.up(size=(1280, 800)) as desktop:
        desktop.input.execute([{"type": "click", "inputs": {"point": {"raw": {"x": 10, "y": 10}}}}])
        desktop.screen.shot().save("shot.png")

A desktop is a thin handle: it starts, attaches to, checkpoints, forks, restores and removes a
container, and holds the parts that drive it, each its own module built from the transports it
needs:

====================  ==========================================  ===============================
part                  what it does                                over
====================  ==========================================  ===============================
``screen``            geometry, shots, settle, changes, video     the held VNC connection
``input``             ``execute`` (the one door), receipts,       X (XTEST) and the channel
                      the pointer
``text``              OCR: read, find, wait for text              the screen's frames
``elements``          accessibility tree, find, wait, marks       an exec session (AT-SPI)
``programs``          run programs, the window manager's probe    the command channel
``files``             upload, download, read and write files      an exec session per transfer
``clipboard``         the X selections                            the command channel
``windows``           window queries                              the X connection
``browser``           Chromium over CDP (apps image)              a tunnel to its debug port
``vnc``               passwords and the address for a viewer      a tunnel to the VNC server
====================  ==========================================  ===============================

Every part runs its calls through the desktop's one guard (:mod:`vdesk.guard`): once the
container stopped, any of them raises :class:`~vdesk.errors.DesktopGone` naming why. When
started from Python, a desktop holds a lease: if this process dies in any way, the container
stops and removes itself (:mod:`vdesk.lease`). How the container is started is
:mod:`vdesk.container`; the desktops on an engine are :mod:`vdesk.inventory`; checkpoints and
forks are :mod:`vdesk.forks`.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

import docker
from docker.models.containers import Container

from vdesk import engine as engines, forks, images as desktop_image
from vdesk.accessibility.tree import TreeReader
from vdesk.channel import Channel
from vdesk.clipboard import Clipboard
from vdesk.clock import ClockSettings
from vdesk.container import RunOptions, check_name, last_log, remove_container, run_container
from vdesk.coords import Screen
from vdesk.elements import DesktopElements
from vdesk.errors import DesktopGone, InvalidArgument, VdeskError
from vdesk.files import Files
from vdesk.forks import Checkpoint
from vdesk.guard import Guard
from vdesk.input import DesktopInput
from vdesk.interrupts import Interrupted, SignalGuard
from vdesk.inventory import DesktopInfo, desktop_info, find_desktop
from vdesk.lease import Lease
from vdesk.programs import DesktopPrograms
from vdesk.screen import DesktopScreen
from vdesk.spec import DEFAULT_SIZE, DesktopSpec, Limits, Network, parse_size
from vdesk.text import DesktopText
from vdesk.vnc import DesktopVnc
from vdesk.windows import Windows
from vdesk.xconn import XConnection, open_display

if TYPE_CHECKING:  # imported on first use: Playwright takes long to load
    from vdesk.browser import Browser

SESSION_READY_LABEL = "vdesk.session-ready"  # an image's label: the file its session makes once it is up
FORKS_AT_ONCE = 8  # forks started in parallel; more only queue in the engine on a small machine
READ_TIMEOUT = 5.0  # reading a small file of the desktop's own (its VNC passwords)


class _Forking:
    """``fork`` on a desktop (checkpoint it, fork that) and on the class (fork a checkpoint)."""

    def __get__(self, desktop: Desktop | None, owner: type[Desktop]) -> Callable[..., list[Desktop]]:
        return owner._fork_checkpoint if desktop is None else desktop._fork_self


class Desktop:
    """A running desktop. Create with :meth:`up` or :meth:`attach`; release with :meth:`down`."""

    def __init__(self, client: docker.DockerClient, container: Container, geometry: Screen, *, owned: bool,
                 password: str | None = None, view_password: str | None = None) -> None:
        self.client = client
        self.container = container
        self.name: str = container.name
        self.id: str = container.id
        self._owned = owned
        self._lease: Lease | None = None
        self._browser: Browser | None = None  # made on first use
        self._guard = guard = Guard(container, self.name)
        self.channel = Channel(client.api, container.id, self.name)
        self.clock = ClockSettings.from_labels(container.labels or {})
        self._x = XConnection(lambda: guard(lambda: open_display(client.api, container.id)), self.name)
        self.windows = Windows(self._x)
        self.clipboard = Clipboard(self.channel, self.windows, guard)
        self.files = Files(client.api, container.id, self.name, self.channel, guard)
        self.vnc = DesktopVnc(client.api, container, guard, self._read_text, password, view_password)
        self.screen = DesktopScreen(client.api, container, geometry, guard, self.vnc)
        self.text = DesktopText(self.screen, guard)
        self.elements = DesktopElements(TreeReader(client.api, container.id, self.name), self.screen,
                                        self.windows, guard)
        self.programs = DesktopPrograms(self.channel, self.windows, guard, self.clock)
        self.input = DesktopInput(self.channel, self.windows, self.clipboard, self.screen, self.elements, guard)

    # -- lifecycle ----------------------------------------------------------------------------
    @classmethod
    def up(cls, size: tuple[int, int] | DesktopSpec = DEFAULT_SIZE, *, scale: float | None = None,
           name: str | None = None, image: str | None = None, engine: str | None = None,
           network: Network | None = None, ttl: float | None = None, lease: bool = True,
           limits: Limits | None = None, timeout: float | None = None,
           environment: dict[str, str] | None = None, clock: str | datetime | None = None,
           announce: Callable[[Desktop], None] | None = None) -> Desktop:
        """Start a desktop and return once X answers and the first VNC frame arrived (on the
        apps image, once its session and taskbar are up too).

        What desktop is a :class:`~vdesk.spec.DesktopSpec`, given whole
        (``Desktop.up(DesktopSpec(size=(1024, 768), image="apps"))``) or as its keywords
        (``Desktop.up((1024, 768), image="apps")``), not both; what a keyword left out means
        is the spec's default. ``image`` is ``"lean"`` (xterm and openbox, the default),
        ``"apps"`` (a browser, an office suite and more), ``"osworld"`` (OSWorld's machine as its
        agents see it: GNOME), ``"osworld-openbox"`` (that machine on openbox; see
        :mod:`vdesk.images`) or a Docker image name. ``timeout`` bounds the start (by default
        30 s, 120 s for the GNOME desktop: :func:`vdesk.images.start_timeout`).
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
        timeout = desktop_image.start_timeout(spec.image_name) if timeout is None else timeout
        client = engines.connect(engine)
        image_name = desktop_image.ensure(client, spec.image_name, source=_local_engine() if engine else None)
        image_labels = client.images.get(image_name).labels or {}
        if start is not None:
            options = replace(options, clock=ClockSettings.starting(start, image_name, image_labels))
        with SignalGuard() as guard:  # held while it is created, removed, announced
            container = run_container(client, image_name, options)
            desktop: Desktop | None = None
            try:
                desktop = cls(client, container, options.screen, owned=True, password=options.password)
                ready_file = image_labels.get(SESSION_READY_LABEL)
                with guard.armed():  # waits that Ctrl-C may cut short
                    if ready_file:  # the session is asked after: its channel starts meanwhile
                        desktop.channel.start()
                    if lease:
                        desktop._lease = _take_lease(client, container, timeout)
                    desktop.screen.connect(timeout)
                    if ready_file:
                        desktop.programs.wait_for_session(ready_file, timeout)
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
        return cls(client, container, screen, owned=False)

    # -- checkpoints and forks (see vdesk.forks) ------------------------------------------------
    def checkpoint(self, name: str | None = None) -> Checkpoint:
        """Save the desktop as it is now (screen, programs, files in /tmp and the home) without
        stopping it: a :class:`~vdesk.forks.Checkpoint` to :meth:`fork` or :meth:`restore` from.
        vdesk's own VNC and X connections are closed for the dump and open again on next use.
        Raises :class:`~vdesk.errors.CheckpointUnavailable` on an engine that cannot (it says
        what is missing). Costs runc's dump: about 0.3 s for a lean desktop, 0.65 s for 430 MB of
        programs, on an idle 2-core machine."""
        self._guard.check_open()
        forks.docker_root(self.client)  # an engine that cannot checkpoint: nothing disconnected
        self._disconnect()
        self.channel.run(["sh", "-c", forks.RELAYS_ENDED], timeout=forks.RELAYS_TIMEOUT)
        return self._guard(lambda: forks.take(self.client, self.container, name))

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
        chosen = forks.fork_names(checkpoint.source, n, names)
        forks.check_names_free(client, chosen)
        return cls._forks_on(client, checkpoint, chosen, lease, ttl, timeout)

    def _fork_self(self, n: int = 1, *, names: list[str] | None = None, lease: bool = True,
                   ttl: float | None = None, timeout: float = 30.0) -> list[Desktop]:
        chosen = forks.fork_names(self.name, n, names)  # checked before anything is dumped
        forks.check_names_free(self.client, chosen)
        checkpoint = self.checkpoint()
        try:
            return self._forks_on(self.client, checkpoint, chosen, lease, ttl, timeout)
        except BaseException:
            forks.remove(self.client, checkpoint.name, missing_ok=True)  # made for these forks alone
            raise

    @classmethod
    def remove_checkpoint(cls, checkpoint: Checkpoint | str, *, engine: str | None = None) -> None:
        """Remove a checkpoint (a Checkpoint or its name) and its files; forks already started
        from it run on. Raises :class:`~vdesk.errors.DesktopNotFound` when there is none."""
        name = checkpoint.name if isinstance(checkpoint, Checkpoint) else checkpoint
        forks.remove(engines.connect(engine), name)

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
        password, view_password = secrets.token_urlsafe(12)[:8], secrets.token_hex(4)
        options = checkpoint.run_options(name, password, leased=lease, ttl=ttl)
        container = forks.start(client, checkpoint, options)
        Desktop.__init__(self, client, container, options.screen, owned=owned, password=password,
                         view_password=view_password)
        try:
            self._resume(password, view_password, lease, ttl, timeout)
        except BaseException:
            self.down()
            raise

    def _resume(self, password: str, view_password: str, lease: bool, ttl: float | None, timeout: float) -> None:
        """A restored desktop made its own: its password and time-to-live set by the exec that then
        relays its first frame (one exec after the restore, not a reset and a connection taking
        turns), and its lease taken beside it. A relay that did not connect is followed by the
        reset alone, which says what failed, and a plain connection."""
        with ThreadPoolExecutor(max_workers=1) as pool:
            leasing = pool.submit(_take_lease, self.client, self.container, timeout) if lease else None
            try:
                try:
                    self._guard(lambda: self.screen.connect_after(forks.reset_prelude(password, view_password, ttl),
                                                                  timeout))
                except VdeskError:
                    self.screen.close()
                    self._guard(lambda: forks.reset(self.client.api, self.container, password, view_password, ttl,
                                                    timeout))
                    self.screen.connect(timeout)
                self.programs.window_manager_ready = True  # it ran at the checkpoint, and runs on
            finally:
                if leasing is not None:
                    self._lease = leasing.result()  # held (and so released by down()) even when the rest failed

    def restore(self, checkpoint: Checkpoint | str, *, timeout: float = 30.0) -> None:
        """Put this desktop back to ``checkpoint`` (a Checkpoint or its name): its container is
        replaced by one of the same name, lease and time-to-live started from the checkpoint, with
        a new VNC password; this object drives the new one. What ran since is gone."""
        self._guard.check_open()
        if isinstance(checkpoint, str):
            checkpoint = forks.load(self.client, checkpoint)
        forks.docker_root(self.client)  # an engine that cannot: the desktop stays as it is
        leased, ttl, owned = self._lease is not None, forks.remaining_ttl(self.container), self._owned
        old, old_lease, geometry = self.container, self._lease, self.screen.geometry
        # The desktop steps aside (renamed, running, its lease held) until the restored one is up,
        # and comes back as it was when the restore fails.
        self._disconnect()
        self.channel.close()
        forks.step_aside(old)
        try:
            self._become_fork(self.client, checkpoint, self.name, leased, ttl, timeout, owned=owned)
        except BaseException:
            forks.step_back(old, self.name)
            Desktop.__init__(self, self.client, old, geometry, owned=owned)
            self._lease = old_lease
            raise
        remove_container(old)  # first: a released lease would stop and remove it meanwhile
        if old_lease is not None:
            old_lease.release()

    def _disconnect(self) -> None:
        """Close the connections a checkpoint cannot take along (CRIU refuses sockets to outside
        the container); each opens again on next use."""
        if self._browser is not None:
            self._browser.close()
            self._browser = None
        for part in (self.screen, self.vnc, self.elements):
            part.close()
        self._x.disconnect()

    def close(self) -> None:
        """Disconnect from the desktop (frames, channel, tunnels) and let go of its lease."""
        if self._guard.closed:
            return
        self._guard.closed = True
        for part in (self._browser, self.screen, self.vnc, self._x, self.elements, self.channel):
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

    # -- the handle -------------------------------------------------------------------------
    @property
    def browser(self) -> Browser:
        """The desktop's Chromium (apps image), read and driven over CDP: a
        :class:`vdesk.browser.Browser`, started and connected on first use, closed with the desktop."""
        self._guard.check_open()
        if self._browser is None:
            from vdesk.browser import Browser  # Playwright is loaded only by desktops that use it

            self._browser = Browser(self)
        return self._browser

    def info(self) -> DesktopInfo:
        """What ``vdesk ls`` says of this desktop, read now."""
        self.container.reload()
        return desktop_info(self.container)

    def is_alive(self) -> bool:
        """Whether the desktop's container runs (one engine request)."""
        return self._guard.is_alive()

    def _read_text(self, path: str) -> str:
        return self.channel.run(["cat", path], timeout=READ_TIMEOUT).check().stdout.strip()


def _local_engine() -> docker.DockerClient | None:
    """The default engine, as a source of the image for another engine; None if unreachable."""
    try:
        return engines.connect()
    except VdeskError:
        return None


def _take_lease(client: docker.DockerClient, container: Container, timeout: float) -> Lease:
    try:
        return Lease(client.api, container.id, timeout=timeout)
    except DesktopGone as error:  # its entrypoint gave up: say why
        raise DesktopGone(f"{error}: {last_log(container)}") from None



"""Desktop: one sandboxed Linux desktop in a container, from ``up`` to ``down``.

    with Desktop.up(size=(1280, 800)) as desktop:
        desktop.execute([{"type": "click", "inputs": {"point": {"raw": {"x": 10, "y": 10}}}}])
        desktop.screenshot().save("shot.png")

A desktop owns its container, a held VNC connection (frames), a persistent exec channel
(commands) and, when started from Python, a lease: if this process dies in any way, the
container stops and removes itself.
"""

from __future__ import annotations

import getpass
import itertools
import os
import re
import secrets
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Literal

import docker
import docker.errors
from docker.models.containers import Container
from PIL import Image
from Xlib.display import Display as XDisplay

from vdesk import engine as engines, images as desktop_image
from vdesk.channel import Channel, Completed
from vdesk.coords import ImageSpace, Screen
from vdesk.errors import DesktopGone, DesktopNotFound, DesktopTimeout, InvalidAction, InvalidArgument, VdeskError
from vdesk.frames import LiveFramebuffer, PasswordRefused, Region
from vdesk.keyboard import ScratchKeymap, XKeyboardMapping
from vdesk.lease import GRACE_SECONDS, Lease
from vdesk.tunnel import Tunnel
from vdesk.windows import Windows, open_display

if TYPE_CHECKING:
    from vdesk.browser import Browser

LABEL = "vdesk"
DEFAULT_SIZE = (1280, 800)
VNC_PORT = 5900
# nodelay: the RFB client sends small requests back to back; Nagle would hold the second one
# for the peer's delayed acknowledgement (~40 ms per fresh frame).
VNC_TARGET = f"TCP:127.0.0.1:{VNC_PORT},nodelay"
WM_PROBE_TITLE = "vdesk-window-manager-probe"
WM_READY_TIMEOUT = 60.0  # openbox can take many seconds to manage its first window on a busy machine
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$")
Network = Literal["none", "bridge"]
# Image labels: the file an image's session creates once it is up, and its libfaketime.
SESSION_READY_LABEL = "vdesk.session-ready"
CLOCK_LABEL = "vdesk.clock-library"
CLOCK_RANGE = (2001, 2099)  # a clock before 2001 would put the entrypoint's time-to-live below 0


@dataclass(frozen=True)
class Limits:
    """Resource limits of a desktop's container."""

    memory: str = "2g"
    cpus: float = 2.0
    pids: int = 512
    shm: str = "256m"


@dataclass(frozen=True)
class DesktopInfo:
    """What ``vdesk ls`` shows of a desktop, read from its container's labels and state."""

    name: str
    id: str
    status: str
    size: tuple[int, int]
    scale: float
    created: datetime
    expires_at: datetime | None
    owner: str
    leased: bool
    vnc_address: str | None

    @property
    def ttl_left(self) -> float | None:
        if self.expires_at is None:
            return None
        return max(0.0, (self.expires_at - datetime.now(timezone.utc)).total_seconds())


class Desktop:
    """A running desktop. Create with :meth:`up` or :meth:`attach`; release with :meth:`down`."""

    def __init__(self, client: docker.DockerClient, container: Container, password: str | None,
                 screen: Screen, *, owned: bool, lease: Lease | None = None) -> None:
        self.client = client
        self.container = container
        self.name: str = container.name
        self.id: str = container.id
        self._password = password
        self._window_manager_ready = False
        self.screen = screen
        self._owned = owned
        self._lease = lease
        self.channel = Channel(client.api, container.id, self.name)
        self._windows = Windows(lambda: self._guard(self.x_display))
        self.keymap = ScratchKeymap(XKeyboardMapping(self._windows.request))
        self._vnc_tunnel: Tunnel | None = None
        self._frames: LiveFramebuffer | None = None
        self._browser: Browser | None = None  # made on first use
        self._closed = False
        from vdesk.operator import Operator  # the operator drives this desktop
        self.operator = Operator(self)

    # -- lifecycle ----------------------------------------------------------------------------
    @classmethod
    def up(cls, size: tuple[int, int] = DEFAULT_SIZE, *, scale: float = 1.0, name: str | None = None,
           image: str = "lean", engine: str | None = None,
           network: Network = "none", ttl: float | None = None, lease: bool = True,
           limits: Limits = Limits(), timeout: float = 30.0,
           environment: dict[str, str] | None = None, clock: str | datetime | None = None) -> Desktop:
        """Start a desktop and return once X answers and the first VNC frame arrived (on the
        apps image, once its session and taskbar are up too).

        ``image`` is ``"lean"`` (xterm and openbox, the default), ``"apps"`` (a browser, an
        office suite and more) or a Docker image name. ``lease=True`` (the default) ties the
        desktop to this process: it is removed when the process ends, however it ends. ``ttl``
        (seconds) stops it after that long regardless. ``network="none"`` (the default) gives
        it no network at all. ``clock`` (``"2026-01-01 00:00:00"``, UTC) sets the time every
        program in the desktop sees at the start; it runs on from there (needs an image with
        libfaketime: the apps image).
        """
        screen = _screen(size, scale)
        name = _check_name(name) if name else f"vdesk-{secrets.token_hex(4)}"
        if network not in ("none", "bridge"):
            raise InvalidAction(f"network must be 'none' or 'bridge', got {network!r}")
        if ttl is not None and not 0 <= ttl <= 10**9:  # also refuses nan and inf
            raise InvalidAction(f"ttl must be 0 (none) or a number of seconds up to 1e9, got {ttl}")
        start = parse_clock(clock) if clock is not None else None
        client = engines.connect(engine)
        image_name = desktop_image.ensure(client, image, source=_local_engine() if engine else None)
        image_labels = client.images.get(image_name).labels or {}
        password = secrets.token_urlsafe(12)[:8]  # VNC authentication uses at most 8 characters
        container = _run_container(client, image_name, name, screen, password, network, ttl,
                                   lease, limits, environment or {},
                                   _clock_settings(start, image_name, image_labels) if start else None)
        desktop = cls(client, container, password, screen, owned=True)
        try:
            if lease:
                desktop._lease = _take_lease(client, container, timeout)
            desktop._connect_frames(timeout)
            if ready_file := image_labels.get(SESSION_READY_LABEL):
                desktop._wait_for_session(ready_file, timeout)
        except BaseException:
            desktop.down()
            raise
        return desktop

    @classmethod
    def attach(cls, name: str, *, engine: str | None = None, timeout: float = 10.0) -> Desktop:
        """Drive a desktop started elsewhere (e.g. by ``vdesk up``). Leaving a ``with`` block
        of an attached desktop only disconnects; :meth:`down` still removes it."""
        client = engines.connect(engine)
        container = _find(client, name)
        if container.status != "running":
            raise DesktopGone(f"desktop {name} is {container.status}, not running")
        labels = container.labels
        screen = Screen(*parse_size(labels["vdesk.size"]), float(labels.get("vdesk.scale", "1")))
        return cls(client, container, None, screen, owned=False)

    def close(self) -> None:
        """Disconnect from the desktop (frames, channel, tunnels) and let go of its lease."""
        if self._closed:
            return
        self._closed = True
        for part in (self._browser, self._frames, self._vnc_tunnel, self._windows, self.channel):
            if part is not None:
                part.close()
        if self._lease is not None:
            self._lease.release()

    def down(self) -> None:
        """Remove the desktop's container (idempotent) and disconnect."""
        self.close()
        _remove(self.container)

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
        published = _published_port(self.container)
        if not published and self.container.attrs.get("HostConfig", {}).get("PortBindings"):
            self.container.reload()  # ports are assigned on start, after `run` read the attributes
            published = _published_port(self.container)
        if published:
            return f"127.0.0.1::{published}"
        return self.frames.address

    def info(self) -> DesktopInfo:
        self.container.reload()
        return describe(self.container)

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
        """Scale a physical frame to the logical size, or to ``size`` for a model."""
        target = size.size if isinstance(size, ImageSpace) else (size or self.screen.size)
        if physical.size == target:
            return physical
        return physical.resize(target, Image.Resampling.LANCZOS, reducing_gap=2.0)

    def wait_until_settled(self, quiet: float = 0.03, timeout: float = 10.0) -> Image.Image:
        """Return the screen once it has not changed for ``quiet`` seconds."""
        return self.to_image(self._with_frames(lambda frames: frames.wait_until_settled(quiet, timeout)).image)

    def wait_for_change(self, region: Region | None = None, timeout: float = 10.0) -> Image.Image:
        """Return the first frame that differs from the current one, within ``region``
        (logical pixels: left, top, right, bottom) if given."""
        physical = tuple(round(v * self.screen.scale) for v in region) if region else None
        frame = self._with_frames(lambda frames: frames.wait_for_change(physical, timeout))  # type: ignore[arg-type]
        return self.to_image(frame.image)

    # -- programs and actions -----------------------------------------------------------------
    def run(self, argv: Sequence[str], *, wait: bool = False, timeout: float = 60.0,
            stdin: str | None = None) -> Completed:
        """Start ``argv`` in the desktop as the desktop user.

        By default it returns at once and the program keeps running; with ``wait=True`` it
        waits (up to ``timeout``) and returns the exit code and output.
        """
        argv = list(argv)
        if not argv or not all(isinstance(a, str) and a for a in argv):
            raise InvalidAction("argv must be a non-empty list of non-empty strings")
        if not wait and not self._window_manager_ready:
            self.wait_for_window_manager()  # else a window the program maps may stay unmanaged
        result = self._guard(lambda: self.channel.run(argv, stdin=stdin, timeout=timeout, detach=not wait))
        if wait and result.returncode == 124 and re.fullmatch(r"timed out after \S+ s", result.stderr):
            # The channel killed it at the deadline (its reply for that case, exactly).
            raise DesktopTimeout(f"desktop {self.name}: {argv[0]} did not finish within {timeout:g} s (it was killed)")
        if not wait and result.returncode != 0:
            result.check()
        return result

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
                patience = min(2 * patience, 8.0)
                continue
            finally:
                self._guard(lambda: self.channel.run(["pkill", "-f", title], timeout=10))
            # The next program may get the probe's window id: let the window manager finish with it.
            self.windows.wait_gone(probe, timeout=max(1.0, deadline - time.monotonic()))
            self._window_manager_ready = True
            return

    def execute(self, actions: Any, *, settle: bool = False) -> Any:
        """Validate the whole batch, then run it in order; see :meth:`Operator.execute`."""
        return self.operator.execute({"actions": actions}, settle=settle)

    # -- internals ----------------------------------------------------------------------------
    def _wait_for_session(self, ready_file: str, timeout: float) -> None:
        """Wait until the image's session (wallpaper, taskbar) says it is up, so that the
        first frames an agent sees are the ones every later run sees too."""
        deadline = time.monotonic() + timeout
        while self._guard(lambda: self.channel.run(["test", "-e", ready_file], timeout=10)).returncode != 0:
            if time.monotonic() > deadline:
                raise DesktopTimeout(f"desktop {self.name}: its session did not start within {timeout:g} s")
            time.sleep(0.02)

    def _connect_frames(self, timeout: float) -> None:
        if self._vnc_tunnel is None:
            self._vnc_tunnel = Tunnel(self.client.api, self.id, VNC_TARGET)
        self._frames = LiveFramebuffer(self._vnc_tunnel.address, self.vnc_password, self.name)
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._frames.connect(timeout=min(5.0, max(1.0, deadline - time.monotonic())))
                return
            except PasswordRefused:
                raise
            except VdeskError as error:
                if time.monotonic() > deadline:
                    raise DesktopTimeout(f"desktop {self.name} did not show a first frame within {timeout:g} s: {error}") from None
                if not self.is_alive():
                    raise DesktopGone(f"desktop {self.name} stopped while starting: {_last_log(self.container)}") from None
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
        except (DesktopGone, DesktopTimeout) as error:
            # A broken connection often arrives before the engine reports the container stopped.
            settle = time.monotonic() + (0.5 if isinstance(error, DesktopGone) else 0)
            while not self._closed and self.is_alive() and time.monotonic() < settle:
                time.sleep(0.05)
            if not self._closed and not self.is_alive():
                raise DesktopGone(f"desktop {self.name} is gone (its container stopped or was removed)"
                                  f"{_stop_reason(self.container)}") from error
            raise


# -- containers -------------------------------------------------------------------------------
def _run_container(client: docker.DockerClient, image_name: str, name: str, screen: Screen,
                   password: str, network: Network, ttl: float | None, leased: bool,
                   limits: Limits, environment: dict[str, str], clock: ClockSettings | None = None) -> Container:
    width, height = screen.physical_size
    expires_at = int(time.time() + ttl) if ttl else 0
    labels = {
        LABEL: "desktop",
        "vdesk.owner": f"{getpass.getuser()}@{socket.gethostname()}:{os.getpid()}",
        "vdesk.created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "vdesk.size": f"{screen.width}x{screen.height}",
        "vdesk.scale": f"{screen.scale:g}",
        "vdesk.expires-at": str(expires_at),
        "vdesk.leased": "true" if leased else "false",
    }
    env = {**environment, "VDESK_WIDTH": str(width), "VDESK_HEIGHT": str(height),
           "VDESK_DPI": str(round(96 * screen.scale)), "VDESK_VNC_PASSWORD": password,
           "VDESK_EXPIRES_AT": str(expires_at), "VDESK_LEASED": "1" if leased else "0",
           "VDESK_LEASE_GRACE": str(GRACE_SECONDS)}
    if clock is not None:
        labels["vdesk.clock"] = clock.label
        env.update(clock.environment)
        if expires_at:  # the entrypoint reads the time-to-live against the clock it is given
            env["VDESK_EXPIRES_AT"] = str(expires_at + clock.offset)
    try:
        return client.containers.run(
            image_name, name=name, detach=True, labels=labels, environment=env,
            auto_remove=leased, network_mode=network,
            ports={f"{VNC_PORT}/tcp": ("127.0.0.1", None)} if network == "bridge" else None,
            read_only=True, tmpfs={"/tmp": "rw,nosuid,nodev,size=512m",
                                   "/home/desk": "rw,nosuid,nodev,uid=1000,gid=1000,mode=0700,size=512m"},
            cap_drop=["ALL"], security_opt=["no-new-privileges"], privileged=False,
            mem_limit=limits.memory, nano_cpus=int(limits.cpus * 1e9), pids_limit=limits.pids,
            shm_size=limits.shm, init=False, stop_signal="SIGTERM",
        )
    except docker.errors.APIError as error:
        if error.status_code == 409:
            raise InvalidAction(f"a container named {name!r} already exists") from None
        try:  # created but not started (e.g. its network failed): it would linger, unleased
            leftover = client.containers.get(name)
            if leftover.status == "created" and leftover.labels.get("vdesk.owner") == labels["vdesk.owner"]:
                _remove(leftover)
        except docker.errors.APIError:
            pass
        raise VdeskError(f"starting desktop {name} failed: {error.explanation}") from None


@dataclass(frozen=True)
class ClockSettings:
    """A desktop's clock: libfaketime preloaded into every process, shifted by ``offset`` seconds."""

    offset: int
    library: str
    label: str

    @property
    def environment(self) -> dict[str, str]:
        # An offset from the real time, so every process shares one clock that runs on. The
        # monotonic clock is shifted too: with FAKETIME_DONT_FAKE_MONOTONIC, libfaketime 0.9.10
        # fails absolute monotonic sleeps with EINVAL (Python's time.sleep, so the command
        # channel's runs with stdin; Chromium's debugging port never answered).
        return {"LD_PRELOAD": self.library, "FAKETIME": f"{self.offset:+d}"}


def _clock_settings(start: datetime, image_name: str, image_labels: dict[str, str]) -> ClockSettings:
    library = image_labels.get(CLOCK_LABEL)
    if not library:
        raise InvalidArgument(f"clock: image {image_name} has no libfaketime to set a desktop's clock with; "
                              "use image='apps'")
    return ClockSettings(round(start.timestamp() - time.time()), library,
                         start.strftime("%Y-%m-%d %H:%M:%S"))


def parse_clock(value: str | datetime) -> datetime:
    """``"2026-01-01 00:00:00"`` (UTC; a ``datetime`` without a zone is UTC too) → an aware
    datetime; raises :class:`InvalidArgument` naming the bad value."""
    if isinstance(value, datetime):
        moment = value
    else:
        try:
            moment = datetime.fromisoformat(str(value).strip())
        except ValueError:
            raise InvalidArgument(f"invalid clock {value!r}: write YYYY-MM-DD HH:MM:SS (UTC)") from None
    moment = moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)
    if not CLOCK_RANGE[0] <= moment.year <= CLOCK_RANGE[1]:
        raise InvalidArgument(f"clock {value!s} is outside the years {CLOCK_RANGE[0]}..{CLOCK_RANGE[1]}")
    return moment


def _local_engine() -> docker.DockerClient | None:
    """The default engine, as a source of the image for another engine; None if unreachable."""
    try:
        return engines.connect()
    except VdeskError:
        return None


def _find(client: docker.DockerClient, name: str) -> Container:
    _check_name(name)
    try:
        container = client.containers.get(name)
    except docker.errors.NotFound:
        raise DesktopNotFound(f"no desktop named {name!r} (see `vdesk ls`)") from None
    if LABEL not in container.labels:
        raise DesktopNotFound(f"container {name!r} is not a vdesk desktop")
    return container


def _remove(container: Container) -> None:
    try:
        container.remove(force=True)
    except docker.errors.NotFound:
        pass
    except docker.errors.APIError as error:
        if "already in progress" not in str(error):
            raise


def list_desktops(engine: str | None = None, client: docker.DockerClient | None = None) -> list[DesktopInfo]:
    """Every vdesk desktop on the engine, running or not."""
    client = client or engines.connect(engine)
    containers = client.containers.list(all=True, filters={"label": f"{LABEL}=desktop"})
    return sorted((describe(c) for c in containers), key=lambda info: info.created)


def remove_desktops(names: Sequence[str], engine: str | None = None) -> list[str]:
    """Remove the named desktops; raises :class:`DesktopNotFound` before removing any if one is missing."""
    client = engines.connect(engine)
    containers = [_find(client, name) for name in names]
    for container in containers:
        _remove(container)
    return [c.name for c in containers]


def prune_desktops(engine: str | None = None, *, only: Sequence[str] | None = None) -> list[str]:
    """Remove the desktops nobody can use any more and return their names: those past their
    time-to-live, stopped ones (exited, dead, or created over a minute ago and never started),
    and leased ones that are not running (their owner is gone). A running desktop within its
    time-to-live and any container not labelled ``vdesk=desktop`` are never touched.
    ``only`` limits the candidates to those names."""
    client = engines.connect(engine)
    now = time.time()
    removed = []
    containers = client.containers.list(all=True, filters={"label": f"{LABEL}=desktop"}, ignore_removed=True)
    for container in containers:
        labels = container.labels
        if labels.get(LABEL) != "desktop" or (only is not None and container.name not in only):
            continue
        expires = _label_number(labels, "vdesk.expires-at")
        expired = 0 < expires <= now
        stopped = container.status in ("exited", "dead") or (container.status == "created" and _age(container) > 60)
        orphaned = labels.get("vdesk.leased") == "true" and container.status not in ("running", "paused", "created")
        if expired or stopped or orphaned:
            _remove(container)
            removed.append(container.name)
    return removed


def _label_number(labels: dict[str, str], key: str) -> float:
    try:
        return float(labels.get(key) or 0)
    except ValueError:
        return 0.0


def _age(container: Container) -> float:
    """Seconds since the engine created ``container``."""
    created = datetime.strptime(container.attrs["Created"][:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
    return time.time() - created.timestamp()


def describe(container: Container) -> DesktopInfo:
    labels = container.labels
    expires = int(labels.get("vdesk.expires-at", "0") or 0)
    return DesktopInfo(
        name=container.name, id=container.short_id, status=container.status,
        size=parse_size(labels.get("vdesk.size", "0x0")), scale=float(labels.get("vdesk.scale", "1")),
        created=datetime.fromisoformat(labels.get("vdesk.created", "1970-01-01T00:00:00+00:00")),
        expires_at=datetime.fromtimestamp(expires, timezone.utc) if expires else None,
        owner=labels.get("vdesk.owner", "?"), leased=labels.get("vdesk.leased") == "true",
        vnc_address=f"127.0.0.1::{port}" if (port := _published_port(container)) else None,
    )


def _take_lease(client: docker.DockerClient, container: Container, timeout: float) -> Lease:
    try:
        return Lease(client.api, container.id, timeout=timeout)
    except DesktopGone as error:  # its entrypoint gave up: say why
        raise DesktopGone(f"{error}: {_last_log(container)}") from None


def _published_port(container: Container) -> int | None:
    bindings = (container.attrs.get("NetworkSettings", {}).get("Ports") or {}).get(f"{VNC_PORT}/tcp")
    return int(bindings[0]["HostPort"]) if bindings else None


def _stop_reason(container: Container) -> str:
    """Why a desktop stopped, when it is still there to ask: ``": the X server died"``."""
    if container.attrs.get("State", {}).get("OOMKilled"):
        return ": it ran out of memory"
    said = [line.removeprefix("vdesk-entrypoint: ") for line in _last_log(container).splitlines()
            if line.startswith("vdesk-entrypoint: ") and "ready:" not in line]
    return f": {said[-1]}" if said else ""


def _last_log(container: Container) -> str:
    try:
        return container.logs(tail=5).decode(errors="replace").strip() or "no log"
    except docker.errors.APIError:
        return "no log"


def _screen(size: tuple[int, int], scale: float) -> Screen:
    width, height = size
    if not (64 <= width <= 7680 and 64 <= height <= 4320):
        raise InvalidAction(f"size {width}x{height} is outside 64x64..7680x4320")
    try:
        screen = Screen(int(width), int(height), float(scale))
    except ValueError as error:
        raise InvalidAction(str(error)) from None
    if screen.physical_size[0] > 7680 or screen.physical_size[1] > 4320:
        raise InvalidAction(f"size {width}x{height} at scale {scale:g} exceeds 7680x4320 pixels")
    return screen


def _check_name(name: str) -> str:
    if not NAME_PATTERN.fullmatch(name):  # match() would let a trailing newline through
        raise InvalidAction(f"invalid desktop name {name!r}: use letters, digits, '_', '.', '-' (max 63)")
    return name


def parse_size(text: str) -> tuple[int, int]:
    """``"1280x800"`` → ``(1280, 800)``; raises :class:`InvalidAction` naming the bad text."""
    match = re.fullmatch(r"([0-9]{1,6})[x×]([0-9]{1,6})", text.strip())  # int() refuses > 4300 digits
    if not match:
        raise InvalidAction(f"invalid size {text!r}: write WIDTHxHEIGHT, e.g. 1280x800")
    return int(match.group(1)), int(match.group(2))


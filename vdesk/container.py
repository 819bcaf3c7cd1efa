"""A desktop's container: its run options (a :class:`~vdesk.spec.DesktopSpec`, a name, a
password, a lease), the labels that make it findable, the hardening every desktop gets,
starting it, and whether it is of any more use (what ``vdesk prune`` removes).

Everything a caller can get wrong is checked here, before anything reaches an engine, and
refused with :class:`~vdesk.errors.InvalidArgument` naming the bad value.
"""

from __future__ import annotations

import getpass
import os
import re
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import docker
import docker.errors
import requests.exceptions
from docker.models.containers import Container

from vdesk import images
from vdesk.clock import ClockSettings
from vdesk.coords import Screen
from vdesk.errors import DesktopStartFailed, DesktopTimeout, InvalidArgument
from vdesk.lease import GRACE_SECONDS
from vdesk.spec import DesktopSpec
# A desktop's settings live in vdesk.spec; these are still imported from here by older callers.
from vdesk.spec import DEFAULT_SIZE as DEFAULT_SIZE, Limits as Limits, Network as Network  # noqa: F401
from vdesk.spec import parse_size as parse_size, screen_of as screen_of  # noqa: F401

LABEL = "vdesk"
VNC_PORT = 5900
REMOVE_TIMEOUT = 30.0  # the engine removes a stopped desktop in well under a second
UNSTARTED_GRACE = 60  # seconds a container may sit created and never started before prune takes it
# nodelay: the RFB client sends small requests back to back; Nagle would hold the second one
# for the peer's delayed acknowledgement (~40 ms per fresh frame).
VNC_TARGET = f"TCP:127.0.0.1:{VNC_PORT},nodelay"
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$")

# What every desktop runs with: a read-only root, private writable /tmp and home, no
# capabilities, no privilege gain; the entrypoint is its own init and stops on SIGTERM.
HARDENING: dict[str, Any] = {
    "read_only": True,
    "tmpfs": {"/tmp": "rw,nosuid,nodev,size=512m",
              "/home/desk": "rw,nosuid,nodev,uid=1000,gid=1000,mode=0700,size=512m"},
    "cap_drop": ["ALL"], "security_opt": ["no-new-privileges"], "privileged": False,
    "init": False, "stop_signal": "SIGTERM",
}
# The image's health check (X answers, the VNC server listens) is a `docker exec` every 5 s:
# 1.3 % of a core per idle desktop in the engine and the container, a fifth of this 2-core
# machine for 32 desktops. vdesk never reads the status (the lease and the held connections
# notice a dead desktop at once), so it runs once a minute: `docker ps` still shows it.
HEALTH_CHECK: dict[str, int] = {"interval": 60 * 10**9}  # nanoseconds; the test is the image's

# The osworld profile only (OSWorld's tasks run `sudo -S ...` with the password "password"):
# privileges may be gained through sudo, which needs these capabilities to become root and act
# on files; the read-only root, private /tmp and home, no network and every other drop stay.
SUDO_CAPABILITIES = ["SETUID", "SETGID", "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER"]


def hardening(image_name: str) -> dict[str, Any]:
    """The run options that confine a desktop of ``image_name``: :data:`HARDENING`, relaxed for
    sudo only in the osworld image."""
    if not images.is_osworld(image_name):
        return HARDENING
    return {**HARDENING, "security_opt": [], "cap_add": SUDO_CAPABILITIES}


def this_user() -> str:
    """``user@host`` of this process: a desktop's owner label is that and the process id."""
    return f"{getpass.getuser()}@{socket.gethostname()}"


@dataclass(frozen=True)
class RunOptions:
    """How one desktop's container is started: its :class:`~vdesk.spec.DesktopSpec` (checked
    when made) and what only this one container has (name, password, lease, clock, owner)."""

    name: str
    spec: DesktopSpec
    password: str
    leased: bool = True
    clock: ClockSettings | None = None  # the spec's clock, as the image's libfaketime sets it
    owner: str = field(default_factory=lambda: f"{this_user()}:{os.getpid()}")

    def __post_init__(self) -> None:
        check_name(self.name)

    @property
    def screen(self) -> Screen:
        return self.spec.screen

    @property
    def expires_at(self) -> int:
        """The Unix time the desktop stops itself at; 0 for never."""
        return int(time.time() + self.spec.ttl) if self.spec.ttl else 0

    def labels(self, expires_at: int) -> dict[str, str]:
        """What ``vdesk ls`` and prune read back from the container."""
        return {
            LABEL: "desktop",
            "vdesk.owner": self.owner,
            "vdesk.created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "vdesk.size": f"{self.screen.width}x{self.screen.height}",
            "vdesk.scale": f"{self.screen.scale:g}",
            "vdesk.expires-at": str(expires_at),
            "vdesk.leased": "true" if self.leased else "false",
            **(self.clock.labels if self.clock else {}),
        }

    def variables(self, expires_at: int) -> dict[str, str]:
        """The entrypoint's environment, over the caller's own variables."""
        width, height = self.screen.physical_size
        return {**self.spec.environment, "VDESK_WIDTH": str(width), "VDESK_HEIGHT": str(height),
                "VDESK_DPI": str(round(96 * self.screen.scale)), "VDESK_VNC_PASSWORD": self.password,
                "VDESK_EXPIRES_AT": str(expires_at), "VDESK_LEASED": "1" if self.leased else "0",
                "VDESK_LEASE_GRACE": str(GRACE_SECONDS),
                # The session's own programs (the taskbar clock) see the desktop's clock too.
                **({"VDESK_FAKETIME": self.clock.faketime} if self.clock else {})}


def container_options(image_name: str, options: RunOptions, labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The engine's options for a desktop of ``image_name`` (also what a fork is created with):
    name, labels (``labels`` added), environment, network, limits and the hardening."""
    expires_at = options.expires_at
    limits, network = options.spec.limits, options.spec.network
    return dict(
        name=options.name, labels={**options.labels(expires_at), **(labels or {})},
        environment=options.variables(expires_at), auto_remove=options.leased,
        network_mode=network,
        ports={f"{VNC_PORT}/tcp": ("127.0.0.1", None)} if network == "bridge" else None,
        mem_limit=limits.memory, nano_cpus=int(limits.cpus * 1e9), pids_limit=limits.pids,
        shm_size=limits.shm, healthcheck=HEALTH_CHECK, **hardening(image_name),
    )


def run_container(client: docker.DockerClient, image_name: str, options: RunOptions) -> Container:
    """Start the desktop's container; a name already taken is an :class:`InvalidArgument`."""
    try:
        return client.containers.run(image_name, detach=True, **container_options(image_name, options))
    except docker.errors.APIError as error:
        if error.status_code == 409:
            raise name_taken(client, options.name) from None
        _remove_unstarted(client, options)
        raise DesktopStartFailed(f"starting desktop {options.name} failed: {error.explanation}") from None


def _remove_unstarted(client: docker.DockerClient, options: RunOptions) -> None:
    # Created but not started (e.g. its network failed): it would linger, unleased.
    try:
        leftover = client.containers.get(options.name)
        if leftover.status == "created" and leftover.labels.get("vdesk.owner") == options.owner:
            remove_container(leftover)
    except docker.errors.APIError:
        pass


def remove_container(container: Container, timeout: float = REMOVE_TIMEOUT) -> None:
    """Remove ``container`` whatever its state, and return once it is gone; one already gone is fine.

    One that another remover is removing (its released lease stopped it and the engine
    auto-removes it, which closing a desktop starts) is waited for: returning while the engine
    still lists it would let a caller count a desktop as gone that ``vdesk ls`` still shows."""
    try:
        container.remove(force=True)
    except docker.errors.NotFound:
        pass
    except docker.errors.APIError as error:
        if "already in progress" not in str(error):
            raise
        _wait_removed(container, timeout)


def _wait_removed(container: Container, timeout: float) -> None:
    try:
        container.wait(condition="removed", timeout=timeout)
    except docker.errors.NotFound:
        pass  # gone before the wait began
    except requests.exceptions.RequestException:
        raise DesktopTimeout(f"container {container.name} was still being removed after {timeout:g} s") from None


def name_taken(client: docker.DockerClient, name: str) -> InvalidArgument:
    """The error for a desktop name the engine already has: what holds it, and how to free it."""
    try:
        holder = client.containers.get(name)
    except docker.errors.NotFound:  # removed since
        return InvalidArgument(f"a container named {name!r} already exists")
    if holder.labels.get(LABEL) != "desktop":
        return InvalidArgument(f"a container named {name!r} exists and is not a vdesk desktop: give another name")
    if unusable(holder):
        return InvalidArgument(f"a desktop named {name!r} already exists, expired or stopped ({holder.status}): "
                               f"`vdesk prune {name}` removes it")
    return InvalidArgument(f"a desktop named {name!r} already exists and is {holder.status}: give another name, "
                           f"or remove it first (`vdesk down {name}`)")


def unusable(container: Container, now: float | None = None) -> bool:
    """Whether nobody can use the desktop ``container`` any more (what ``vdesk prune`` removes):
    it is past its time-to-live, stopped (exited, dead, or created over a minute ago and never
    started), or leased and not running (its owner is gone)."""
    now = time.time() if now is None else now
    labels, status = container.labels, container.status
    expires = _label_number(labels, "vdesk.expires-at")
    expired = 0 < expires <= now
    never_started = status == "created" and now - created_at(container).timestamp() > UNSTARTED_GRACE
    stopped = status in ("exited", "dead") or never_started
    orphaned = labels.get("vdesk.leased") == "true" and status not in ("running", "paused", "created")
    return expired or stopped or orphaned


def _label_number(labels: dict[str, str], key: str) -> float:
    try:
        return float(labels.get(key) or 0)
    except ValueError:
        return 0.0


def created_at(container: Container) -> datetime:
    """When the engine created ``container``: its own record, which every container has (also
    those not made by vdesk, such as compose's)."""
    return datetime.strptime(container.attrs["Created"][:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)


def published_port(container: Container) -> int | None:
    """The host port of the container's VNC server (bridge network only)."""
    bindings = (container.attrs.get("NetworkSettings", {}).get("Ports") or {}).get(f"{VNC_PORT}/tcp")
    return int(bindings[0]["HostPort"]) if bindings else None


def last_log(container: Container) -> str:
    """The container's last few log lines (the entrypoint says why it stopped)."""
    try:
        return container.logs(tail=5).decode(errors="replace").strip() or "no log"
    except docker.errors.APIError:
        return "no log"


def stop_reason(container: Container) -> str:
    """Why a desktop stopped, when it is still there to ask: ``": the X server died"``."""
    if container.attrs.get("State", {}).get("OOMKilled"):
        return ": it ran out of memory"
    said = [line.removeprefix("vdesk-entrypoint: ") for line in last_log(container).splitlines()
            if line.startswith("vdesk-entrypoint: ") and "ready:" not in line]
    return f": {said[-1]}" if said else ""


# -- checking what callers pass ------------------------------------------------------------------
def check_name(name: Any) -> str:
    """``name`` if it is a valid desktop (container) name."""
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):  # match() would let a trailing newline through
        raise InvalidArgument(f"invalid desktop name {name!r}: use letters, digits, '_', '.', '-' (max 63)")
    return name

"""The desktops on an engine, found by their label: list, look up, remove, prune.

A desktop is a container labelled ``vdesk=desktop``; its other labels (see
:meth:`vdesk.container.RunOptions.labels`) say what ``vdesk ls`` shows. Containers without
that label are never touched.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime, timezone

import docker
import docker.errors
from docker.models.containers import Container
from pydantic import BaseModel, ConfigDict, computed_field, field_serializer

from vdesk import engine as engines
from vdesk.clock import ClockSettings
from vdesk.container import LABEL, check_name, parse_size, published_port, remove_container
from vdesk.errors import DesktopNotFound

UNSTARTED_GRACE = 60  # seconds a container may sit created and never started before prune takes it


class DesktopInfo(BaseModel):
    """What ``vdesk ls`` shows of a desktop, read from its container's labels and state
    (``vdesk ls --json`` prints this model)."""

    model_config = ConfigDict(frozen=True)

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
    clock: str | None = None  # the time the desktop was started at ("YYYY-MM-DD HH:MM:SS" UTC); None: the real time

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ttl_left(self) -> float | None:
        if self.expires_at is None:
            return None
        return max(0.0, (self.expires_at - datetime.now(timezone.utc)).total_seconds())

    @field_serializer("size")
    def _size_text(self, size: tuple[int, int]) -> str:
        return f"{size[0]}x{size[1]}"


def desktop_info(container: Container) -> DesktopInfo:
    """The :class:`DesktopInfo` of a desktop's container, as last read from the engine."""
    labels = container.labels
    expires = int(labels.get("vdesk.expires-at", "0") or 0)
    return DesktopInfo(
        name=container.name, id=container.short_id, status=container.status,
        size=parse_size(labels.get("vdesk.size", "0x0")), scale=float(labels.get("vdesk.scale", "1")),
        created=_created(container),
        expires_at=datetime.fromtimestamp(expires, timezone.utc) if expires else None,
        owner=labels.get("vdesk.owner", "?"), leased=labels.get("vdesk.leased") == "true",
        vnc_address=f"127.0.0.1::{port}" if (port := published_port(container)) else None,
        clock=clock.start if (clock := ClockSettings.from_labels(labels)) else None,
    )


def find_desktop(client: docker.DockerClient, name: str) -> Container:
    """The container of the desktop named ``name``; :class:`DesktopNotFound` if there is none."""
    check_name(name)
    try:
        container = client.containers.get(name)
    except docker.errors.NotFound:
        raise DesktopNotFound(f"no desktop named {name!r} (see `vdesk ls`)") from None
    if LABEL not in container.labels:
        raise DesktopNotFound(f"container {name!r} is not a vdesk desktop")
    return container


def list_desktops(engine: str | None = None, client: docker.DockerClient | None = None) -> list[DesktopInfo]:
    """Every vdesk desktop on the engine, running or not."""
    client = client or engines.connect(engine)
    # ignore_removed: a desktop removed between the listing and its inspection is no error
    containers = client.containers.list(all=True, filters={"label": f"{LABEL}=desktop"}, ignore_removed=True)
    return sorted((desktop_info(c) for c in containers), key=lambda info: info.created)


def remove_desktops(names: Sequence[str], engine: str | None = None) -> list[str]:
    """Remove the named desktops; raises :class:`DesktopNotFound` before removing any if one is missing."""
    names = [check_name(name) for name in names]
    client = engines.connect(engine)
    containers = [find_desktop(client, name) for name in names]
    for container in containers:
        remove_container(container)
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
        if container.labels.get(LABEL) != "desktop" or (only is not None and container.name not in only):
            continue
        if _unusable(container, now):
            remove_container(container)
            removed.append(container.name)
    return removed


def _unusable(container: Container, now: float) -> bool:
    labels, status = container.labels, container.status
    expires = _label_number(labels, "vdesk.expires-at")
    expired = 0 < expires <= now
    stopped = status in ("exited", "dead") or (status == "created" and _age(container) > UNSTARTED_GRACE)
    orphaned = labels.get("vdesk.leased") == "true" and status not in ("running", "paused", "created")
    return expired or stopped or orphaned


def _label_number(labels: dict[str, str], key: str) -> float:
    try:
        return float(labels.get(key) or 0)
    except ValueError:
        return 0.0


def _age(container: Container) -> float:
    """Seconds since the engine created ``container``."""
    return time.time() - _created(container).timestamp()


def _created(container: Container) -> datetime:
    # The engine's own record: every container has it, also those not made by vdesk (compose).
    return datetime.strptime(container.attrs["Created"][:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)

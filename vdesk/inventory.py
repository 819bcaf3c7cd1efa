"""The desktops on an engine, found by their label: list, look up, remove, prune.

A desktop is a container labelled ``vdesk=desktop``; its other labels (see
:meth:`vdesk.container.RunOptions.labels`) say what ``vdesk ls`` shows. Containers without
that label are never touched.

Whose a desktop is: its ``vdesk.owner`` label is ``user@host:pid`` of the process that started
it, and a leased one (``vdesk.leased``) lives only while that process holds its lease. So
:func:`remove_all` (``vdesk down --all``) takes this user's desktops and leaves what a live
process holds and what other users own, each with its reason: on a shared engine "all" once
meant other processes' desktops in the middle of their work.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

import docker
import docker.errors
from docker.models.containers import Container
from pydantic import BaseModel, ConfigDict, computed_field, field_serializer

from vdesk import engine as engines
from vdesk.clock import ClockSettings
from vdesk.container import (LABEL, check_name, created_at, parse_size, published_port, remove_container, this_user,
                             unusable)
from vdesk.errors import DesktopNotFound
from vdesk import forks
from vdesk.forks import Checkpoint


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


class Listing(BaseModel):
    """What ``vdesk ls --json`` prints: the desktops on the engine and the checkpoints on its
    host (none where the engine cannot checkpoint), oldest first."""

    desktops: list[DesktopInfo]
    checkpoints: list[Checkpoint]


def desktop_info(container: Container) -> DesktopInfo:
    """The :class:`DesktopInfo` of a desktop's container, as last read from the engine."""
    labels = container.labels
    expires = int(labels.get("vdesk.expires-at", "0") or 0)
    return DesktopInfo(
        name=container.name, id=container.short_id, status=container.status,
        size=parse_size(labels.get("vdesk.size", "0x0")), scale=float(labels.get("vdesk.scale", "1")),
        created=created_at(container),
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


def remove_named(names: Sequence[str], engine: str | None = None) -> list[str]:
    """Remove the named desktops and checkpoints (``vdesk down NAME``); returns what went, a
    checkpoint as ``checkpoint NAME``. Raises :class:`DesktopNotFound` before removing any if a
    name is neither. Forks already started from a removed checkpoint run on."""
    names = [check_name(name) for name in names]
    client = engines.connect(engine)
    checkpoints = {checkpoint.name for checkpoint in forks.list_checkpoints(client)}
    found: list[Container | str] = []
    for name in names:
        found.append(name if name in checkpoints else _find_either(client, name))
    removed = []
    for item in found:
        if isinstance(item, str):
            forks.remove(client, item, missing_ok=True)
            removed.append(f"checkpoint {item}")
        else:
            remove_container(item)
            removed.append(item.name)
    return removed


def prune_named(names: Sequence[str], engine: str | None = None) -> tuple[list[str], list[Kept]]:
    """``vdesk prune NAME...``: of the named desktops and checkpoints, remove those nobody can use
    any more (see :func:`prune_desktops` and :func:`vdesk.forks.prune`); returns what went (a
    checkpoint as ``checkpoint NAME``) and what was left, with why. Raises
    :class:`DesktopNotFound` before removing any if a name is neither."""
    names = [check_name(name) for name in names]
    client = engines.connect(engine)
    checkpoints = {checkpoint.name for checkpoint in forks.list_checkpoints(client)}
    for name in names:
        if name not in checkpoints:
            _find_either(client, name)
    removed = prune_desktops(engine, only=names)
    gone = set(forks.prune(client, only=names))
    removed += [f"checkpoint {name}" for name in names if name in gone]
    kept = [Kept(f"checkpoint {name}", "its desktop or a fork of it exists, or a run holds it", f"vdesk down {name}")
            for name in names if name in checkpoints and name not in gone]
    kept += [Kept(name, "it is running within its time-to-live", f"vdesk down {name}")
             for name in names if name not in checkpoints and name not in removed]
    return removed, kept


def _find_either(client: docker.DockerClient, name: str) -> Container:
    try:
        return find_desktop(client, name)
    except DesktopNotFound:
        raise DesktopNotFound(f"no desktop or checkpoint named {name!r} (see `vdesk ls`)") from None


@dataclass(frozen=True)
class Kept:
    """A desktop :func:`remove_all` left alone, and why."""

    name: str
    reason: str
    flag: str  # the option of ``vdesk down --all`` that would remove it


@dataclass(frozen=True)
class Removal:
    """What :func:`remove_all` removed and what it left."""

    removed: list[str]
    kept: list[Kept]


def remove_all(engine: str | None = None, *, include_leased: bool = False, everyone: bool = False) -> Removal:
    """Remove this user's desktops (``user@host`` of their owner label is this process's), except
    those whose lease a live process holds: a desktop in the middle of a program's work is
    removed only with ``include_leased``, another user's only with ``everyone`` (which removes
    every vdesk desktop on the engine)."""
    client = engines.connect(engine)
    removed, kept = [], []
    for info in list_desktops(client=client):
        reason = _keep_reason(info, this_user(), include_leased=include_leased, everyone=everyone)
        if reason is not None:
            kept.append(reason)
            continue
        try:
            remove_container(client.containers.get(info.id))
        except docker.errors.NotFound:
            continue  # gone since the listing (a lease ended): nothing to remove
        removed.append(info.name)
    return Removal(removed, kept)


def _keep_reason(info: DesktopInfo, me: str, *, include_leased: bool, everyone: bool) -> Kept | None:
    """Why ``remove_all`` leaves ``info`` alone, or None to remove it (pure: unit-tested)."""
    if everyone:
        return None
    user, _, pid = info.owner.rpartition(":")
    if user != me:
        return Kept(info.name, f"owned by {info.owner}", "--force")
    if info.leased and not include_leased and _lease_held(info, pid):
        return Kept(info.name, f"its lease is held by process {pid}, which may be using it", "--include-leased")
    return None


def _lease_held(info: DesktopInfo, pid: str) -> bool:
    """Whether a live process holds ``info``'s lease: it runs (a lease that ends stops it) and
    its owner's process, on this host, still exists."""
    if info.status not in ("running", "paused", "created"):
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False  # the holder is gone; its desktop is stopping by itself
    except (PermissionError, ValueError):
        pass  # another user's process, or an owner label vdesk did not write: assume held
    return True


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
        if unusable(container, now):
            remove_container(container)
            removed.append(container.name)
    return removed

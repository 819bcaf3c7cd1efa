"""Checkpoints of a running desktop, and new desktops (forks) started from one.

A checkpoint is CRIU's image of a desktop's whole process tree and its tmpfs contents (``/tmp``,
the home, ``/dev/shm``), taken through Docker's checkpoint command with the desktop left
running. A fork is a new container of the same image, options and hardening, started from
that image: it comes up with the checkpoint's screen, windows and programs mid-run, in about
the time Docker takes to hand CRIU the files (~1 s for a lean desktop), where a fresh desktop
plus the work to reach that state can take much longer. Only valid because a desktop's root is
read-only: everything that changes lives in what CRIU saves.

Checkpoints are directories in Docker's own state directory (``<DockerRootDir>/vdesk-checkpoints``,
root only), so that they outlive the desktop they were taken of (a leased desktop's container
is removed with everything in it). Docker has no way to hand a checkpoint to another container
(``--checkpoint-dir`` is refused), so forks need this process on the engine's host, as root: a
fork's copy is hard links into the new container's own checkpoint directory, plus one file of
its own (identical copies started at once collide in containerd's content store).

What a restored tree keeps that a fork must not: the original's VNC password (in Xvnc's memory
and its files) and the original's time-to-live watcher. :data:`RESET_SCRIPT` replaces both: Xvnc
reads its password file at each authentication, so new files mean a new password at once.
This module is the engine's side (the store, the checks, Docker's calls); :class:`vdesk.desktop.Desktop`
builds desktops on it (``checkpoint``, ``fork``, ``restore``).
"""

from __future__ import annotations

import functools
import io
import os
import re
import secrets
import shutil
import subprocess
import tarfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests.exceptions
from docker.models.containers import Container
from pydantic import BaseModel, ConfigDict

from vdesk.clock import ClockSettings
from vdesk.container import LABEL, Limits, RunOptions, check_name, container_options, parse_size, remove_container
from vdesk.coords import Screen
from vdesk.errors import CheckpointError, CheckpointUnavailable, DesktopNotFound, InvalidArgument

MIN_CRIU = (4, 1)  # kernels from 6.13 on split the vDSO; older CRIU cannot dump on them
STORE = "vdesk-checkpoints"
FORK_FILE = "vdesk-fork"  # the one file that makes each fork's copy of a checkpoint unique
CRIU_PLACES = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")  # dockerd's PATH
INSTALL_HINT = "scripts/criu/install-criu.sh builds one"
FORK_LABELS = ("vdesk.checkpoint", "vdesk.forked-from")
# Docker moves a checkpoint through containerd at ~20 ms per MB, and forks started at once queue:
# eight forks of a 230 MB Chromium desktop take minutes on two cores. A bound for a hung engine only.
START_TIMEOUT = 600
CHECKPOINT_ATTEMPTS = 3
PASSING_FAILURES = ("Connected TCP socket", "unable to freeze")
HARMLESS = "Can't setup RLIMIT_NOFILE for self"  # CRIU logs it as an error on hosts without CAP_SYS_RESOURCE

# Run in a fresh fork (as the desktop user): $1 is the fork's time-to-live in seconds (0: none),
# stdin its VNC password and view-only password, a line each. The files are replaced by rename,
# so Xvnc never reads half of one. The restored watchers are the entrypoint's subshells (same
# command name as it) and earlier forks' ones: killed parent first (a watcher whose sleep died
# first would stop the desktop), then their sleeps.
RESET_SCRIPT = r"""
set -eu
umask 077
d=/tmp/vdesk
IFS= read -r password
IFS= read -r view
printf '%s\n' "$password" > "$d/vnc-password.new"
printf '%s\n' "$view" > "$d/vnc-view-password.new"
printf '%s\n%s\n' "$password" "$view" | vncpasswd -f > "$d/vnc-password.rfb.new"
mv -f "$d/vnc-password.rfb.new" "$d/vnc-password.rfb"
mv -f "$d/vnc-password.new" "$d/vnc-password"
mv -f "$d/vnc-view-password.new" "$d/vnc-view-password"
entry=$(pgrep -o -x vdesk-entrypoin || true)
watchers="$( { [ -n "$entry" ] && pgrep -P "$entry" -x vdesk-entrypoin; pgrep -f -x 'sh -c .* vdesk-ttl [0-9]+'; } || true)"
for watcher in $watchers; do
  sleeps=$(pgrep -P "$watcher" || true)
  kill -KILL "$watcher" $sleeps 2>/dev/null || true
done
if [ "$1" -gt 0 ]; then
  setsid -f sh -c 'sleep "$1"; kill -TERM 1' vdesk-ttl "$1" </dev/null >/dev/null 2>&1
fi
"""


class Checkpoint(BaseModel):
    """A checkpoint on the engine's host: its name, the desktop it was taken of, when, its size
    in bytes, and what a fork of it is created with (image, screen, network, limits, variables,
    clock). ``vdesk ls --json`` prints it; the store keeps it as ``vdesk.json``."""

    model_config = ConfigDict(frozen=True)

    name: str
    source: str
    created: datetime
    size: int
    image: str  # the image's id: a process tree restores only onto the files it was dumped from
    image_name: str  # what the hardening is chosen by (the osworld image's sudo)
    screen: tuple[int, int, float]
    network: str
    limits: dict[str, Any]
    environment: dict[str, str]
    clock: dict[str, str] = {}

    def run_options(self, name: str, password: str, *, leased: bool, ttl: float | None) -> RunOptions:
        """How a fork named ``name`` is created: this checkpoint's options, its own password, lease and TTL."""
        clock = ClockSettings.from_labels(self.clock)
        return RunOptions(name=name, screen=Screen(*self.screen), password=password, network=self.network,  # type: ignore[arg-type]
                          ttl=ttl, leased=leased, limits=Limits(**self.limits), environment=self.environment,
                          clock=clock)


# -- what the engine needs -------------------------------------------------------------------------
def unavailable_message(*, experimental: bool, writable_root: str | None, root: str, criu: tuple[int, ...] | None) -> str | None:
    """What keeps an engine from checkpointing, as one line naming every missing piece; None
    when nothing does (pure: unit-tested). ``writable_root`` is Docker's state directory when
    this process can write it, ``criu`` the version of the CRIU dockerd would run."""
    missing = []
    if not experimental:
        missing.append("dockerd runs without --experimental (start it as `dockerd --experimental`; "
                       "scripts/setup-host.sh does)")
    if criu is None:
        missing.append(f"there is no CRIU on the engine's host ({INSTALL_HINT})")
    elif criu < MIN_CRIU:
        missing.append(f"CRIU {'.'.join(map(str, criu))} is too old: kernels from 6.13 on need CRIU >= "
                       f"{'.'.join(map(str, MIN_CRIU))} ({INSTALL_HINT})")
    if writable_root is None:
        missing.append(f"checkpoints are kept in Docker's state directory ({root}), which this process cannot "
                       "write: run vdesk as root on the engine's host")
    if not missing:
        return None
    return "this engine cannot checkpoint desktops: " + "; ".join(missing)


def criu_version() -> tuple[int, ...] | None:
    """The version of the CRIU first on dockerd's usual PATH, or None when there is none."""
    path = ":".join([*CRIU_PLACES, os.environ.get("PATH", "")])
    criu = shutil.which("criu", path=path)
    if criu is None:
        return None
    try:
        said = subprocess.run([criu, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"Version:\s*([0-9]+(?:\.[0-9]+)*)", said)
    return tuple(int(part) for part in found.group(1).split(".")) if found else None


def docker_root(client: docker.DockerClient) -> Path:
    """Docker's state directory; checks that this engine can checkpoint and this process can
    reach its files, else raises :class:`CheckpointUnavailable` naming what is missing."""
    return _checked_root(client.api.base_url, client)


@functools.lru_cache(maxsize=8)
def _checked_root(base_url: str, client: docker.DockerClient) -> Path:
    # Asked once per engine and process: `criu --version` and `docker info` cost 10-50 ms.
    info = client.info()
    root = str(info.get("DockerRootDir") or "/var/lib/docker")
    local = base_url.startswith("http+docker://") and os.path.isdir(os.path.join(root, "containers"))
    writable = root if local and os.access(os.path.join(root, "containers"), os.W_OK) else None
    message = unavailable_message(experimental=bool(info.get("ExperimentalBuild")), writable_root=writable,
                                  root=root, criu=criu_version())
    if message:
        _checked_root.cache_clear()  # a missing piece may be added while this process runs
        raise CheckpointUnavailable(message)
    return Path(root)


def _store(client: docker.DockerClient) -> Path:
    store = docker_root(client) / STORE
    store.mkdir(mode=0o700, exist_ok=True)
    return store


# -- taking one --------------------------------------------------------------------------------------
def take(client: docker.DockerClient, container: Container, name: str | None = None) -> Checkpoint:
    """Checkpoint the running desktop ``container`` under ``name`` (default: its name and a random
    suffix), leaving it running. Its holder must have closed its own VNC and X connections
    (a connection to outside the container cannot be dumped)."""
    store = _store(client)
    name = check_checkpoint_name(name or f"{container.name}-{secrets.token_hex(3)}")
    if (store / name).exists():
        raise InvalidArgument(f"a checkpoint named {name!r} already exists (see `vdesk ls`)")
    recipe = _recipe(client, container)
    _docker_checkpoint(client, container, name)
    made = docker_root(client) / "containers" / container.id / "checkpoints" / name
    target = store / name
    target.mkdir(mode=0o700)
    os.rename(made, target / "images")  # out of the container's directory: it outlives the container
    size = sum(entry.stat().st_size for entry in (target / "images").iterdir())
    checkpoint = Checkpoint(name=name, source=container.name, created=datetime.now(timezone.utc), size=size, **recipe)
    (target / "vdesk.json").write_text(checkpoint.model_dump_json())
    return checkpoint


def check_checkpoint_name(name: Any) -> str:
    """``name`` if it can name a checkpoint (the rules of a desktop's name)."""
    try:
        return check_name(name)
    except InvalidArgument:
        raise InvalidArgument(f"invalid checkpoint name {name!r}: use letters, digits, '_', '.', '-' (max 63)") from None


def _recipe(client: docker.DockerClient, container: Container) -> dict[str, Any]:
    """What a fork of ``container`` is created with, read from the container itself."""
    container.reload()
    labels, host, config = container.labels, container.attrs["HostConfig"], container.attrs["Config"]
    width, height = parse_size(labels.get("vdesk.size", "0x0"))
    variables = dict(entry.split("=", 1) for entry in config.get("Env") or [] if "=" in entry)
    return dict(
        image=container.attrs["Image"], image_name=config.get("Image") or container.attrs["Image"],
        screen=(width, height, float(labels.get("vdesk.scale", "1"))), network=host.get("NetworkMode") or "none",
        limits={"memory": host.get("Memory") or Limits.memory, "cpus": (host.get("NanoCpus") or 0) / 1e9 or Limits.cpus,
                "pids": host.get("PidsLimit") or Limits.pids, "shm": host.get("ShmSize") or Limits.shm},
        environment={key: value for key, value in variables.items() if not key.startswith("VDESK_")},
        clock={key: value for key, value in labels.items() if key.startswith("vdesk.clock")},
    )


def _docker_checkpoint(client: docker.DockerClient, container: Container, name: str) -> None:
    # Two failures pass by themselves: Docker's image health check opens a TCP connection to the
    # VNC server once a minute (a dump that catches one open fails; the check lasts
    # milliseconds), and on a busy machine runc may not get every process of a starting program
    # frozen in time ("unable to freeze"; it thaws them again).
    for attempt in range(CHECKPOINT_ATTEMPTS):
        try:
            response = client.api._post_json(client.api._url("/containers/{0}/checkpoints", container.id),
                                              data={"CheckpointID": name, "Exit": False})
            client.api._raise_for_status(response)
            return
        except docker.errors.APIError as error:
            said = _criu_said(str(error.explanation or error))
            if attempt < CHECKPOINT_ATTEMPTS - 1 and any(passing in said for passing in PASSING_FAILURES):
                time.sleep(0.5 * (attempt + 1))
                continue
            raise CheckpointError(f"checkpointing desktop {container.name} failed: {said}") from None


def _criu_said(message: str) -> str:
    """Docker's error with CRIU's own first error line, read from the log it names, which says
    what could not be dumped (an open connection to outside, ...)."""
    found = re.search(r"path=\s*(\S+\.log)", message)
    if found:
        try:
            errors = [line.split(") ", 1)[-1] for line in Path(found.group(1)).read_text(errors="replace").splitlines()
                      if "Error (" in line and HARMLESS not in line]
        except OSError:
            errors = []
        if errors:
            hint = " (close VNC viewers and tunnels to it first)" if "TCP" in errors[0] or "unix" in errors[0] else ""
            return f"CRIU: {errors[0].strip()}{hint}"
    return " ".join(message.split())


# -- the store ---------------------------------------------------------------------------------------
def load(client: docker.DockerClient, name: str) -> Checkpoint:
    """The checkpoint named ``name``; :class:`DesktopNotFound` when there is none."""
    path = _store(client) / check_checkpoint_name(name) / "vdesk.json"
    try:
        return Checkpoint.model_validate_json(path.read_text())
    except FileNotFoundError:
        raise DesktopNotFound(f"no checkpoint named {name!r} (see `vdesk ls`)") from None


def list_checkpoints(client: docker.DockerClient) -> list[Checkpoint]:
    """Every checkpoint on the engine's host, oldest first; none where checkpoints are unavailable."""
    try:
        store = _store(client)
    except CheckpointUnavailable:
        return []
    found = []
    for entry in store.iterdir():
        try:
            found.append(Checkpoint.model_validate_json((entry / "vdesk.json").read_text()))
        except (OSError, ValueError):
            continue  # being written or removed
    return sorted(found, key=lambda checkpoint: checkpoint.created)


def remove(client: docker.DockerClient, name: str) -> None:
    """Remove the checkpoint ``name`` (forks already running are not touched)."""
    load(client, name)
    shutil.rmtree(_store(client) / name, ignore_errors=True)


def prune(client: docker.DockerClient) -> list[str]:
    """Remove the checkpoints nobody uses any more: their desktop is gone and no desktop forked
    from them exists. Returns their names."""
    checkpoints = list_checkpoints(client)
    if not checkpoints:
        return []
    containers = client.containers.list(all=True, filters={"label": f"{LABEL}=desktop"}, ignore_removed=True)
    in_use = {c.name for c in containers} | {c.labels.get("vdesk.checkpoint") for c in containers}
    removed = []
    for checkpoint in checkpoints:
        if checkpoint.source not in in_use and checkpoint.name not in in_use:
            shutil.rmtree(_store(client) / checkpoint.name, ignore_errors=True)
            removed.append(checkpoint.name)
    return removed


# -- starting a fork -------------------------------------------------------------------------------------
def start(client: docker.DockerClient, checkpoint: Checkpoint, options: RunOptions) -> Container:
    """Create a desktop's container with ``options`` and start it from ``checkpoint``; the
    container is removed again when that fails. Its holder then runs :data:`RESET_SCRIPT`."""
    root = docker_root(client)
    images = root / STORE / checkpoint.name / "images"
    if not images.is_dir():
        raise DesktopNotFound(f"no checkpoint named {checkpoint.name!r} (see `vdesk ls`)")
    labels = dict(zip(FORK_LABELS, (checkpoint.name, checkpoint.source)))
    try:
        container = client.containers.create(checkpoint.image, **container_options(checkpoint.image_name, options, labels))
    except docker.errors.ImageNotFound:
        raise CheckpointError(f"checkpoint {checkpoint.name}: its image {checkpoint.image_name} "
                              f"({checkpoint.image[:19]}) is gone") from None
    except docker.errors.APIError as error:
        if error.status_code == 409:
            raise InvalidArgument(f"a container named {options.name!r} already exists") from None
        raise CheckpointError(f"creating fork {options.name} failed: {error.explanation}") from None
    try:
        _link_checkpoint(images, root / "containers" / container.id / "checkpoints" / checkpoint.name, container.id)
        response = client.api._post(client.api._url("/containers/{0}/start", container.id),
                                    params={"checkpoint": checkpoint.name}, timeout=START_TIMEOUT)
        client.api._raise_for_status(response)
    except docker.errors.APIError as error:
        remove_container(container)
        said = _criu_said(str(error.explanation or error))
        raise CheckpointError(f"starting fork {options.name} from {checkpoint.name} failed: {said}") from None
    except requests.exceptions.RequestException:
        remove_container(container)
        raise CheckpointError(f"starting fork {options.name} from {checkpoint.name}: the engine did not answer "
                              f"within {START_TIMEOUT} s") from None
    except BaseException:
        remove_container(container)
        raise
    return container


def _link_checkpoint(images: Path, target: Path, unique: str) -> None:
    """The checkpoint's files in ``target`` as hard links (0.1 ms, no copy), and one file that
    only this copy has."""
    target.mkdir(parents=True, mode=0o700)
    for entry in images.iterdir():
        os.link(entry, target / entry.name)
    (target / FORK_FILE).write_text(unique)


def fork_names(source: str, n: int, names: list[str] | None) -> list[str]:
    """The names of ``n`` forks: ``names`` checked, or ``<source>-f<random>``."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 256:
        raise InvalidArgument(f"n must be a whole number of forks from 1 to 256, got {n!r}")
    if names is None:
        stem = source[:50]
        return [f"{stem}-f{secrets.token_hex(3)}" for _ in range(n)]
    if len(names) != n or len(set(names)) != n:
        raise InvalidArgument(f"give {n} different names for {n} forks, got {names!r}")
    return [check_name(name) for name in names]


def reset_argv(ttl: float | None) -> list[str]:
    """The command that makes a fresh fork its own (see :data:`RESET_SCRIPT`)."""
    return ["sh", "-c", RESET_SCRIPT, "vdesk-fork", str(int(ttl or 0))]


def remaining_ttl(container: Container) -> float | None:
    """Seconds until ``container``'s time-to-live runs out (None: it has none); at least 1."""
    expires = int(container.labels.get("vdesk.expires-at", "0") or 0)
    return max(1.0, expires - time.time()) if expires else None


# -- moving one to another engine's host (an addition beside the fork path) ---------------------------------
def export(client: docker.DockerClient, name: str) -> bytes:
    """The checkpoint ``name`` as one uncompressed tar (its images and its record), to be
    :func:`import_checkpoint`-ed on another engine's host. As sensitive as the desktop's memory:
    keep it where only root reads it, or in flight only."""
    load(client, name)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(_store(client) / name, arcname=".")
    return buffer.getvalue()


def import_checkpoint(client: docker.DockerClient, data: bytes, name: str | None = None) -> Checkpoint:
    """Store a checkpoint :func:`export`-ed elsewhere on this engine's host, as ``name`` (default:
    its own). Refused when that name is taken, or when this engine lacks the checkpoint's very
    image (a process tree restores only onto the files it was dumped from). Only regular files
    and folders are taken out of the tar; it is unpacked beside the store and renamed into it."""
    store = _store(client)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        record = tar.extractfile("./vdesk.json")
        if record is None:
            raise InvalidArgument("not a checkpoint: no vdesk.json in it")
        checkpoint = Checkpoint.model_validate_json(record.read())
        checkpoint = checkpoint.model_copy(update={"name": check_checkpoint_name(name or checkpoint.name)})
        if (store / checkpoint.name).exists():
            raise InvalidArgument(f"a checkpoint named {checkpoint.name!r} already exists here (give another name)")
        try:
            client.images.get(checkpoint.image)
        except docker.errors.ImageNotFound:
            raise CheckpointError(f"checkpoint {checkpoint.name}: this engine has not its image {checkpoint.image_name} "
                                  f"({checkpoint.image[:19]}); build or load that very image first") from None
        unpacked = store.parent / f".{STORE}-{secrets.token_hex(4)}"
        unpacked.mkdir(mode=0o700)
        try:
            tar.extractall(unpacked, filter="data")
            (unpacked / "vdesk.json").write_text(checkpoint.model_dump_json())
            os.rename(unpacked, store / checkpoint.name)
        except BaseException:
            shutil.rmtree(unpacked, ignore_errors=True)
            raise
    return checkpoint

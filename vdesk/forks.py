"""Checkpoints of a running desktop, and new desktops (forks) started from one.

A checkpoint is CRIU's image of a desktop's whole process tree and its tmpfs contents (``/tmp``,
the home, ``/dev/shm``), taken by runc (the engine's own runtime) with the desktop left
running. A fork is a new container of the same image, options and hardening, started from
that image: it comes up with the checkpoint's screen, windows and programs mid-run. Only valid
because a desktop's root is read-only: everything that changes lives in what CRIU saves.

Why runc and not Docker's own checkpoint commands: Docker packs a checkpoint into a tar, hashes
it and moves it through containerd's content store, once to take it and once per fork, which
cost about a second plus ~20 ms per MB (a Chromium fork took 13 s, its checkpoint 18 s). Here a
checkpoint is ``runc checkpoint`` of the container's runc state, and a fork is a container Docker
creates and starts normally under the runtime ``vdesk`` (``scripts/criu/vdesk-runc``, registered
with dockerd): that runtime restores the checkpoint with ``runc restore`` at the container's
``create``, reading the files where they lie, so a fork costs CRIU's restore and Docker's start.
Docker manages the fork like any container (exec, logs, removal, auto-remove with its lease).

Checkpoints are directories in Docker's own state directory (``<DockerRootDir>/vdesk-checkpoints``,
root only), so that they outlive the desktop they were taken of (a leased desktop's container
is removed with everything in it). A fork's copy is hard links in the new container's own
directory (``containers/<id>/vdesk-fork``), which the runtime finds through a mark in
``/run/vdesk-forks`` (root only); so forks need this process on the engine's host, as root.

What a restored tree keeps that a fork must not: the original's VNC password (in Xvnc's memory
and its files) and the original's time-to-live watcher. :data:`RESET_SCRIPT` replaces both: Xvnc
reads its password file at each authentication, so new files mean a new password at once.
This module is the engine's side (the store, the checks, the runtime's calls); :class:`vdesk.desktop.Desktop`
builds desktops on it (``checkpoint``, ``fork``, ``restore``).
"""

from __future__ import annotations

import fcntl
import glob
import io
import os
import re
import secrets
import shutil
import subprocess
import tarfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from collections.abc import Collection
from typing import Any

import docker
import docker.errors
import requests.exceptions
from docker.models.containers import Container
from pydantic import BaseModel, ConfigDict

from vdesk.clock import ClockSettings
from vdesk.container import LABEL, RunOptions, check_name, container_options, name_taken, remove_container
from vdesk.errors import CheckpointError, CheckpointUnavailable, DesktopNotFound, DesktopTimeout, InvalidArgument
from vdesk.execstream import ExecStream, Prelude
from vdesk.spec import DesktopSpec, Limits, parse_size

MIN_CRIU = (4, 1)  # kernels from 6.13 on split the vDSO; older CRIU cannot dump on them
STORE = "vdesk-checkpoints"
RUNTIME = "vdesk"  # dockerd's name for scripts/criu/vdesk-runc
MARKS = Path("/run/vdesk-forks")  # where vdesk-runc looks for the containers it restores
FORK_DIR = "vdesk-fork"  # in a fork's container directory: images/ (links to the checkpoint), work/ (CRIU's log)
HELD = "held"  # in a checkpoint's folder: what a Hold locks
NETWORK_NONE = "network-none"  # in FORK_DIR: the fork has no network (vdesk-runc's word for it)
# CRIU reads this before /etc/criu/runc.conf in vdesk's dumps (install-criu.sh writes it): no
# network lock, which the dump records and every fork's restore then undoes (0.05 s each, two
# iptables-restore runs); it guards TCP connections, and a desktop's checkpoint holds none.
CHECKPOINT_CONFIG = "/etc/criu/vdesk-checkpoint.conf"
RUNC_STATES = "/run/docker/runtime-*/moby"  # runc's state of Docker's containers, one directory per runtime
TOOL_PLACES = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")  # dockerd's PATH
INSTALL_HINT = "scripts/criu/install-criu.sh builds one"
RUNTIME_HINT = "scripts/criu/install-criu.sh registers it"
FORK_LABELS = ("vdesk.checkpoint", "vdesk.forked-from")
# A restore is CRIU's work and Docker's start (CRIU alone: 0.25-0.37 s for a lean desktop, 0.53 s for
# 430 MB, idle); a bound for a hung engine or eight big forks queued on a busy machine.
START_TIMEOUT = 600
CHECKPOINT_TIMEOUT = 600
CHECKPOINT_ATTEMPTS = 3
EXIT_CODE_WAIT = 5.0
HOST_CLOCKS = "timens-0.img"  # CRIU's record of the clocks of a tree dumped in the host's time namespace
BOOT_ID = "/proc/sys/kernel/random/boot_id"
PASSING_FAILURES = ("Connected TCP socket", "unable to freeze", "freezer", "in-flight socket", "Timeout reached")
HARMLESS = "Can't setup RLIMIT_NOFILE for self"  # CRIU logs it as an error on hosts without CAP_SYS_RESOURCE

# Run in a fresh fork (as the desktop user): $1 is the fork's time-to-live in seconds (0: none),
# stdin its VNC password and view-only password, a line each; the rest of the arguments, if any,
# is the program the exec goes on to be (the frames' relay, see reset_prelude). The restored
# watchers are the entrypoint's subshells (same command name as it) and earlier forks' ones:
# killed parent first (a watcher whose sleep died first would stop the desktop), then their
# sleeps. The passwords come last, so a connection with the new one proves every step ran; the
# files are replaced by rename, so Xvnc never reads half of one.
RESET_SCRIPT = r"""
set -eu
umask 077
d=/tmp/vdesk
ttl=$1
shift
IFS= read -r password
IFS= read -r view
entry=$(pgrep -o -x vdesk-entrypoin || true)
watchers="$( { [ -n "$entry" ] && pgrep -P "$entry" -x vdesk-entrypoin; pgrep -f -x 'sh -c .* vdesk-ttl [0-9]+'; } || true)"
for watcher in $watchers; do
  sleeps=$(pgrep -P "$watcher" || true)
  kill -KILL "$watcher" $sleeps 2>/dev/null || true
done
if [ "$ttl" -gt 0 ]; then
  setsid -f sh -c 'sleep "$1"; kill -TERM 1' vdesk-ttl "$ttl" </dev/null >/dev/null 2>&1
fi
printf '%s\n' "$password" > "$d/vnc-password.new"
printf '%s\n' "$view" > "$d/vnc-view-password.new"
printf '%s\n%s\n' "$password" "$view" | vncpasswd -f > "$d/vnc-password.rfb.new"
mv -f "$d/vnc-password.new" "$d/vnc-password"
mv -f "$d/vnc-view-password.new" "$d/vnc-view-password"
mv -f "$d/vnc-password.rfb.new" "$d/vnc-password.rfb"
exec "$@"
"""


# Each of vdesk's connections into a desktop (frames, X, the browser's, the accessibility
# reader's) runs a relay, socat, in an exec of its own: outside the process tree a dump takes
# (an exec's parent is outside the container), yet connected to the X or VNC server inside it.
# Closing our end ends the relay a moment later, and a dump in that moment fails ("External
# socket is used", "Connected TCP socket"). This waits inside the desktop until none is left
# (at most about 4 s: a relay someone else holds open, a viewer or a tunnel, stays, and the dump
# then says so).
RELAYS_ENDED = r"""
for _ in $(seq 150); do
  ps -eo ppid=,comm= | grep -qx ' *0 socat' || exit 0
  sleep 0.02
done
"""
RELAYS_TIMEOUT = 10.0


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
    boot: str = ""  # the engine's host's boot id when it was taken (see _link_checkpoint)

    def run_options(self, name: str, password: str, *, leased: bool, ttl: float | None) -> RunOptions:
        """How a fork named ``name`` is created: this checkpoint's options, its own password, lease and TTL."""
        clock = ClockSettings.from_labels(self.clock)
        width, height, scale = self.screen
        spec = DesktopSpec(size=(width, height), scale=scale, image=self.image_name, network=self.network,
                           ttl=ttl, limits=Limits(**self.limits), environment=self.environment)
        return RunOptions(name=name, spec=spec, password=password, leased=leased, clock=clock)


# -- what the engine needs -------------------------------------------------------------------------
def unavailable_message(*, runtime: bool, writable_root: str | None, root: str, criu: tuple[int, ...] | None) -> str | None:
    """What keeps an engine from checkpointing, as one line naming every missing piece; None
    when nothing does (pure: unit-tested). ``runtime`` says whether dockerd knows the runtime
    ``vdesk``, ``writable_root`` is Docker's state directory when this process can write it,
    ``criu`` the version of the CRIU runc would run."""
    missing = []
    if not runtime:
        missing.append(f"dockerd has no runtime named {RUNTIME!r}, which restores forks "
                       f"({RUNTIME_HINT} in /etc/docker/daemon.json)")
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


def _tool(name: str) -> str | None:
    """``name`` as dockerd would find it (its usual PATH first)."""
    return shutil.which(name, path=":".join([*TOOL_PLACES, os.environ.get("PATH", "")]))


def criu_version() -> tuple[int, ...] | None:
    """The version of the CRIU first on dockerd's usual PATH, or None when there is none."""
    criu = _tool("criu")
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
    reach its files, else raises :class:`CheckpointUnavailable` naming what is missing. Asked
    once per engine and process (by its address: each ``Desktop.fork`` makes a client of its
    own): ``docker info`` and ``criu --version`` cost 0.1-0.2 s, a fifth of a fork."""
    # Every local socket's base_url is the same "http+docker://localhost": its path tells them apart.
    base_url = client.api.base_url + getattr(getattr(client.api, "_custom_adapter", None), "socket_path", "")
    if base_url not in _CHECKED:
        _CHECKED[base_url] = _checked_root(base_url, client)  # a missing piece raises, so it is asked again
    return _CHECKED[base_url]


_CHECKED: dict[str, Path] = {}


def _checked_root(base_url: str, client: docker.DockerClient) -> Path:
    info = client.info()
    root = str(info.get("DockerRootDir") or "/var/lib/docker")
    local = base_url.startswith("http+docker://") and os.path.isdir(os.path.join(root, "containers"))
    writable = root if local and os.access(os.path.join(root, "containers"), os.W_OK) else None
    message = unavailable_message(runtime=RUNTIME in (info.get("Runtimes") or {}), writable_root=writable,
                                  root=root, criu=criu_version())
    if message:
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
    name = check_checkpoint_name(f"{container.name}-{secrets.token_hex(3)}" if name is None else name)
    check_not_a_desktop(client, name)
    target = store / name
    try:
        target.mkdir(mode=0o700)
    except FileExistsError:
        raise InvalidArgument(f"a checkpoint named {name!r} already exists (see `vdesk ls`)") from None
    try:
        recipe = _recipe(client, container)
        _runc_checkpoint(container, target)
        size = sum(entry.stat().st_size for entry in (target / "images").iterdir())
        checkpoint = Checkpoint(name=name, source=container.name, created=datetime.now(timezone.utc), size=size,
                                boot=_boot_id(), **recipe)
        (target / "vdesk.json").write_text(checkpoint.model_dump_json())
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise
    return checkpoint


def check_checkpoint_name(name: Any) -> str:
    """``name`` if it can name a checkpoint (the rules of a desktop's name)."""
    try:
        return check_name(name)
    except InvalidArgument:
        raise InvalidArgument(f"invalid checkpoint name {name!r}: use letters, digits, '_', '.', '-' (max 63)") from None


def check_not_a_desktop(client: docker.DockerClient, name: str) -> None:
    """Refuse ``name`` for a checkpoint when a desktop has it: ``vdesk fork NAME`` and ``vdesk down
    NAME`` take either, and would find the desktop."""
    try:
        client.containers.get(name)
    except docker.errors.NotFound:
        return
    raise InvalidArgument(f"{name!r} is a desktop's name: give the checkpoint a name no desktop has")


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


def _runc_state(container: Container) -> str:
    """The runc root that holds ``container``'s state (Docker keeps one per runtime)."""
    for states in glob.glob(RUNC_STATES):
        if os.path.isdir(os.path.join(states, container.id)):
            return states
    raise CheckpointError(f"checkpointing desktop {container.name} failed: the engine's runtime has no state for it "
                          "(is it running?)")


def _runc_checkpoint(container: Container, target: Path) -> None:
    """``runc checkpoint --leave-running`` of ``container`` into ``target/images`` (CRIU's log in
    ``target/work``). Two failures pass by themselves and are tried again: Docker's image health
    check opens a TCP connection to the VNC server once a minute (a dump that catches one open
    fails; the check lasts milliseconds), on a busy machine runc may not get every process of a
    starting program frozen in time ("unable to freeze"; it thaws them again), and a dump may
    catch a Unix socket on its way from one process to another with data still queued on it
    ("in-flight socket"; it arrives a moment later); on a machine at a load of 15 CRIU may not
    seize every thread within its own bound ("Timeout reached")."""
    runc, states = _tool("runc"), _runc_state(container)
    if runc is None:
        raise CheckpointUnavailable("this engine cannot checkpoint desktops: there is no runc on the engine's host")
    argv = [runc, "--root", states, "checkpoint", "--leave-running", "--image-path", str(target / "images"),
            "--work-path", str(target / "work"), container.id]
    environment = {**os.environ, "CRIU_CONFIG_FILE": CHECKPOINT_CONFIG}
    for attempt in range(CHECKPOINT_ATTEMPTS):
        shutil.rmtree(target / "images", ignore_errors=True)
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=CHECKPOINT_TIMEOUT, env=environment)
        except subprocess.TimeoutExpired:
            raise CheckpointError(f"checkpointing desktop {container.name}: runc did not finish within "
                                  f"{CHECKPOINT_TIMEOUT} s") from None
        if done.returncode == 0:
            return
        said = _criu_said(target / "work" / "dump.log", done.stderr)
        if attempt < CHECKPOINT_ATTEMPTS - 1 and any(passing in said for passing in PASSING_FAILURES):
            time.sleep(0.5 * (attempt + 1))
            continue
        raise CheckpointError(f"checkpointing desktop {container.name} failed: {said}")


def _criu_said(log: Path, stderr: str) -> str:
    """CRIU's own first error line from ``log``, which says what could not be dumped or
    restored (an open connection to outside, ...); else where the log ends; else runc's last
    line of ``stderr``."""
    try:
        logged = [line.strip() for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        logged = []
    errors = [line.split(") ", 1)[-1] for line in logged if "Error (" in line and HARMLESS not in line]
    if errors:
        hint = " (close VNC viewers and tunnels to it first)" if "TCP" in errors[0] or "unix" in errors[0] else ""
        return f"CRIU: {errors[0].strip()}{hint}"
    if logged:  # no error line, but the log says where it stopped (runc's own line only names the log)
        return f"CRIU's log ends: {' | '.join(logged[-3:])}"
    lines = [line for line in stderr.splitlines() if line.strip()]
    return " ".join(lines[-1].split()) if lines else "runc failed without a word"


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
        if entry.name.startswith("."):
            continue  # being removed
        try:
            found.append(Checkpoint.model_validate_json((entry / "vdesk.json").read_text()))
        except (OSError, ValueError):
            continue  # being written or removed
    return sorted(found, key=lambda checkpoint: checkpoint.created)


def remove(client: docker.DockerClient, name: str, *, missing_ok: bool = False) -> None:
    """Remove the checkpoint ``name`` (forks already running are not touched). With
    ``missing_ok`` one already gone is no error: what a run's cleanup wants, since a `vdesk
    prune` meanwhile removes a checkpoint whose desktop is gone and that no fork runs from."""
    try:
        load(client, name)
    except DesktopNotFound:
        if missing_ok:
            return
        raise
    _discard(_store(client) / name)


class Hold:
    """A process's claim on a checkpoint it will fork again (a run's task set up once): while it
    is held, :func:`prune` leaves it, though its desktop is gone and no fork runs from it just
    then. A shared ``flock`` on its ``held`` file, so the kernel lets go when the holder dies,
    however it dies, as a lease does; :meth:`release` lets go before."""

    def __init__(self, path: Path) -> None:
        self._fd: int | None = _open_held(path)
        fcntl.flock(self._fd, fcntl.LOCK_SH)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _open_held(path: Path) -> int:
    """A checkpoint's ``held`` file, made if missing (checkpoints of earlier versions lack it)."""
    return os.open(path, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)


def hold(client: docker.DockerClient, name: str) -> Hold:
    """Hold the checkpoint ``name`` (see :class:`Hold`); :class:`DesktopNotFound` if it is gone."""
    load(client, name)
    try:
        held = Hold(_store(client) / name / HELD)
    except FileNotFoundError:  # removed between the two
        raise DesktopNotFound(f"no checkpoint named {name!r} (see `vdesk ls`)") from None
    try:
        load(client, name)  # a prune that had the lock first removed it meanwhile
    except DesktopNotFound:
        held.release()
        raise
    return held


def prune(client: docker.DockerClient, only: Collection[str] | None = None) -> list[str]:
    """Remove the checkpoints nobody uses any more: their desktop is gone, no desktop forked
    from them exists and no process holds them (:class:`Hold`); of those named in ``only``, if
    given. Returns their names."""
    checkpoints = [c for c in list_checkpoints(client) if only is None or c.name in only]
    if not checkpoints:
        return []
    containers = client.containers.list(all=True, filters={"label": f"{LABEL}=desktop"}, ignore_removed=True)
    in_use = {c.name for c in containers} | {c.labels.get("vdesk.checkpoint") for c in containers}
    removed = []
    for checkpoint in checkpoints:
        if checkpoint.source not in in_use and checkpoint.name not in in_use and _remove_unheld(client, checkpoint.name):
            removed.append(checkpoint.name)
    return removed


def _remove_unheld(client: docker.DockerClient, name: str) -> bool:
    """Remove checkpoint ``name`` unless a process holds it; whether it was removed. The lock is
    kept while the files go, so a hold taken meanwhile finds the checkpoint gone."""
    folder = _store(client) / name
    try:
        fd = _open_held(folder / HELD)
    except FileNotFoundError:
        return False  # removed by someone else meanwhile
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return False
    try:
        return _discard(folder)
    finally:
        os.close(fd)


def _discard(folder: Path) -> bool:
    """Remove a checkpoint's folder; whether this call did (and not another remover at the same
    time): it is renamed out of the store first, which only one of them can do."""
    doomed = folder.with_name(f".removing-{folder.name}-{secrets.token_hex(4)}")
    try:
        os.rename(folder, doomed)
    except FileNotFoundError:
        return False
    shutil.rmtree(doomed, ignore_errors=True)
    return True


# -- starting a fork -------------------------------------------------------------------------------------
def start(client: docker.DockerClient, checkpoint: Checkpoint, options: RunOptions) -> Container:
    """Create a desktop's container with ``options`` under the runtime ``vdesk`` and start it,
    which restores ``checkpoint`` into it; the container is removed again when that fails. Its
    holder then runs :data:`RESET_SCRIPT`."""
    root = docker_root(client)
    images = root / STORE / checkpoint.name / "images"
    if not images.is_dir():
        raise DesktopNotFound(f"no checkpoint named {checkpoint.name!r} (see `vdesk ls`)")
    labels = dict(zip(FORK_LABELS, (checkpoint.name, checkpoint.source)))
    try:
        container = client.containers.create(checkpoint.image, runtime=RUNTIME,
                                             **container_options(checkpoint.image_name, options, labels))
    except docker.errors.ImageNotFound:
        raise CheckpointError(f"checkpoint {checkpoint.name}: its image {checkpoint.image_name} "
                              f"({checkpoint.image[:19]}) is gone") from None
    except docker.errors.APIError as error:
        if error.status_code == 409:
            raise name_taken(client, options.name) from None
        raise CheckpointError(f"creating fork {options.name} failed: {error.explanation}") from None
    mark, fork = MARKS / container.id, root / "containers" / container.id / FORK_DIR
    try:
        _link_checkpoint(images, fork / "images", same_boot=checkpoint.boot == _boot_id())
        if checkpoint.network == "none":  # Docker's network hook may run beside the restore (vdesk-runc)
            (fork / NETWORK_NONE).touch(mode=0o600)
        MARKS.mkdir(mode=0o700, exist_ok=True)
        mark.symlink_to(fork)
        response = client.api._post(client.api._url("/containers/{0}/start", container.id), timeout=START_TIMEOUT)
        client.api._raise_for_status(response)
    except docker.errors.APIError as error:
        said = _criu_said(fork / "work" / "restore.log", str(error.explanation or error))
        remove_container(container)
        raise CheckpointError(f"starting fork {options.name} from {checkpoint.name} failed: {said}") from None
    except requests.exceptions.RequestException:
        remove_container(container)
        raise CheckpointError(f"starting fork {options.name} from {checkpoint.name}: the engine did not answer "
                              f"within {START_TIMEOUT} s") from None
    except BaseException:
        remove_container(container)
        raise
    finally:
        mark.unlink(missing_ok=True)  # the runtime's start removes it; not when the restore failed
    return container


def _link_checkpoint(images: Path, target: Path, *, same_boot: bool) -> None:
    """The checkpoint's files in ``target`` as hard links (0.1 ms, no copy): a fork being
    restored keeps reading them when the checkpoint is removed meanwhile.

    Less the clocks CRIU saved, on the host that has run on since the dump: with them, CRIU
    restores the tree in a time namespace of its own (its monotonic clock going on from the
    checkpoint's), which neither runc nor Docker know of. A process ``docker exec`` then starts
    in the fork lives in the host's, and once one outlived its exec under the fork's init (a
    program started in the background, the fork's time-to-live watcher) the fork's own checkpoint
    could not be restored ("Can't restore sub-task in NS"): no fork of a fork, no second undo.
    Without them the fork's monotonic clock has moved on by the time since the dump, as after a
    pause. After a reboot (or on another host) the host's clock may be behind the checkpoint's,
    and a clock going back would stall the programs' timers: there the clocks stay."""
    target.mkdir(parents=True, mode=0o700)
    for entry in images.iterdir():
        if same_boot and entry.name == HOST_CLOCKS:
            continue
        os.link(entry, target / entry.name)


def _boot_id() -> str:
    """This host's boot id: the same while its monotonic clock runs on."""
    try:
        return Path(BOOT_ID).read_text().strip()
    except OSError:
        return ""


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


def check_names_free(client: docker.DockerClient, names: list[str]) -> None:
    """Refuse fork names a desktop or a checkpoint already has, before anything is dumped or started."""
    checkpoints = {checkpoint.name for checkpoint in list_checkpoints(client)}
    for name in names:
        try:
            client.containers.get(name)
        except docker.errors.NotFound:
            if name in checkpoints:
                raise InvalidArgument(f"{name!r} is a checkpoint's name: give the desktop a name no checkpoint has")
            continue
        raise name_taken(client, name)


def step_aside(container: Container) -> None:
    """Rename a desktop's container out of the way of its restored successor, which takes its
    name; it runs on meanwhile (see :func:`step_back`)."""
    _rename(container, f"{container.name[:50]}-was-{secrets.token_hex(3)}")


def step_back(container: Container, name: str) -> None:
    """A desktop that stepped aside for a restore that failed takes its name back."""
    _rename(container, name)


def _rename(container: Container, name: str) -> None:
    try:
        container.rename(name)
    except docker.errors.APIError as error:
        raise CheckpointError(f"renaming desktop {container.name} to {name} failed: {error.explanation}") from None
    container.reload()


def reset_prelude(password: str, view_password: str, ttl: float | None) -> Prelude:
    """:data:`RESET_SCRIPT` as the start of an exec that goes on to be another program: the
    frames' relay of a fresh fork, so one exec makes the fork its own and carries its first frame."""
    return Prelude(("sh", "-c", RESET_SCRIPT, "vdesk-fork", str(int(ttl or 0))),
                   f"{password}\n{view_password}\n".encode())


def reset(api: docker.APIClient, container: Container, password: str, view_password: str, ttl: float | None,
          timeout: float) -> None:
    """Run :data:`RESET_SCRIPT` alone in the fresh fork ``container`` and say how it failed: what
    a fork falls back on when its relay with the reset did not connect."""
    prelude = reset_prelude(password, view_password, ttl)
    ended, said = threading.Event(), bytearray()
    stream = ExecStream(api, container.id, list(prelude.argv), on_data=said.extend, on_close=ended.set,
                        on_stderr=said.extend, label=container.name)
    try:
        stream.send(prelude.stdin)
        stream.finish_input()
        if not ended.wait(timeout):
            raise DesktopTimeout(f"fork {container.name}: its new password was not set within {timeout:g} s")
        deadline = time.monotonic() + EXIT_CODE_WAIT  # the engine records the exit code just after the end
        while (code := stream.exit_code()) is None and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        stream.close()
    if code != 0:
        raise CheckpointError(f"fork {container.name}: setting its new password failed ({code}): "
                              f"{bytes(said).decode(errors='replace').strip() or 'no output'}")


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

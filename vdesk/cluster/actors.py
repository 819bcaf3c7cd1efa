"""Desktops hosted in Ray actors: each one up on a node that has Docker and the image.

    vdesk.cluster.connect("127.0.0.1:6379")
    with RemoteDesktop.up(DesktopSpec(size=(1280, 800))) as desktop:
        desktop.input.execute([{"type": "click", "inputs": {"point": {"raw": {"x": 10, "y": 10}}}}])
        desktop.screen.shot().save("shot.png")

The actor calls :meth:`Desktop.up` in its constructor, so the container runs on the actor's
node and is leased to the actor's worker process: when the actor is killed or its node dies,
the worker dies with it and the lease removes the container. A remote desktop has the parts of
a local one (``screen``, ``input``, ``text``, ``elements``, ``programs``, ``files``,
``clipboard``, ``windows``), forwarded as they are: ``desktop.input.execute(batch)`` runs
``execute(batch)`` on the real desktop's ``input`` on the node. What they return travels by
pickle, images as PNG (exact); the host decodes them. Every call from the host waits a bounded
time: the call's own ``timeout`` argument, if it has one, plus :data:`CALL_SLACK`.

Checkpoints live on the node whose engine took them (they are files in its state directory),
so ``desktop.checkpoint()`` returns a :class:`NodeCheckpoint` that names that node, and
:meth:`RemoteDesktop.fork` starts its forks there and nowhere else::

    start = desktop.checkpoint()               # the desktop keeps running
    forks = RemoteDesktop.fork(start, 4)       # four desktops on start.node_id
    desktop.restore(start)                     # back to it, in place
    there = move_checkpoint(start, other_node) # a copy on another node, to fork there
    remove_checkpoint(start)
"""

from __future__ import annotations

import functools
import io
import logging
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import ray
import ray.exceptions
from PIL import Image
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from vdesk import engine as engines, forks
from vdesk.cluster.membership import RESOURCE, desktop_nodes
from vdesk.coords import ImageSpace, Screen
from vdesk.desktop import Desktop
from vdesk.errors import (ClusterError, DesktopGone, DesktopLost, DesktopStartFailed, DesktopTimeout,
                         InvalidArgument, VdeskError, first_line)
from vdesk.forks import Checkpoint
from vdesk.encoding import encode
from vdesk.spec import DesktopSpec
from vdesk.usage import Usage, container_usage

PARTS = frozenset({"screen", "input", "text", "elements", "programs", "files", "clipboard", "windows"})
UP_TIMEOUT = 120.0     # seconds for an actor to be placed, start its worker and bring a desktop up
CALL_SLACK = 30.0      # seconds a call may take beyond its own timeout (queueing, transfer)
CALL_TIMEOUT = 60.0    # seconds for a call that has no timeout of its own
CLOSE_TIMEOUT = 30.0   # seconds for a graceful close before the actor is killed anyway
# Seconds for a checkpoint, a restore or a fork on the node: a browser's desktop holds hundreds
# of MB, which can take minutes on a loaded node.
CHECKPOINT_TIMEOUT = forks.START_TIMEOUT + 60.0

# The errors that mean the desktop's host went away (its actor, its worker or its node), not
# that the work on it failed: only these make an item worth running again elsewhere.
LOST_ERRORS: tuple[type[BaseException], ...] = (
    ray.exceptions.RayActorError,          # includes ActorDiedError and ActorUnavailableError
    ray.exceptions.NodeDiedError,
    ray.exceptions.WorkerCrashedError,
    ray.exceptions.ActorUnschedulableError,  # a hard node affinity to a node that died meanwhile
    ray.exceptions.ObjectLostError,
    ray.exceptions.LocalRayletDiedError,
)

T = TypeVar("T")
log = logging.getLogger(__name__)


# -- what crosses the wire --------------------------------------------------------------------
@dataclass(frozen=True)
class NodeCheckpoint:
    """A checkpoint of a cluster desktop and the node whose engine holds it: its forks and
    restores happen on that node only (its files are in that engine's state directory)."""

    checkpoint: Checkpoint
    node_id: str

    @property
    def name(self) -> str:
        return self.checkpoint.name

    def check_node(self, node_id: str | None, what: str) -> None:
        """Refuse ``what`` on another node than this checkpoint's, in one line."""
        if node_id is not None and node_id != self.node_id:
            raise InvalidArgument(f"{what}: checkpoint {self.name} is on node {self.node_id[:8]}, not on "
                                  f"{node_id[:8]}; only the node that holds it can start desktops from it")


@dataclass(frozen=True)
class RemoteInfo:
    """Where a hosted desktop lives."""

    name: str
    screen: Screen
    node_id: str
    hostname: str
    pid: int  # of the actor's worker process, which holds the lease


# -- the actor --------------------------------------------------------------------------------
class DesktopActor:
    """Hosts one desktop in a Ray worker process; use it through :func:`actor_class`.

    The desktop is brought up in the constructor, so its container runs on this actor's node
    and its lease is held by this worker process.
    """

    def __init__(self, spec: DesktopSpec, timeout: float, checkpoint: Checkpoint | None = None) -> None:
        if checkpoint is not None:  # a fork of it: size, image, limits, environment and clock are the checkpoint's
            (self._desktop,) = Desktop.fork(checkpoint, ttl=spec.ttl, timeout=timeout)
            return
        self._desktop = Desktop.up(spec, timeout=timeout)

    def where(self) -> RemoteInfo:
        """Which desktop this is and where it lives; answering at all says the actor is alive."""
        return RemoteInfo(self._desktop.name, self._desktop.screen.geometry, ray.get_runtime_context().get_node_id(),
                          socket.gethostname(), os.getpid())

    def screenshot(self, format: Literal["png", "jpeg"], quality: int, fresh: bool,
                   size: tuple[int, int] | None) -> bytes:
        return encode(self._desktop.screen.shot(size, fresh=fresh), format, quality)

    def part(self, part: str, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``desktop.<part>.<method>(*args, **kwargs)`` on the hosted desktop; an image comes back
        as PNG bytes."""
        if part not in PARTS or method.startswith("_"):
            raise InvalidArgument(f"no part method {part}.{method} of a desktop")
        found = getattr(getattr(self._desktop, part), method)(*args, **kwargs)
        return _Png(encode(found, "png")) if isinstance(found, Image.Image) else found

    def usage(self) -> Usage:
        """What the desktop uses, and this worker hosting it (read as for a local desktop, so
        local and Ray figures compare)."""
        return container_usage(self._desktop.container, host=True)

    def call(self, function: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        return function(self._desktop, *args)

    def checkpoint(self, name: str | None) -> Checkpoint:
        return self._desktop.checkpoint(name)

    def restore(self, checkpoint: Checkpoint) -> None:
        self._desktop.restore(checkpoint)

    def close(self) -> None:
        self._desktop.down()


@functools.cache
def actor_class() -> Any:
    """:class:`DesktopActor` as a Ray actor class; made on first use, so importing needs no cluster."""
    return ray.remote(DesktopActor)


# -- the host side ----------------------------------------------------------------------------
class RemotePart:
    """A part of a hosted desktop: each of its methods runs on the node, on the real part."""

    def __init__(self, desktop: RemoteDesktop, part: str) -> None:
        self._desktop = desktop
        self._part = part

    def __getattr__(self, method: str) -> Callable[..., Any]:
        if method.startswith("_"):
            raise AttributeError(method)

        def forwarded(*args: Any, **kwargs: Any) -> Any:
            own = kwargs.get("timeout")
            timeout = float(own) if isinstance(own, (int, float)) and not isinstance(own, bool) else CALL_TIMEOUT
            found = self._desktop._call("part", timeout, self._part, method, args, kwargs)
            return _decode(found.data) if isinstance(found, _Png) else found

        forwarded.__name__ = method
        return forwarded

    def __repr__(self) -> str:
        return f"<{self._part} of {self._desktop!r}>"


class RemoteScreen(RemotePart):
    """The screen of a hosted desktop: its geometry known here, the rest forwarded."""

    def __init__(self, desktop: RemoteDesktop, geometry: Screen) -> None:
        super().__init__(desktop, "screen")
        self.geometry = geometry
        self.width, self.height, self.scale = geometry.width, geometry.height, geometry.scale
        self.size, self.physical_size = geometry.size, geometry.physical_size

    def image(self) -> ImageSpace:
        return self.geometry.image()


class RemoteDesktop:
    """A desktop hosted by a :class:`DesktopActor`, driven from this process.

    Its parts are the hosted :class:`Desktop`'s, forwarded (see the module); images come back
    as PIL images. Leaving a ``with`` block (or :meth:`close`) removes the desktop and kills
    its actor. When the actor or its node dies, calls raise :class:`DesktopLost` and
    :attr:`lost` remembers why.
    """

    def __init__(self, actor: Any, info: RemoteInfo) -> None:
        self.actor = actor
        self.info = info
        self.name = info.name
        self.node_id = info.node_id
        self.lost: str | None = None
        self._closed = False
        self.screen = RemoteScreen(self, info.screen)
        self.input, self.text, self.elements, self.programs, self.files, self.clipboard, self.windows = (
            RemotePart(self, part) for part in ("input", "text", "elements", "programs", "files", "clipboard", "windows"))

    @classmethod
    def up(cls, spec: DesktopSpec | None = None, *, node_id: str | None = None,
           timeout: float = UP_TIMEOUT, on_actor: Callable[[Any], None] = lambda actor: None,
           checkpoint: Checkpoint | None = None) -> RemoteDesktop:
        """Start a desktop on the cluster (on ``node_id`` if given) and return once it is ready.

        Needs a connected Ray (see :func:`connect`) and a node with a free ``vdesk_desktop``.
        ``on_actor`` hears of the hosting actor as soon as it exists: killing it ends the wait.
        With ``checkpoint`` (held by ``node_id``'s engine) the desktop is a fork of it and of
        ``spec`` only its ttl counts; :meth:`fork` checks the node and starts several.
        """
        if not ray.is_initialized():
            raise ClusterError("Ray is not connected: call vdesk.cluster.connect(ADDRESS) first")
        # The desktop's own wait on the node ends first, so its error (not a bare timeout) comes back.
        actor = actor_class().options(**_actor_options(node_id)).remote(
            spec or DesktopSpec(), _on_the_node(timeout), checkpoint)
        try:
            on_actor(actor)
            info = _ask(actor.where.remote, timeout, "starting a desktop on the cluster")
        except BaseException:
            ray.kill(actor, no_restart=True)  # a desktop that came up late is removed by its lease
            raise
        return cls(actor, info)

    @classmethod
    def fork(cls, checkpoint: NodeCheckpoint, n: int = 1, *, node_id: str | None = None,
             ttl: float | None = None, timeout: float = UP_TIMEOUT) -> list[RemoteDesktop]:
        """``n`` new desktops started from ``checkpoint`` on the node that holds it, each in an
        actor of its own (see :meth:`Desktop.fork`); ``node_id``, when given, must be that node
        (:class:`InvalidArgument` otherwise). If one fails, none is left running."""
        checkpoint.check_node(node_id, f"forking {checkpoint.name}")
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 256:
            raise InvalidArgument(f"n must be a whole number of forks from 1 to 256, got {n!r}")
        if ray.is_initialized() and checkpoint.node_id not in {node.id for node in desktop_nodes()}:
            raise ClusterError(f"checkpoint {checkpoint.name} is on node {checkpoint.node_id[:8]}, which is no "
                               "longer in the cluster (or offers no desktops)")
        spec, each = DesktopSpec(ttl=ttl), _on_the_node(timeout + CHECKPOINT_TIMEOUT)
        # All actors at once (the node starts them side by side), then each one's answer.
        actors = [actor_class().options(**_actor_options(checkpoint.node_id)).remote(spec, each, checkpoint.checkpoint)
                  for _ in range(n)]
        try:
            infos = [_ask(actor.where.remote, timeout + CHECKPOINT_TIMEOUT, f"forking {checkpoint.name} on its node")
                     for actor in actors]
        except BaseException:
            for actor in actors:
                ray.kill(actor, no_restart=True)  # a fork that came up late is removed by its lease
            raise
        return [cls(actor, info) for actor, info in zip(actors, infos)]

    def __enter__(self) -> RemoteDesktop:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<RemoteDesktop {self.name} on {self.node_id[:8]} {self.screen.width}x{self.screen.height}>"

    # -- beyond the parts ---------------------------------------------------------------------
    def screenshot_bytes(self, format: Literal["png", "jpeg"] = "png", *, quality: int = 85,
                         fresh: bool = True, size: tuple[int, int] | None = None) -> bytes:
        """The screen encoded on the node, as it travelled: for agents that send bytes on."""
        if format not in ("png", "jpeg"):
            raise InvalidArgument(f"format must be png or jpeg, got {format!r}")
        return self._call("screenshot", CALL_TIMEOUT, format, quality, fresh, size)

    @property
    def in_process(self) -> bool:
        return False  # calls run on the node: their arguments travel by pickle

    def call(self, function: Callable[..., T], *args: Any, timeout: float = CALL_TIMEOUT) -> T:
        """Run ``function(desktop, *args)`` on the node, next to the real :class:`Desktop`: for
        what has no method here (window queries, a whole episode). ``function``, its arguments
        and its result travel by pickle; a module-level function travels best."""
        return self._call("call", timeout, function, args)

    def usage(self) -> Usage:
        """A :class:`vdesk.usage.Usage` reading: the container's memory and CPU time, and the
        hosting worker's."""
        return self._call("usage", CALL_TIMEOUT)

    # -- checkpoints --------------------------------------------------------------------------
    def checkpoint(self, name: str | None = None) -> NodeCheckpoint:
        """Checkpoint the desktop on its node, leaving it running (see :meth:`Desktop.checkpoint`);
        the checkpoint stays on that node's engine until :func:`remove_checkpoint`."""
        return NodeCheckpoint(self._call("checkpoint", CHECKPOINT_TIMEOUT, name), self.node_id)

    def restore(self, checkpoint: NodeCheckpoint) -> None:
        """Put the desktop back to ``checkpoint`` in place (see :meth:`Desktop.restore`); a
        checkpoint of another node is refused."""
        checkpoint.check_node(self.node_id, f"restoring {self.name}")
        self._call("restore", CHECKPOINT_TIMEOUT, checkpoint.checkpoint)

    # -- lifecycle ----------------------------------------------------------------------------
    def close(self) -> None:
        """Remove the desktop, then kill the actor (which would remove it through the lease anyway)."""
        if self._closed:
            return
        self._closed = True
        try:
            if self.lost is None:
                _ask(self.actor.close.remote, CLOSE_TIMEOUT, f"closing {self.name}")
        except (VdeskError, ray.exceptions.RayError) as error:
            log.debug("closing %s: %s", self.name, error)  # the kill below removes it all the same
        finally:
            kill(self.actor)

    def check_alive(self, timeout: float = 10.0) -> bool:
        """Ask the actor whether it is still there; a loss (or no answer) sets :attr:`lost`."""
        if self.lost is None and not self._closed:
            try:
                _ask(self.actor.where.remote, timeout, f"checking {self.name}")
            except VdeskError as error:  # DesktopLost, or a node too far gone to answer
                self.lost = str(error)
        return self.lost is None

    def kill(self) -> None:
        """Kill the actor now; its worker dies and the lease removes the container."""
        self._closed = True
        kill(self.actor)

    def _call(self, method: str, timeout: float, *args: Any) -> Any:
        if self._closed:
            raise DesktopGone(f"desktop {self.name} is closed")
        try:
            return _ask(functools.partial(getattr(self.actor, method).remote, *args), timeout + CALL_SLACK,
                        f"{method} on {self.name}")
        except DesktopLost as error:
            self.lost = self.lost or str(error)
            raise


def _on_the_node(timeout: float) -> float:
    """The part of a start's ``timeout`` the node's own wait gets: it ends first, so its error
    (not a bare timeout) comes back, yet a short bound is not eaten whole by the slack of the
    call. (A scheduler's item with little time left passes that time plus :data:`CALL_SLACK`,
    so that its own deadline, not this wait, ends a slow start.)"""
    return max(timeout - CALL_SLACK, timeout * 0.75)


def _actor_options(node_id: str | None) -> dict[str, Any]:
    """How a desktop's actor is placed: a ``vdesk_desktop`` slot, on ``node_id`` if given."""
    options: dict[str, Any] = {"num_cpus": 0, "resources": {RESOURCE: 1}, "max_restarts": 0, "max_task_retries": 0}
    if node_id is not None:
        options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node_id, soft=False)
    return options


def remove_checkpoint(checkpoint: NodeCheckpoint, timeout: float = CALL_TIMEOUT, *, missing_ok: bool = False) -> None:
    """Remove ``checkpoint`` from the engine of the node that holds it (forks running from it
    are not touched); with ``missing_ok`` one already gone there is no error."""
    if not ray.is_initialized():
        raise ClusterError("Ray is not connected: call vdesk.cluster.connect(ADDRESS) first")
    _ask(functools.partial(_on(checkpoint.node_id, _remove_here).remote, checkpoint.name, missing_ok), timeout,
         f"removing checkpoint {checkpoint.name}")


class CheckpointHolder:
    """Holds a checkpoint on the node that has it (:class:`vdesk.forks.Hold`): a Ray actor of
    its own, so the hold lasts until :func:`hold_checkpoint`'s release kills it, or until the
    process that made it dies and Ray takes its actors with it."""

    def __init__(self, name: str) -> None:
        self._hold = forks.hold(engines.connect(None), name)

    def ready(self) -> bool:
        return True


@functools.cache
def _holder_class() -> Any:
    """:class:`CheckpointHolder` as a Ray actor class, made once (as :func:`actor_class`)."""
    return ray.remote(num_cpus=0, max_restarts=0)(CheckpointHolder)


def hold_checkpoint(checkpoint: NodeCheckpoint, timeout: float = CALL_TIMEOUT) -> Callable[[], None]:
    """Hold ``checkpoint`` on its node, so that a `vdesk prune` there leaves it while no fork
    runs from it; returns how to let go."""
    holder = _holder_class().options(
        scheduling_strategy=NodeAffinitySchedulingStrategy(checkpoint.node_id, soft=False)).remote(checkpoint.name)
    try:
        _ask(holder.ready.remote, timeout, f"holding checkpoint {checkpoint.name}")
    except BaseException:
        kill(holder)
        raise
    return functools.partial(kill, holder)


def move_checkpoint(checkpoint: NodeCheckpoint, node_id: str, *, name: str | None = None,
                    timeout: float = CHECKPOINT_TIMEOUT) -> NodeCheckpoint:
    """A copy of ``checkpoint`` on ``node_id``'s engine, stored as ``name`` (default: its own;
    give another when both nodes share one engine), to fork there; the original stays (remove
    it when done). The files travel through Ray's object store (tens to hundreds of MB), and the
    target engine must hold the checkpoint's very image, else it is refused in one line."""
    if not ray.is_initialized():
        raise ClusterError("Ray is not connected: call vdesk.cluster.connect(ADDRESS) first")
    if node_id not in {node.id for node in desktop_nodes()}:
        raise ClusterError(f"moving checkpoint {checkpoint.name}: node {node_id[:8]} is not in the cluster "
                           "(or offers no desktops)")
    packed = _on(checkpoint.node_id, _export_here).remote(checkpoint.name)  # the bytes go from node to node
    moved = _ask(functools.partial(_on(node_id, _import_here).remote, packed, name), timeout,
                 f"moving checkpoint {checkpoint.name} to node {node_id[:8]}")
    return NodeCheckpoint(moved, node_id)


def _remove_here(name: str, missing_ok: bool) -> None:
    forks.remove(engines.connect(None), name, missing_ok=missing_ok)


def _export_here(name: str) -> bytes:
    return forks.export(engines.connect(None), name)


def _import_here(data: bytes, name: str | None) -> Checkpoint:
    return forks.import_checkpoint(engines.connect(None), data, name)


@functools.cache
def _remote_function(function: Callable[..., Any]) -> Any:
    return ray.remote(num_cpus=0, max_retries=0)(function)


def _on(node_id: str, function: Callable[..., Any]) -> Any:
    """``function`` as a Ray task that runs on ``node_id`` only (where a checkpoint's files are)."""
    return _remote_function(function).options(scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False))


def kill(actor: Any) -> None:
    """Kill an actor; a dead one, or a Ray already shut down, is fine."""
    if not ray.is_initialized():
        return  # its actors went with the connection; a Ray call now would start a new local Ray
    try:
        ray.kill(actor, no_restart=True)
    except Exception as error:  # nothing left to kill
        log.debug("killing an actor: %s", error)


def _ask(send: Callable[[], Any], timeout: float, what: str) -> Any:
    """Send an actor call and wait for its answer, with a deadline, turning Ray's errors into
    vdesk's. Not once Ray has shut down: any Ray call then would start a new local Ray."""
    if not ray.is_initialized():
        raise DesktopLost(f"{what}: Ray has shut down in this process")
    try:
        return ray.get(send(), timeout=timeout)
    except ray.exceptions.GetTimeoutError:
        raise DesktopTimeout(f"{what} did not answer within {timeout:g} s") from None
    except ray.exceptions.RayTaskError as error:
        # The method itself raised; hand over the desktop's own error (DesktopGone, InvalidAction …).
        cause = error.cause
        if isinstance(cause, VdeskError):
            raise cause from None
        raise
    except ray.exceptions.ActorDiedError as error:
        if error.actor_init_failed:  # Desktop.up raised on the node: the desktop never started
            raise DesktopStartFailed(f"{what}: the desktop did not start on the node: {_init_cause(error)}") from None
        raise DesktopLost(f"{what}: the desktop's actor or node died ({type(error).__name__}: "
                          f"{first_line(error)})") from error
    except LOST_ERRORS as error:
        raise DesktopLost(f"{what}: the desktop's actor or node died ({type(error).__name__}: "
                          f"{first_line(error)})") from error


def _init_cause(error: BaseException) -> str:
    """The last line of the constructor's traceback that Ray folds into the message: the error itself."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    named = [line for line in lines if line.split(":", 1)[0].rsplit(".", 1)[-1].endswith(("Error", "Exception",
                                                                                          "Timeout", "Gone"))]
    return (named or lines or [type(error).__name__])[-1][:300]


@dataclass(frozen=True)
class _Png:
    """An image as it travels from the node: PNG, so exact (a wrapper: Ray sends bare bytes as
    bytes, whatever their class)."""

    data: bytes


def _decode(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image if image.mode == "RGB" else image.convert("RGB")

"""Desktops on a Ray cluster: each one hosted by an actor on a node that has Docker and the image.

    vdesk.ray.connect("127.0.0.1:6379")
    with RemoteDesktop.up(DesktopSpec(size=(1280, 800))) as desktop:
        desktop.execute([{"type": "click", "inputs": {"point": {"raw": {"x": 10, "y": 10}}}}])
        desktop.screenshot().save("shot.png")

The actor calls :meth:`Desktop.up` in its constructor, so the container runs on the actor's
node and is leased to the actor's worker process: when the actor is killed or its node dies,
the worker dies with it and the lease removes the container. Frames travel as PNG or JPEG
bytes; the host decodes them. Every call from the host waits a bounded time.

Nodes offer desktops through the custom resource ``vdesk_desktop`` (its amount on a node is
how many desktops the node may hold), e.g. ``ray start --resources '{"vdesk_desktop": 8}'``.
Every node needs Docker, the desktop image and vdesk installed.

:func:`run_episodes` runs a list of items over the cluster, one desktop each, at most
``parallel`` at once and at most ``per_node`` on one node, and retries an item once elsewhere
when its node (or its actor) dies. Every item ends with an :class:`EpisodeOutcome`.

This module is ``vdesk.ray``; ``import ray`` below is an absolute import and reaches the Ray
package, never this file.
"""

from __future__ import annotations

import collections
import functools
import io
import logging
import os
import socket
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from PIL import Image
from pydantic import BaseModel, ConfigDict, Field

from vdesk.channel import Completed
from vdesk.coords import Screen
from vdesk.desktop import DEFAULT_SIZE, Desktop, Limits
from vdesk.errors import DesktopGone, DesktopTimeout, InvalidAction, VdeskError
from vdesk.images import IMAGE
from vdesk.operator import ExecuteResult, encode

try:
    import ray
    import ray.exceptions
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
except ImportError as missing:  # Ray is an optional dependency
    raise ImportError("vdesk.ray needs Ray: pip install 'vdesk[ray]'") from missing

if TYPE_CHECKING:
    from vdesk.fleet import Usage

RESOURCE = "vdesk_desktop"
UP_TIMEOUT = 120.0     # seconds for an actor to be placed, start its worker and bring a desktop up
CALL_SLACK = 30.0      # seconds a call may take beyond its own timeout (queueing, transfer)
CALL_TIMEOUT = 60.0    # seconds for a call that has no timeout of its own
CLOSE_TIMEOUT = 30.0   # seconds for a graceful close before the actor is killed anyway
ABANDON_GRACE = 30.0   # seconds an item may run past its timeout (after its desktop was killed)
INTERRUPT_GRACE = 15.0 # seconds the items' threads get to leave Ray alone after an interrupt
POLL = 0.2             # seconds between looks at the running items
NODE_REFRESH = 0.5     # seconds between reads of the cluster's node table
SUSPECT = 30.0         # seconds a node that lost a desktop gets new items only if no other can

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
Item = TypeVar("Item")
Progress = Callable[[str], None]
log = logging.getLogger(__name__)


class DesktopLost(DesktopGone):
    """The actor hosting a desktop, its worker process or its node died."""


# -- what crosses the wire --------------------------------------------------------------------
class DesktopSpec(BaseModel):
    """How to start a desktop on a node: the arguments of :meth:`Desktop.up` that make sense remotely."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    size: tuple[int, int] = DEFAULT_SIZE
    scale: float = 1.0
    image: str = IMAGE
    network: Literal["none", "bridge"] = "none"
    ttl: float | None = None
    memory: str = Limits.memory
    cpus: float = Limits.cpus
    timeout: float = Field(default=60.0, gt=0)  # for Desktop.up on the node
    environment: dict[str, str] = Field(default_factory=dict)
    clock: str | None = None  # see Desktop.up


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

    def __init__(self, spec: DesktopSpec) -> None:
        self._desktop = Desktop.up(
            spec.size, scale=spec.scale, image=spec.image, network=spec.network, ttl=spec.ttl,
            limits=Limits(memory=spec.memory, cpus=spec.cpus), timeout=spec.timeout,
            environment=dict(spec.environment), clock=spec.clock)

    def describe(self) -> RemoteInfo:
        return RemoteInfo(self._desktop.name, self._desktop.screen, ray.get_runtime_context().get_node_id(),
                          socket.gethostname(), os.getpid())

    def screenshot(self, format: Literal["png", "jpeg"] = "png", quality: int = 85, fresh: bool = True,
                   size: tuple[int, int] | None = None) -> bytes:
        return encode(self._desktop.screenshot(size, fresh=fresh), format, quality)

    def execute(self, actions: Any, settle: bool = False) -> ExecuteResult:
        return self._desktop.execute(actions, settle=settle)

    def wait_until_settled(self, quiet: float = 0.03, timeout: float = 10.0,
                           format: Literal["png", "jpeg"] = "png") -> bytes:
        return encode(self._desktop.wait_until_settled(quiet, timeout), format)

    def wait_for_change(self, region: tuple[int, int, int, int] | None = None, timeout: float = 10.0,
                        format: Literal["png", "jpeg"] = "png") -> bytes:
        return encode(self._desktop.wait_for_change(region, timeout), format)

    def run(self, argv: Sequence[str], wait: bool = False, timeout: float = 60.0,
            stdin: str | None = None) -> Completed:
        return self._desktop.run(argv, wait=wait, timeout=timeout, stdin=stdin)

    def usage(self) -> Usage:
        """What the desktop uses (:class:`vdesk.fleet.Usage`), and this worker hosting it."""
        from vdesk.fleet import container_usage  # the fleet's definition, so local and Ray figures compare

        return container_usage(self._desktop.container, host=True)

    def call(self, function: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        return function(self._desktop, *args)

    def close(self) -> None:
        self._desktop.down()


@functools.cache
def actor_class() -> Any:
    """:class:`DesktopActor` as a Ray actor class; made on first use, so importing needs no cluster."""
    return ray.remote(DesktopActor)


# -- the host side ----------------------------------------------------------------------------
class RemoteDesktop:
    """A desktop hosted by a :class:`DesktopActor`, driven from this process.

    The methods mirror :class:`Desktop`'s; screenshots come back as PIL images. Leaving a
    ``with`` block (or :meth:`close`) removes the desktop and kills its actor. When the actor
    or its node dies, calls raise :class:`DesktopLost` and :attr:`lost` remembers why.
    """

    def __init__(self, actor: Any, info: RemoteInfo) -> None:
        self.actor = actor
        self.info = info
        self.name = info.name
        self.screen = info.screen
        self.node_id = info.node_id
        self.lost: str | None = None
        self._closed = False

    @classmethod
    def up(cls, spec: DesktopSpec | None = None, *, node_id: str | None = None,
           timeout: float = UP_TIMEOUT, on_actor: Callable[[Any], None] = lambda actor: None) -> RemoteDesktop:
        """Start a desktop on the cluster (on ``node_id`` if given) and return once it is ready.

        Needs a connected Ray (see :func:`connect`) and a node with a free ``vdesk_desktop``.
        ``on_actor`` hears of the hosting actor as soon as it exists: killing it ends the wait.
        """
        if not ray.is_initialized():
            raise VdeskError("Ray is not connected: call vdesk.ray.connect(ADDRESS) first")
        options: dict[str, Any] = {"num_cpus": 0, "resources": {RESOURCE: 1}, "max_restarts": 0,
                                   "max_task_retries": 0}
        if node_id is not None:
            options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node_id, soft=False)
        actor = actor_class().options(**options).remote(spec or DesktopSpec())
        try:
            on_actor(actor)
            info = _ask(actor.describe.remote, timeout, "starting a desktop on the cluster")
        except BaseException:
            ray.kill(actor, no_restart=True)  # a desktop that came up late is removed by its lease
            raise
        return cls(actor, info)

    def __enter__(self) -> RemoteDesktop:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<RemoteDesktop {self.name} on {self.node_id[:8]} {self.screen.width}x{self.screen.height}>"

    # -- frames -------------------------------------------------------------------------------
    def screenshot(self, size: tuple[int, int] | None = None, *, fresh: bool = True) -> Image.Image:
        """The screen as an RGB image (PNG on the wire, so exact)."""
        return _decode(self.screenshot_bytes("png", size=size, fresh=fresh))

    def screenshot_bytes(self, format: Literal["png", "jpeg"] = "png", *, quality: int = 85,
                         fresh: bool = True, size: tuple[int, int] | None = None) -> bytes:
        """The screen encoded on the node, as it travelled: for agents that send bytes on."""
        if format not in ("png", "jpeg"):
            raise InvalidAction(f"format must be png or jpeg, got {format!r}")
        return self._call("screenshot", CALL_TIMEOUT, format, quality, fresh, size)

    def wait_until_settled(self, quiet: float = 0.03, timeout: float = 10.0) -> Image.Image:
        return _decode(self._call("wait_until_settled", timeout, quiet, timeout))

    def wait_for_change(self, region: tuple[int, int, int, int] | None = None,
                        timeout: float = 10.0) -> Image.Image:
        return _decode(self._call("wait_for_change", timeout, region, timeout))

    # -- programs and actions -----------------------------------------------------------------
    def execute(self, actions: Any, *, settle: bool = False) -> ExecuteResult:
        return self._call("execute", CALL_TIMEOUT, actions, settle)

    def run(self, argv: Sequence[str], *, wait: bool = False, timeout: float = 60.0,
            stdin: str | None = None) -> Completed:
        return self._call("run", timeout, list(argv), wait, timeout, stdin)

    def call(self, function: Callable[..., T], *args: Any, timeout: float = CALL_TIMEOUT) -> T:
        """Run ``function(desktop, *args)`` on the node, next to the real :class:`Desktop`: for
        what has no method here (window queries, a whole episode). ``function``, its arguments
        and its result travel by pickle; a module-level function travels best."""
        return self._call("call", timeout, function, args)

    def usage(self) -> Usage:
        """A :class:`vdesk.fleet.Usage` reading: the container's memory and CPU time, and the
        hosting worker's."""
        return self._call("usage", CALL_TIMEOUT)

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
                _ask(self.actor.describe.remote, timeout, f"checking {self.name}")
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
            raise VdeskError(f"{what}: the desktop did not start on the node: {_init_cause(error)}") from None
        raise DesktopLost(f"{what}: the desktop's actor or node died ({type(error).__name__}: "
                          f"{_first_line(error)})") from error
    except LOST_ERRORS as error:
        raise DesktopLost(f"{what}: the desktop's actor or node died ({type(error).__name__}: "
                          f"{_first_line(error)})") from error


def _init_cause(error: BaseException) -> str:
    """The last line of the constructor's traceback that Ray folds into the message: the error itself."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    named = [line for line in lines if line.split(":", 1)[0].rsplit(".", 1)[-1].endswith(("Error", "Exception",
                                                                                          "Timeout", "Gone"))]
    return (named or lines or [type(error).__name__])[-1][:300]


def _decode(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image if image.mode == "RGB" else image.convert("RGB")


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0][:300] if text else type(error).__name__


# -- the cluster ------------------------------------------------------------------------------
def connect(address: str) -> bool:
    """Join the Ray cluster at ``address`` (``HOST:PORT`` of its head, or ``auto``) unless this
    process is in one already. Returns True when this call joined, so the caller leaves it."""
    if ray.is_initialized():
        return False
    _check_reachable(address)
    try:
        ray.init(address=address, namespace="vdesk", logging_level=logging.WARNING, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as error:  # ValueError: an address Ray cannot parse
        raise VdeskError(f"could not join the Ray cluster at {address}: {_first_line(error)}{_auth_hint()}") from None
    return True


def _auth_hint() -> str:
    # Ray turns token authentication on for a driver that joins by address only when told to.
    if os.environ.get("RAY_AUTH_MODE", "").lower() == "token":
        return ""
    return (" (if the cluster uses token authentication, set RAY_AUTH_MODE=token here, with the "
            "cluster's token in RAY_AUTH_TOKEN or ~/.ray/auth_token)")


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast when nothing listens at ``HOST:PORT``: ``ray.init`` would retry for many minutes."""
    host, _, port = address.rpartition(":")
    if "://" in address or not host or not port.isdigit():
        return  # "auto" or a ray:// client address: Ray resolves those itself
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as error:
        raise VdeskError(f"no Ray cluster answers at {address} ({error}): start one with "
                         f"`ray start --head --resources '{{\"{RESOURCE}\": N}}'`") from None


@dataclass(frozen=True)
class Node:
    """A live node that offers desktops."""

    id: str
    address: str
    slots: int  # its amount of vdesk_desktop: how many desktops it may hold


def desktop_nodes() -> list[Node]:
    """The live nodes with a ``vdesk_desktop`` resource."""
    nodes = []
    for entry in ray.nodes():
        slots = int(entry.get("Resources", {}).get(RESOURCE, 0))
        if entry.get("Alive") and slots > 0:
            nodes.append(Node(entry["NodeID"], entry.get("NodeManagerAddress", "?"), slots))
    return nodes


# -- many items over the cluster --------------------------------------------------------------
@dataclass
class Attempt:
    """One try of an item on one node."""

    node_id: str | None
    address: str | None = None  # the node's IP address, to name it in records
    desktop: str | None = None
    seconds: float = 0.0
    error: str | None = None
    lost: bool = False  # its node or actor died under it, or its desktop never came up: worth a retry

    @property
    def loss(self) -> str:
        """What befell a lost try, for people: ``lost its desktop on node 10.0.0.7``."""
        what = "lost its desktop" if self.desktop else "its desktop did not start"
        return f"{what} on node {self.address or str(self.node_id)[:8]}"


@dataclass
class EpisodeOutcome(Generic[T]):
    """How an item ended: its ``result`` or its ``error``, and every attempt it took.

    ``retried`` says it was run again after losing its desktop (its node died, or the desktop
    did not start there); ``first_error`` is why the first attempt was abandoned.
    """

    index: int
    item: Any
    result: T | None = None
    error: str | None = None
    retried: bool = False
    first_error: str | None = None
    attempts: list[Attempt] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class _Run:
    """An attempt in flight, shared between its thread and the scheduler."""

    index: int
    attempt: Attempt
    started: float
    deadline: float
    done: threading.Event = field(default_factory=threading.Event)
    desktop: RemoteDesktop | None = None
    result: Any = None
    error: BaseException | None = None
    timed_out: bool = False
    actor: Any = None  # the desktop's actor, from the moment it exists
    abandoned: bool = False  # the run was interrupted: kill the actor the moment it exists


@dataclass(frozen=True)
class Hooks(Generic[T]):
    """What a caller hears of items as they go, from the scheduling thread (keep them short).

    ``retrying(index, attempt)``: the attempt lost its desktop (or never had one) and the item
    goes back in the queue; the attempt's work has returned and its desktop is closed.
    ``done(outcome)``: the item ended, for good.
    """

    retrying: Callable[[int, Attempt], None] = lambda index, attempt: None
    done: Callable[[EpisodeOutcome[T]], None] = lambda outcome: None


def run_episodes(work: Callable[[RemoteDesktop, Item], T], items: Sequence[Item], *,
                 address: str | None = None, parallel: int, per_node: int, retries: int = 1,
                 timeout: float, spec: DesktopSpec | Callable[[Item], DesktopSpec] | None = None,
                 progress: Progress | None = None, hooks: Hooks[T] | None = None) -> list[EpisodeOutcome[T]]:
    """Run ``work(desktop, item)`` for every item, each on a fresh desktop on the cluster.

    At most ``parallel`` items run at once and at most ``per_node`` of them on one node (and
    never more than the node's ``vdesk_desktop``). ``work`` runs in a thread of this process
    and drives its desktop through :class:`RemoteDesktop`. ``spec`` is how every desktop
    starts, or a function giving it for an item (asked again for each try). When the desktop's
    actor or node dies, or the desktop does not start on its node, the item runs again on
    another node, up to ``retries`` times; for 30 s that node gets new items only when no
    other node can take them. ``timeout`` bounds each attempt: past it the desktop is killed
    and the item fails. Returns one outcome per item, in order; ``hooks`` hear of each one as
    it ends.
    """
    if parallel < 1 or per_node < 1 or retries < 0 or timeout <= 0:
        raise InvalidAction("parallel and per_node must be at least 1, retries at least 0, timeout positive")
    joined = connect(address) if address else False
    if not ray.is_initialized():
        raise VdeskError("Ray is not connected: pass address= or call vdesk.ray.connect first")
    try:
        spec_of = spec if callable(spec) else functools.partial(_same, spec or DesktopSpec())
        scheduler = _Scheduler(work, list(items), spec_of, parallel, per_node, retries, timeout,
                               progress or (lambda line: log.info(line)), hooks or Hooks())
        return scheduler.run()
    finally:
        if joined:
            ray.shutdown()


def _same(spec: DesktopSpec, item: object) -> DesktopSpec:
    return spec


class _Scheduler(Generic[Item, T]):
    """Places items on nodes with free slots, watches them, retries the lost ones."""

    def __init__(self, work: Callable[[RemoteDesktop, Item], T], items: list[Item],
                 spec_of: Callable[[Item], DesktopSpec], parallel: int, per_node: int, retries: int,
                 timeout: float, progress: Progress, hooks: Hooks[T]) -> None:
        self.work, self.items, self.spec_of = work, items, spec_of
        self.parallel, self.per_node, self.retries, self.timeout = parallel, per_node, retries, timeout
        self.progress, self.hooks = progress, hooks
        self.outcomes: list[EpisodeOutcome[T] | None] = [None] * len(items)
        self.attempts: dict[int, list[Attempt]] = {i: [] for i in range(len(items))}
        self.queue: collections.deque[int] = collections.deque(range(len(items)))
        self.running: dict[int, _Run] = {}
        self.changed = threading.Event()
        self._nodes: list[Node] = []
        self._nodes_read = 0.0
        self._starved_since: float | None = None
        self._lost_at: dict[str | None, float] = {}  # node → when it last lost (or failed to start) a desktop

    def run(self) -> list[EpisodeOutcome[T]]:
        try:
            while self.queue or self.running:
                self.changed.clear()
                self._reap()
                self._start()
                self._check_starved()
                self.changed.wait(POLL)
        finally:
            self._abandon()  # only on an interrupt is anything still running
        return [outcome for outcome in self.outcomes if outcome is not None]

    def _abandon(self) -> None:
        """Kill every desktop still running or starting, and give the items' threads a moment to
        notice and end: a thread still inside Ray when this process shuts Ray down makes Ray end
        the process."""
        for run in self.running.values():
            run.abandoned = True
            if run.desktop is not None:
                run.desktop.kill()  # its own calls now fail at once, its close does nothing
            elif run.actor is not None:
                kill(run.actor)
        deadline = time.monotonic() + INTERRUPT_GRACE
        for run in self.running.values():
            run.done.wait(max(0.0, deadline - time.monotonic()))

    # -- placing ------------------------------------------------------------------------------
    def _start(self) -> None:
        while self.queue and len(self.running) < self.parallel:
            index = self.queue[0]
            node = self._pick(self._avoid(index))
            if node is None:
                return
            self.queue.popleft()
            now = time.monotonic()
            run = _Run(index, Attempt(node.id, node.address), now, now + self.timeout)
            self.attempts[index].append(run.attempt)
            self.running[index] = run
            threading.Thread(target=self._attempt, args=(run,), name=f"vdesk-episode-{index}", daemon=True).start()

    def _avoid(self, index: int) -> set[str | None]:
        """The nodes to place item ``index`` elsewhere than, when another can take it: those
        that lost its earlier tries, and any that lost a desktop lately (Ray takes seconds to
        notice a node died, and a dying node takes every new item it is given with it)."""
        lately = {node for node, when in self._lost_at.items() if time.monotonic() - when < SUSPECT}
        return {a.node_id for a in self.attempts[index] if a.lost} | lately

    def _pick(self, avoid: set[str | None]) -> Node | None:
        """The least busy node with a free slot, preferring nodes other than ``avoid``;
        None when every suitable node is full."""
        nodes = self._live_nodes()
        busy = collections.Counter(run.attempt.node_id for run in self.running.values())
        free = [n for n in nodes if busy[n.id] < min(self.per_node, n.slots)]
        preferred = [n for n in free if n.id not in avoid]
        if not preferred and all(n.id in avoid for n in nodes):
            preferred = free  # the avoided nodes are all there is (and still alive)
        return min(preferred, key=lambda n: busy[n.id], default=None)

    def _live_nodes(self) -> list[Node]:
        if time.monotonic() - self._nodes_read > NODE_REFRESH:
            self._nodes, self._nodes_read = desktop_nodes(), time.monotonic()
        return self._nodes

    def _check_starved(self) -> None:
        """Fail what is queued when no node has offered a slot for ``timeout`` seconds."""
        if not self.queue or self.running:
            self._starved_since = None
            return
        now = time.monotonic()
        self._starved_since = self._starved_since or now
        if now - self._starved_since > self.timeout:
            while self.queue:
                index = self.queue.popleft()
                self._finish(index, error=f"no node offered a {RESOURCE} slot within {self.timeout:g} s")

    # -- one attempt, in its own thread -------------------------------------------------------
    def _attempt(self, run: _Run) -> None:
        try:
            up_timeout = max(1.0, min(UP_TIMEOUT, run.deadline - time.monotonic()))
            spec = self.spec_of(self.items[run.index])
            run.desktop = RemoteDesktop.up(spec, node_id=run.attempt.node_id, timeout=up_timeout,
                                           on_actor=functools.partial(self._started, run))
            run.attempt.desktop = run.desktop.name
            if run.timed_out:  # the deadline passed while it came up: the scheduler could not kill it
                raise DesktopTimeout(f"the desktop came up after the item's {self.timeout:g} s")
            run.result = self.work(run.desktop, self.items[run.index])
        except BaseException as error:  # recorded in the outcome; the scheduler decides what follows
            run.error = error
            if run.desktop is not None and not run.timed_out and not isinstance(error, (DesktopLost, *LOST_ERRORS)):
                # The work may have failed because its desktop vanished under it (an action
                # reported failure, an assertion tripped): only the actor can tell.
                run.desktop.check_alive()
        finally:
            try:
                if run.desktop is not None:
                    run.desktop.close()
            finally:
                run.done.set()
                self.changed.set()

    @staticmethod
    def _started(run: _Run, actor: Any) -> None:
        run.actor = actor
        if run.abandoned:  # the interrupt came while the actor was being made
            kill(actor)

    # -- collecting ---------------------------------------------------------------------------
    def _reap(self) -> None:
        now = time.monotonic()
        for index, run in list(self.running.items()):
            if run.done.is_set():
                del self.running[index]
                self._settle(run)
            elif now > run.deadline and not run.timed_out:
                run.timed_out = True  # killing the desktop makes the work's next call fail
                if run.desktop is not None:
                    run.desktop.kill()
            elif now > run.deadline + ABANDON_GRACE:
                del self.running[index]  # the work is stuck outside its desktop; its thread is left behind
                run.attempt.seconds = now - run.started
                run.attempt.error = f"did not return within {self.timeout + ABANDON_GRACE:g} s"
                self._finish(index, error=run.attempt.error)

    def _settle(self, run: _Run) -> None:
        attempt = run.attempt
        attempt.seconds = time.monotonic() - run.started
        lost = run.desktop.lost if run.desktop is not None else None
        if run.timed_out:
            attempt.error = f"timed out after {self.timeout:g} s"
        elif run.error is not None:
            attempt.error = _describe(run.error)
            attempt.lost = (isinstance(run.error, (DesktopLost, *LOST_ERRORS)) or lost is not None
                            or _never_started(run) or not self._alive(attempt.node_id))
        elif lost is not None:  # the work swallowed the loss of its desktop: its result is not to be trusted
            attempt.error, attempt.lost = lost, True
        if attempt.lost:
            self._lost_at[attempt.node_id] = time.monotonic()
        if attempt.error is None:
            self._finish(run.index, result=run.result)
        elif attempt.lost and len(self.attempts[run.index]) <= self.retries:
            self.progress(f"item {run.index}: {attempt.loss}; retrying elsewhere ({attempt.error})")
            self.hooks.retrying(run.index, attempt)
            self.queue.appendleft(run.index)
        else:
            self._finish(run.index, error=attempt.error)

    def _alive(self, node_id: str | None) -> bool:
        self._nodes_read = 0.0  # read afresh: this is the moment a node's death matters
        return any(node.id == node_id for node in self._live_nodes())

    def _finish(self, index: int, *, result: Any = None, error: str | None = None) -> None:
        attempts = self.attempts[index]
        retried = len(attempts) > 1
        outcome = EpisodeOutcome(index, self.items[index], result, error, retried,
                                 attempts[0].error if retried else None, attempts)
        self.outcomes[index] = outcome
        self.hooks.done(outcome)
        self.progress(f"item {index}: {'done' if error is None else 'failed: ' + error}"
                      f"{' (retried)' if retried else ''}")


def _never_started(run: _Run) -> bool:
    """The desktop did not come up on its node (the node failed it, not the item's work): the
    item has not run yet, so it may run elsewhere. A refused spec would fail anywhere."""
    return run.desktop is None and isinstance(run.error, VdeskError) and not isinstance(run.error, InvalidAction)


def _describe(error: BaseException) -> str:
    """One line naming an error, with where it was raised when it is not one of vdesk's."""
    if isinstance(error, ray.exceptions.RayTaskError):  # its own text is the actor's name, in colours
        return f"{type(error.cause).__name__} on the node: {_first_line(error.cause)}"
    text = f"{type(error).__name__}: {_first_line(error)}"
    if isinstance(error, (VdeskError, *LOST_ERRORS)):
        return text
    frames = traceback.extract_tb(error.__traceback__)
    return f"{text} (at {frames[-1].filename}:{frames[-1].lineno})" if frames else text

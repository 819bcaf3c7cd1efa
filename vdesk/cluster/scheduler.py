"""Placing episodes over a Ray cluster's nodes: :func:`run_episodes`.

It runs a list of items over the cluster, one desktop each (:class:`RemoteDesktop`), at most
``parallel`` at once and at most ``per_node`` on one node, and retries an item once elsewhere
when its node (or its actor) dies. Every item ends with an :class:`EpisodeOutcome`.
"""

from __future__ import annotations

import collections
import functools
import logging
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import ray
import ray.exceptions

from vdesk.cluster.actors import CALL_SLACK, LOST_ERRORS, UP_TIMEOUT, DesktopLost, RemoteDesktop, kill
from vdesk.cluster.membership import RESOURCE, ClusterNode, connect, desktop_nodes, leave
from vdesk.errors import ClusterError, DesktopTimeout, InvalidAction, InvalidArgument, VdeskError, first_line
from vdesk.forks import Checkpoint
from vdesk.progress import Progress
from vdesk.spec import DesktopSpec

Start = DesktopSpec | Checkpoint  # how a desktop starts: fresh as a spec says, or a fork of a checkpoint

ABANDON_GRACE = 30.0   # seconds an item may run past its timeout (after its desktop was killed)
INTERRUPT_GRACE = 15.0 # seconds the items' threads get to leave Ray alone after an interrupt
POLL = 0.2             # seconds between looks at the running items
NODE_REFRESH = 0.5     # seconds between reads of the cluster's node table
SUSPECT = 30.0         # seconds a node that lost a desktop gets new items only if no other can

T = TypeVar("T")
Item = TypeVar("Item")
log = logging.getLogger(__name__)


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

    def kill(self) -> None:
        """End its desktop, or its start when the desktop is not up yet (the actor's death ends
        the start's wait; a desktop that came up meanwhile goes with its lease)."""
        if self.desktop is not None:
            self.desktop.kill()  # its own calls now fail at once, its close does nothing
        elif self.actor is not None:
            kill(self.actor)


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
                 timeout: float, spec: Start | Callable[[Item], Start] | None = None,
                 progress: Progress | None = None, hooks: Hooks[T] | None = None,
                 node_of: Callable[[Item], str | None] | None = None) -> list[EpisodeOutcome[T]]:
    """Run ``work(desktop, item)`` for every item, each on a fresh desktop on the cluster.

    At most ``parallel`` items run at once and at most ``per_node`` of them on one node (and
    never more than the node's ``vdesk_desktop``). ``work`` runs in a thread of this process
    and drives its desktop through :class:`RemoteDesktop`. ``spec`` is how every desktop
    starts (or a checkpoint it forks), or a function giving it for an item (asked again for each try). When the desktop's
    actor or node dies, or the desktop does not start on its node, the item runs again on
    another node, up to ``retries`` times; for 30 s that node gets new items only when no
    other node can take them. ``timeout`` bounds each attempt, its desktop's start included:
    past it the desktop is killed (or its start abandoned) and the item fails, not retried.
    Returns one outcome per item, in order; ``hooks`` hear of each one as it ends.
    ``node_of(item)``, when it names a node, ties the item to it (a fork of a checkpoint that
    node holds): it waits for a slot there, and fails at once if the node is gone.
    """
    if parallel < 1 or per_node < 1 or retries < 0 or timeout <= 0:
        raise InvalidArgument("parallel and per_node must be at least 1, retries at least 0, timeout positive")
    joined = connect(address) if address else False
    if not ray.is_initialized():
        raise ClusterError("Ray is not connected: pass address= or call vdesk.cluster.connect first")
    try:
        spec_of = spec if callable(spec) else functools.partial(_same, spec or DesktopSpec())
        scheduler = _Scheduler(work, list(items), spec_of, parallel, per_node, retries, timeout,
                               progress or (lambda line: log.info(line)), hooks or Hooks(), node_of or _anywhere)
        return scheduler.run()
    finally:
        if joined:
            leave()


def _same(spec: Start, item: object) -> Start:
    return spec


def _anywhere(item: object) -> None:
    return None


class _Scheduler(Generic[Item, T]):
    """Places items on nodes with free slots, watches them, retries the lost ones."""

    def __init__(self, work: Callable[[RemoteDesktop, Item], T], items: list[Item],
                 spec_of: Callable[[Item], Start], parallel: int, per_node: int, retries: int,
                 timeout: float, progress: Progress, hooks: Hooks[T],
                 node_of: Callable[[Item], str | None]) -> None:
        self.work, self.items, self.spec_of, self.node_of = work, items, spec_of, node_of
        self.parallel, self.per_node, self.retries, self.timeout = parallel, per_node, retries, timeout
        self.progress, self.hooks = progress, hooks
        self.outcomes: list[EpisodeOutcome[T] | None] = [None] * len(items)
        self.attempts: dict[int, list[Attempt]] = {i: [] for i in range(len(items))}
        self.queue: collections.deque[int] = collections.deque(range(len(items)))
        self.running: dict[int, _Run] = {}
        self.changed = threading.Event()
        self._nodes: list[ClusterNode] = []
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
            run.kill()
        deadline = time.monotonic() + INTERRUPT_GRACE
        for run in self.running.values():
            run.done.wait(max(0.0, deadline - time.monotonic()))

    # -- placing ------------------------------------------------------------------------------
    def _start(self) -> None:
        while self.queue and len(self.running) < self.parallel:
            index = self.queue[0]
            pinned = self.node_of(self.items[index])
            if pinned is not None and pinned not in {node.id for node in self._live_nodes()}:
                self.queue.popleft()
                self._finish(index, error=f"its node {pinned[:8]} (which holds its checkpoint) is gone")
                continue
            node = self._pick(self._avoid(index), pinned)
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

    def _pick(self, avoid: set[str | None], pinned: str | None = None) -> ClusterNode | None:
        """The least busy node with a free slot (``pinned`` alone, when given), preferring nodes
        other than ``avoid``; None when every suitable node is full."""
        nodes = [n for n in self._live_nodes() if pinned is None or n.id == pinned]
        busy = collections.Counter(run.attempt.node_id for run in self.running.values())
        free = [n for n in nodes if busy[n.id] < min(self.per_node, n.slots)]
        preferred = [n for n in free if n.id not in avoid]
        if not preferred and all(n.id in avoid for n in nodes):
            preferred = free  # the avoided nodes are all there is (and still alive)
        return min(preferred, key=lambda n: busy[n.id], default=None)

    def _live_nodes(self) -> list[ClusterNode]:
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
            start = self.spec_of(self.items[run.index])
            spec, checkpoint = (DesktopSpec(), start) if isinstance(start, Checkpoint) else (start, None)
            run.desktop = RemoteDesktop.up(spec, node_id=run.attempt.node_id, timeout=_up_timeout(run),
                                           on_actor=functools.partial(self._started, run), checkpoint=checkpoint)
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
                run.kill()
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
            attempt.error = _error_text(run.error)
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


def _up_timeout(run: _Run) -> float:
    """How long the start may take: :data:`UP_TIMEOUT`, or past the item's deadline when less
    time is left, so that a slow start meets the deadline (the item times out, as a slow work
    would) and never its own wait (a start that failed on its node, which is retried elsewhere:
    a loaded node's slow start once ran a 20 s item twice)."""
    left = run.deadline - time.monotonic()
    return UP_TIMEOUT if left >= UP_TIMEOUT else max(1.0, left) + CALL_SLACK


def _never_started(run: _Run) -> bool:
    """The desktop did not come up on its node (the node failed it, not the item's work): the
    item has not run yet, so it may run elsewhere. A refused spec would fail anywhere."""
    refused = (InvalidAction, InvalidArgument)
    return run.desktop is None and isinstance(run.error, VdeskError) and not isinstance(run.error, refused)


def _error_text(error: BaseException) -> str:
    """One line naming an error, with where it was raised when it is not one of vdesk's."""
    if isinstance(error, ray.exceptions.RayTaskError):  # its own text is the actor's name, in colours
        return f"{type(error.cause).__name__} on the node: {first_line(error.cause)}"
    text = f"{type(error).__name__}: {first_line(error)}"
    if isinstance(error, (VdeskError, *LOST_ERRORS)):
        return text
    frames = traceback.extract_tb(error.__traceback__)
    return f"{text} (at {frames[-1].filename}:{frames[-1].lineno})" if frames else text

"""A suite run's episodes on a Ray cluster (``vdesk eval SUITE --ray ADDRESS``): the
:class:`~vdesk.harness.suite.Placement` that :func:`vdesk.harness.runner.run_suite` is given.

The agent, the episode loop and the run folders stay in this process; each episode's desktop
lives in an actor on a cluster node (:class:`~vdesk.cluster.actors.RemoteDesktop`), placed by
:func:`~vdesk.cluster.scheduler.run_episodes` with a per-node limit. The episode runs the same code as a local
one: :class:`~vdesk.harness.env.DesktopEnv` is handed the remote desktop.

An episode whose node (or actor) dies runs once more on another node. The lost try's partial
run folder is moved to ``.lost/TASK/attempt-N`` in the suite folder (a task id never starts
with a dot, so it is not taken for an episode), and the outcome's ``attempts`` say where each
try ran, why it was abandoned and where its folder went.
"""

from __future__ import annotations

import dataclasses
import functools
import shutil
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from vdesk.cluster.actors import NodeCheckpoint, RemoteDesktop, hold_checkpoint, remove_checkpoint
from vdesk.cluster.membership import connect
from vdesk.cluster.scheduler import Attempt, EpisodeOutcome, Hooks, run_episodes
from vdesk.errors import InvalidArgument
from vdesk.forks import Checkpoint
from vdesk.harness.env import DesktopEnv, setup_timeout
from vdesk.harness.forked import SetUp, set_up
from vdesk.harness.hosts import given
from vdesk.harness.episode import Status
from vdesk.harness.loop import EpisodeResult
from vdesk.harness.record import AttemptRecord, Outcome, write_outcome
from vdesk.harness.suite import Episodes, SuiteEvent, skipped
from vdesk.harness.tasks import Task
from vdesk.spec import DesktopSpec

LOST_DIR = ".lost"
RETRIES = 1
# Seconds an attempt may take beyond its task's time limit and setup: the desktop coming up on
# a node, the final frame, the checks, and an agent's reply that overran the limit.
EPISODE_SLACK = 300.0


@dataclass(frozen=True)
class NodeSetUp:
    """A task set up once on a cluster node (``--fork-after-setup``): its checkpoint, which
    forks there only, and what it took."""

    done: SetUp
    node_id: str

    def discard(self) -> None:
        """Remove the checkpoint from its node, then let go of the run's hold on it."""
        self.done.discard(remover(self.node_id))


def remover(node_id: str) -> Callable[[Checkpoint], None]:
    """How a checkpoint of ``node_id``'s engine is removed (one already gone is fine)."""
    return lambda checkpoint: remove_checkpoint(NodeCheckpoint(checkpoint, node_id), missing_ok=True)


class SetUps:
    """Every setup a run made, discarded when the run ends: one the scheduler gave up on (it came
    back past its item's deadline, so no episode knows it) too, and one that comes back after the
    run ended at once, else its checkpoint and holder would outlive the run."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._made: list[NodeSetUp] = []
        self._closed = False

    def keep(self, setup: NodeSetUp) -> NodeSetUp:
        with self._lock:
            if not self._closed:
                self._made.append(setup)
                return setup
        setup.discard()
        return setup

    def close(self) -> None:
        """Discard every setup kept; each is tried, and the first failure is raised after."""
        with self._lock:
            made, self._made, self._closed = self._made, [], True
        failures = []
        for setup in made:
            try:
                setup.discard()
            except Exception as error:  # noqa: BLE001 - the others still go
                failures.append(error)
        if failures:
            raise failures[0]


@dataclass(frozen=True)
class ClusterPlacement:
    """Episodes on the desktops of the Ray cluster at ``address`` (``HOST:PORT`` of its head),
    at most ``per_node`` on one node (default: as many as run at once)."""

    address: str
    per_node: int | None = None

    def __post_init__(self) -> None:
        if self.per_node is not None and self.per_node < 1:
            raise InvalidArgument(f"per_node must be at least 1, got {self.per_node}")

    @classmethod
    def join(cls, address: str, per_node: int | None = None) -> ClusterPlacement:
        """Join the cluster now, as a run would: fails at once, in one line, when nothing
        answers there."""
        connect(address)
        return cls(address, per_node)

    @property
    def ray_address(self) -> str:
        return self.address

    def node_limit(self, parallel: int) -> int:
        return self.per_node or parallel

    def check_forks(self) -> None:
        """Nothing to ask up front: a node's engine that cannot checkpoint says what it lacks
        when a task is set up there, and that task's episodes fail with it."""

    def run(self, episodes: Episodes, tasks: Sequence[Task], *, parallel: int, image: str,
            environment: Mapping[str, str] | None) -> None:
        """Play every task on a desktop of the cluster; outcomes go to ``episodes``. With
        ``episodes.fork_after_setup`` each task is set up once on some node and checkpointed
        there; its episodes then run on forks of it, on that node (its checkpoint's files are
        in that node's engine), and every checkpoint is removed at the end.

        On an interrupt the running desktops are killed, and the episodes that had not ended
        are recorded as cancelled before it is re-raised.
        """
        tasks = list(tasks)
        fresh = functools.partial(desktop_spec, image=image, environment=environment)
        made: dict[str, NodeSetUp | str] = {}  # a task's setup, or why it failed
        setups = SetUps()
        try:
            if not episodes.fork_after_setup:
                self._play(episodes, tasks, parallel, fresh)
                return
            self._set_up(episodes, tasks, parallel, fresh, made, setups)
            runnable = []
            for task in tasks:
                start = made.get(episodes.origin[task.id])
                if isinstance(start, str):
                    episodes.ended(task, episodes.unrun(task, Status.ERROR, f"setup failed: {start}"))
                else:
                    runnable.append(task)
            self._play(episodes, runnable, parallel, fresh, made)
        except BaseException:
            episodes.cancel.set()  # work still running stops between two actions
            for task in tasks:
                if task.id not in episodes.outcomes:
                    cut_short = skipped(task, episodes.agent, "not finished: the run was interrupted")
                    episodes.outcomes[task.id] = cut_short.outcome
            raise
        finally:
            setups.close()

    def _set_up(self, episodes: Episodes, tasks: list[Task], parallel: int,
                fresh: Callable[[Task], DesktopSpec], made: dict[str, NodeSetUp | str], setups: SetUps) -> None:
        """Each task's setup once, on a desktop of any node, checkpointed there, into ``made``
        (by task id: the checkpoint with its node, or why the setup failed); ``setups`` keeps
        each one made, to discard when the run ends."""
        firsts: list[Task] = []  # the first episode of each task that runs: it sets the task up
        for task in tasks:
            if task.skip is None and all(episodes.origin[task.id] != episodes.origin[first.id] for first in firsts):
                firsts.append(task)

        def work(desktop: RemoteDesktop, task: Task) -> NodeSetUp:
            def hold(checkpoint: Checkpoint) -> Callable[[], None]:
                return hold_checkpoint(NodeCheckpoint(checkpoint, desktop.node_id))
            setup = set_up(DesktopEnv(source=given(desktop)), task, hold, remover(desktop.node_id))
            return setups.keep(NodeSetUp(setup, desktop.node_id))

        def done(ended: EpisodeOutcome[NodeSetUp]) -> None:
            made[episodes.origin[firsts[ended.index].id]] = ended.result or ended.error or "it did not end"

        if firsts:
            run_episodes(work, firsts, address=self.address, parallel=parallel, per_node=self.node_limit(parallel),
                         retries=RETRIES, timeout=episode_timeout(firsts), hooks=Hooks(done=done), spec=fresh)

    def _play(self, episodes: Episodes, tasks: list[Task], parallel: int, fresh: Callable[[Task], DesktopSpec],
              made: Mapping[str, NodeSetUp | str] | None = None) -> None:
        """Every task's episode on a desktop of the cluster: a fresh one, or (``made``) a fork of
        its task's checkpoint on the node holding it."""
        moved: dict[int, list[str | None]] = {index: [] for index in range(len(tasks))}

        def start_of(task: Task) -> NodeSetUp | None:
            setup = (made or {}).get(episodes.origin.get(task.id, task.id))
            return setup if isinstance(setup, NodeSetUp) else None

        def work(desktop: RemoteDesktop, task: Task) -> EpisodeResult:
            start = start_of(task)
            env = DesktopEnv(source=given(desktop), forks=given(desktop), video=episodes.video_path(task),
                             checkpoint=start.done.checkpoint if start else None)
            result = episodes.play(task, env)
            if not result.success:
                desktop.check_alive()  # a node lost without a clear error (a call timed out) is retried too
            return result

        def retrying(index: int, attempt: Attempt) -> None:
            task = tasks[index]
            moved[index].append(move_aside(episodes.out, task.id, len(moved[index]) + 1) if attempt.desktop else None)
            episodes.notify(SuiteEvent("retrying", task.id, detail=f"{attempt.loss}: {attempt.error}"))

        def done(ended: EpisodeOutcome[EpisodeResult]) -> None:
            task = tasks[ended.index]
            result = ended.result or EpisodeResult(failed(task, episodes.agent, ended))
            records = attempt_records(ended.attempts, moved[ended.index])
            outcome = result.outcome.model_copy(update={"attempts": records})
            if ended.attempts and ended.attempts[-1].desktop is not None and (episodes.out / task.id).is_dir():
                write_outcome(episodes.out / task.id, outcome)  # the folder of this run's last try
            start = start_of(task)
            episodes.ended(task, dataclasses.replace(result, outcome=outcome), **(start.done.record() if start else {}))

        def spec(task: Task) -> DesktopSpec | Checkpoint:
            start = start_of(task)
            return fresh(task) if start is None else start.done.checkpoint

        def node_of(task: Task) -> str | None:
            start = start_of(task)
            return start.node_id if start else None

        if tasks:
            run_episodes(work, tasks, address=self.address, parallel=parallel, per_node=self.node_limit(parallel),
                         retries=RETRIES, timeout=episode_timeout(tasks), hooks=Hooks(retrying, done), spec=spec,
                         node_of=node_of)


def desktop_spec(task: Task, *, image: str, environment: Mapping[str, str] | None) -> DesktopSpec:
    """How the desktop of ``task`` starts on a node."""
    return task.desktop.over(image, dict(environment or {}))


def episode_timeout(tasks: Sequence[Task]) -> float:
    """A bound on one attempt of any of ``tasks``, past which its desktop is killed: a
    backstop, since each episode keeps its own time limit."""
    return max(task.time_limit + setup_timeout(task) for task in tasks) + EPISODE_SLACK


def move_aside(out: Path, task_id: str, number: int) -> str | None:
    """Move the run folder of a lost try out of the way of the next one; returns where it went,
    relative to ``out`` (None when the try wrote nothing)."""
    source = out / task_id
    if not source.is_dir():
        return None
    target = out / LOST_DIR / task_id / f"attempt-{number}"
    shutil.rmtree(target, ignore_errors=True)  # left by an earlier run into the same folder
    target.parent.mkdir(parents=True, exist_ok=True)
    source.rename(target)
    return target.relative_to(out).as_posix()


def attempt_records(attempts: Sequence[Attempt], moved: Sequence[str | None]) -> list[AttemptRecord]:
    """The tries of an episode as its outcome records them; ``moved`` holds where each lost
    try's folder went, in order."""
    return [AttemptRecord(node=attempt.node_id, address=attempt.address, desktop=attempt.desktop,
                          seconds=round(attempt.seconds, 3), error=attempt.error, lost=attempt.lost,
                          moved_to=moved[number] if number < len(moved) else None)
            for number, attempt in enumerate(attempts)]


def failed(task: Task, agent: str, ended: EpisodeOutcome[EpisodeResult]) -> Outcome:
    """The outcome of an episode that ended without a result: its last try timed out, lost its
    node once too often, or never got a desktop."""
    return Outcome(task_id=task.id, agent=agent, status=Status.ERROR.value, success=False, steps=0,
                   elapsed_s=round(ended.attempts[-1].seconds, 3) if ended.attempts else 0.0, error=ended.error)

"""Running a suite: a fresh desktop per episode, N at a time, and a results file.

    summary = run_suite(load_suite("examples/suite"), ScriptedAgent, parallel=4, out=Path("runs/x"))
    print(summary.success_rate)

Where the episodes run is a :class:`~vdesk.harness.suite.Placement`: :class:`LocalPlacement`
(this machine's engine, the default) or :class:`vdesk.cluster.placement.ClusterPlacement` (a
Ray cluster); this module knows nothing of Ray.

On KeyboardInterrupt (or when ``cancel`` is set) episodes that have not started never start,
running ones stop between two actions, and every desktop is released before this returns or
re-raises; ``results.json`` is written either way, marked ``interrupted``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

from vdesk import engine as engines, forks
from vdesk.errors import InvalidArgument, VdeskError
from vdesk.forks import Checkpoint
from vdesk.harness.env import DesktopEnv
from vdesk.harness.folders import Existing, prepare_run_folder
from vdesk.harness.forked import SharedSetups, repeated, set_up
from vdesk.harness.episode import Status
from vdesk.harness.extension import ResultsTable, SuiteRun, TaskExtension
from vdesk.harness.suite import AgentFactory, Episodes, Placement, SuiteEvent, SuiteSummary
from vdesk.harness.tasks import Task
from vdesk.images import DEFAULT as DEFAULT_IMAGE, IMAGE, resolve
from vdesk.progress import Progress


def run_suite(tasks: Sequence[Task], agent_factory: AgentFactory, *, out: Path, parallel: int = 1,
              image: str = DEFAULT_IMAGE, cancel: threading.Event | None = None,
              on_event: Callable[[SuiteEvent], None] | None = None, placement: Placement | None = None,
              environment: Mapping[str, str] | None = None, video: bool = False,
              observation: str = "screenshot", existing: Existing = "refuse",
              progress: Progress | None = None, repeats: int = 1, fork_after_setup: bool = False,
              action_space: str | None = None) -> SuiteSummary:
    """Run every task ``repeats`` times (once by default) with a fresh agent and desktop,
    ``parallel`` at a time, into ``out`` (a repeated task's episodes in ``<id>.r1`` … ``<id>.rN``).

    With ``fork_after_setup`` each task's setup runs once and its episodes start from forks of
    the desktop as it stood after it (see :mod:`vdesk.harness.forked`); each outcome has the
    setup's, the checkpoint's and its fork's times. An engine that cannot checkpoint is refused
    (:class:`~vdesk.errors.CheckpointUnavailable`) before any desktop starts.

    A folder that holds a run already is refused (:class:`InvalidArgument`) unless ``existing``
    says what to do with it: ``"replace"`` removes that run first, ``"append"`` keeps its
    episodes and adds these (a task run again replaces its episode); see :mod:`vdesk.harness.folders`.

    ``placement`` says where the desktops live: this machine (:class:`LocalPlacement`, the
    default) or a Ray cluster's nodes (:class:`vdesk.cluster.placement.ClusterPlacement`,
    where an episode whose node dies runs once more elsewhere); the agent, the loop and the
    run folders stay in this process. ``environment`` is set in every desktop.
    With ``video`` each episode's screen is recorded into ``video.mp4`` in its folder.
    ``observation`` is what agents see (:data:`vdesk.harness.env.OBSERVATIONS`; local placement).
    An OSWorld task's files missing from its task-files folder are fetched (when it says so:
    :mod:`vdesk.osworld.fetch`) before its desktop starts, reporting to ``progress`` (default:
    stderr); a fetch that fails is that episode's error. The summary names the network task
    desktops were granted, if any.

    Once every episode ended, each kind of task extension among the tasks writes its own
    results of the run into ``out`` (:meth:`~vdesk.harness.extension.TaskExtension.write_results`:
    OSWorld's layout and rates, for one; ``action_space``, the space the agent speaks, names
    its folder), and the summary keeps the tables they return.
    """
    if parallel < 1:
        raise InvalidArgument(f"parallel must be at least 1, got {parallel}")
    check_observation(tasks, observation, image)
    tasks, origin = repeated(tasks, repeats)
    placement = placement or LocalPlacement(observation)
    if fork_after_setup:
        placement.check_forks()
    kept = prepare_run_folder(out, [task.id for task in tasks], existing)
    cancel = cancel or threading.Event()
    episodes = Episodes(agent_factory, agent_factory().name, out, cancel, on_event or (lambda event: None), video,
                        progress, origin=origin, fork_after_setup=fork_after_setup)
    granted = sorted({task.desktop.network for task in tasks if task.skip is None} - {"none"})
    summary = SuiteSummary(agent=episodes.agent, parallel=parallel, ray_address=placement.ray_address,
                           per_node=placement.node_limit(parallel), network=", ".join(granted) or None,
                           repeats=repeats, fork_after_setup=fork_after_setup)
    started = time.monotonic()
    try:
        placement.run(episodes, tasks, parallel=parallel, image=image, environment=environment)
    except BaseException:
        summary.interrupted = True
        raise
    finally:
        summary.episodes = kept + [episodes.outcomes[task.id] for task in tasks if task.id in episodes.outcomes]
        summary.elapsed_s = round(time.monotonic() - started, 3)
        summary.interrupted = summary.interrupted or cancel.is_set()
        summary.write(out)
    summary.results = extension_results(out, tasks, summary.agent, action_space, observation)
    if summary.results:
        summary.write(out)
    return summary


def extension_results(out: Path, episodes: Sequence[Task], agent: str, action_space: str | None,
                      observation: str) -> list[ResultsTable]:
    """Each kind of task extension among ``episodes`` writes its results of the run in ``out``
    (its ``results.json`` written already); the tables they return, in the order the kinds
    first appear."""
    kinds: dict[type[TaskExtension], list[tuple[str, TaskExtension]]] = {}
    for task in episodes:
        if task.extension is not None:
            kinds.setdefault(type(task.extension), []).append((task.id, task.extension))
    runs = {kind: SuiteRun(folder=out, episodes=tuple(members), agent=agent, action_space=action_space,
                           observation=observation) for kind, members in kinds.items()}
    return [table for kind, run in runs.items() if (table := kind.write_results(run)) is not None]


def check_observation(tasks: Sequence[Task], observation: str, image: str = DEFAULT_IMAGE) -> None:
    """Refuse, before any desktop starts, an observation that reads the accessibility tree for
    tasks whose desktops run the lean image: it has no accessibility bus."""
    if observation == "screenshot":
        return
    lean = [task.id for task in tasks if resolve(task.desktop.image or image) == IMAGE]
    if lean:
        which = f"tasks {lean[0]} and {len(lean) - 1} more run" if len(lean) > 1 else f"task {lean[0]} runs"
        raise InvalidArgument(f"--observation {observation} reads the accessibility tree, which the lean image has "
                              f"no bus for: {which} on it (give the task desktop: {{image: apps}}, or observe "
                              "with screenshot)")


class LocalPlacement:
    """Every episode on a fresh desktop of this machine's engine (or a fork of its task's
    desktop after setup), ``parallel`` at a time, observed as ``observation`` says."""

    ray_address = None

    def __init__(self, observation: str = "screenshot") -> None:
        self.observation = observation

    def node_limit(self, parallel: int) -> None:
        return None

    def check_forks(self) -> None:
        forks.docker_root(engines.connect(None))  # CheckpointUnavailable names what is missing

    def run(self, episodes: Episodes, tasks: Sequence[Task], *, parallel: int, image: str,
            environment: Mapping[str, str] | None) -> None:
        def env(task: Task, checkpoint: Checkpoint | None = None) -> DesktopEnv:
            return DesktopEnv(image=image, environment=environment, video=episodes.video_path(task),
                              observation=self.observation, checkpoint=checkpoint)

        def episode(task: Task) -> None:
            episodes.ended(task, episodes.play(task, env(task)))

        def hold(checkpoint: Checkpoint) -> Callable[[], None]:
            return forks.hold(engines.connect(None), checkpoint.name).release

        def remove(checkpoint: Checkpoint) -> None:
            forks.remove(engines.connect(None), checkpoint.name, missing_ok=True)

        setups = SharedSetups(episodes.origin,
                              lambda task: set_up(DesktopEnv(image=image, environment=environment), task, hold, remove),
                              remove)

        def forked_episode(task: Task) -> None:
            try:
                if task.skip is not None or episodes.cancel.is_set():  # no desktop at all
                    episodes.ended(task, episodes.play(task, env(task)))
                    return
                try:
                    made = setups.get(task)
                except (VdeskError, OSError) as error:
                    episodes.ended(task, episodes.unrun(task, Status.ERROR, f"setup failed: {type(error).__name__}: {error}"))
                    return
                episodes.ended(task, episodes.play(task, env(task, made.checkpoint)), **made.record())
            finally:
                setups.done(task)

        try:
            _play_all(forked_episode if episodes.fork_after_setup else episode, tasks, parallel, episodes.cancel)
        finally:
            setups.close()


def _play_all(play: Callable[[Task], None], tasks: Sequence[Task], parallel: int, cancel: threading.Event) -> None:
    """``play`` every task, ``parallel`` at a time; on an interrupt, the running ones are
    cancelled and waited for before it is re-raised."""
    with ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="vdesk-episode") as pool:
        futures = [pool.submit(play, task) for task in tasks]
        try:
            _wait_all(futures)
        except BaseException:
            cancel.set()  # running episodes stop between actions and release their desktops
            _wait_all(futures, interruptible=False)
            raise
    for future in futures:  # an episode that raised (a fault of vdesk's, not of the task) is not lost
        future.result()


def _wait_all(futures: list[Future[None]], interruptible: bool = True) -> None:
    """Wait for every future; with ``interruptible`` a KeyboardInterrupt gets through
    (a plain blocking wait would hold it until all episodes end)."""
    pending = set(futures)
    while pending:
        _, pending = wait(pending, timeout=0.2 if interruptible else None, return_when=FIRST_COMPLETED)



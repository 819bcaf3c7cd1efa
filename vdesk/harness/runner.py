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

from vdesk.errors import InvalidArgument
from vdesk.harness.env import DesktopEnv
from vdesk.harness.folders import Existing, prepare_run_folder
from vdesk.harness.suite import AgentFactory, Episodes, Placement, SuiteEvent, SuiteSummary
from vdesk.harness.tasks import Task
from vdesk.images import DEFAULT as DEFAULT_IMAGE, IMAGE, resolve
from vdesk.progress import Progress


def run_suite(tasks: Sequence[Task], agent_factory: AgentFactory, *, out: Path, parallel: int = 1,
              image: str = DEFAULT_IMAGE, cancel: threading.Event | None = None,
              on_event: Callable[[SuiteEvent], None] | None = None, placement: Placement | None = None,
              environment: Mapping[str, str] | None = None, video: bool = False,
              observation: str = "screenshot", existing: Existing = "refuse",
              progress: Progress | None = None) -> SuiteSummary:
    """Run every task once with a fresh agent and desktop, ``parallel`` at a time, into ``out``.

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
    """
    if parallel < 1:
        raise InvalidArgument(f"parallel must be at least 1, got {parallel}")
    check_observation(tasks, observation, image)
    placement = placement or LocalPlacement(observation)
    kept = prepare_run_folder(out, [task.id for task in tasks], existing)
    cancel = cancel or threading.Event()
    episodes = Episodes(agent_factory, agent_factory().name, out, cancel, on_event or (lambda event: None), video,
                        progress)
    granted = sorted({task.desktop.network for task in tasks if task.skip is None} - {"none"})
    summary = SuiteSummary(agent=episodes.agent, parallel=parallel, ray_address=placement.ray_address,
                           per_node=placement.node_limit(parallel), network=", ".join(granted) or None)
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
    return summary


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
    """Every episode on a fresh desktop of this machine's engine, ``parallel`` at a time,
    observed as ``observation`` says."""

    ray_address = None

    def __init__(self, observation: str = "screenshot") -> None:
        self.observation = observation

    def node_limit(self, parallel: int) -> None:
        return None

    def run(self, episodes: Episodes, tasks: Sequence[Task], *, parallel: int, image: str,
            environment: Mapping[str, str] | None) -> None:
        def episode(task: Task) -> None:
            env = DesktopEnv(image=image, environment=environment, video=episodes.video_path(task),
                             observation=self.observation)
            episodes.ended(task, episodes.play(task, env))

        with ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="vdesk-episode") as pool:
            futures = [pool.submit(episode, task) for task in tasks]
            try:
                _wait_all(futures)
            except BaseException:
                episodes.cancel.set()  # running episodes stop between actions and release their desktops
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



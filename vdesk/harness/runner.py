"""Running a suite: a fresh desktop per episode, N at a time, and a results file.

    summary = run_suite(load_suite("examples/suite"), ScriptedAgent, parallel=4, out=Path("runs/x"))
    print(summary.success_rate)

On KeyboardInterrupt (or when ``cancel`` is set) episodes that have not started never start,
running ones stop between two actions, and every desktop is released before this returns or
re-raises; ``results.json`` is written either way, marked ``interrupted``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType
from typing import Literal

from pydantic import BaseModel, Field, computed_field

from vdesk.errors import InvalidAction, VdeskError
from vdesk.harness.agents import Agent
from vdesk.harness.env import DesktopEnv
from vdesk.harness.loop import EpisodeResult, Status, run_episode
from vdesk.harness.record import Outcome
from vdesk.harness.tasks import Task
from vdesk.images import IMAGE

RESULTS_FILE = "results.json"
AgentFactory = Callable[[], Agent]


class SuiteSummary(BaseModel):
    """``results.json`` of a suite run."""

    agent: str
    parallel: int
    ray_address: str | None = None  # the Ray cluster the desktops lived on, if any
    per_node: int | None = None
    started_at: str = Field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    elapsed_s: float = 0.0
    interrupted: bool = False
    episodes: list[Outcome] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def successes(self) -> int:
        return sum(outcome.success for outcome in self.episodes)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def success_rate(self) -> float:
        return self.successes / len(self.episodes) if self.episodes else 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def mean_steps(self) -> float:
        return sum(o.steps for o in self.episodes) / len(self.episodes) if self.episodes else 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def time_per_step_s(self) -> float:
        """Wall time per step, over every step of every episode."""
        steps = sum(o.steps for o in self.episodes)
        return sum(o.elapsed_s for o in self.episodes) / steps if steps else 0.0

    def write(self, folder: Path) -> Path:
        path = folder / RESULTS_FILE
        path.write_text(self.model_dump_json(indent=2, exclude_none=True) + "\n", encoding="utf-8")
        return path


@dataclass(frozen=True)
class SuiteEvent:
    """Progress of a suite run, for a progress bar: an episode started, ended, or (on a
    cluster) lost its node and is to run again elsewhere."""

    kind: Literal["started", "ended", "retrying"]
    task_id: str
    result: EpisodeResult | None = None   # when it ended
    detail: str | None = None             # why it is retried


@dataclass
class Episodes:
    """What every episode of a suite run shares, and the outcomes as they come."""

    agent_factory: AgentFactory
    agent: str
    out: Path
    cancel: threading.Event
    notify: Callable[[SuiteEvent], None]
    outcomes: dict[str, Outcome] = field(default_factory=dict)

    def play(self, task: Task, env: DesktopEnv) -> EpisodeResult:
        """One episode of ``task`` on the desktop ``env`` opens, into the task's folder."""
        if self.cancel.is_set():
            return skipped(task, self.agent)
        self.notify(SuiteEvent("started", task.id))
        result = run_episode(self.agent_factory(), task, out=self.out / task.id, env=env, cancel=self.cancel)
        if result.paused is not None:
            result.paused.close()  # nobody is there to answer in a batch run
        return result

    def ended(self, task: Task, result: EpisodeResult) -> None:
        self.outcomes[task.id] = result.outcome
        self.notify(SuiteEvent("ended", task.id, result))


def run_suite(tasks: Sequence[Task], agent_factory: AgentFactory, *, out: Path, parallel: int = 1,
              image: str = IMAGE, cancel: threading.Event | None = None,
              on_event: Callable[[SuiteEvent], None] | None = None, ray_address: str | None = None,
              per_node: int | None = None, environment: Mapping[str, str] | None = None) -> SuiteSummary:
    """Run every task once with a fresh agent and desktop, ``parallel`` at a time, into ``out``.

    With ``ray_address`` (``HOST:PORT`` of a Ray cluster's head) the desktops live on the
    cluster's nodes, at most ``per_node`` on one node (default: ``parallel``), and an episode
    whose node dies runs once more elsewhere (see :mod:`vdesk.harness.cluster`); the agent,
    the loop and the run folders stay in this process. ``environment`` is set in every desktop.
    """
    if parallel < 1 or (per_node is not None and per_node < 1):
        raise InvalidAction(f"parallel and per_node must be at least 1, got {parallel} and {per_node}")
    if per_node is not None and ray_address is None:
        raise InvalidAction("per_node limits desktops per cluster node: it needs a Ray address")
    out.mkdir(parents=True, exist_ok=True)
    cancel = cancel or threading.Event()
    episodes = Episodes(agent_factory, agent_factory().name, out, cancel, on_event or (lambda event: None))
    summary = SuiteSummary(agent=episodes.agent, parallel=parallel, ray_address=ray_address,
                           per_node=(per_node or parallel) if ray_address else None)
    started = time.monotonic()
    try:
        if ray_address is None:
            _run_here(episodes, tasks, parallel, image, environment)
        else:
            _cluster().run_on_cluster(episodes, tasks, address=ray_address, parallel=parallel,
                                      per_node=per_node or parallel, image=image, environment=environment)
    except BaseException:
        summary.interrupted = True
        raise
    finally:
        summary.episodes = [episodes.outcomes[task.id] for task in tasks if task.id in episodes.outcomes]
        summary.elapsed_s = round(time.monotonic() - started, 3)
        summary.interrupted = summary.interrupted or cancel.is_set()
        summary.write(out)
    return summary


def join_cluster(address: str) -> None:
    """Join the Ray cluster at ``address`` now, as :func:`run_suite` would: fails at once, in
    one line, when nothing answers there or Ray is not installed."""
    _cluster().connect(address)


def _cluster() -> ModuleType:
    """:mod:`vdesk.harness.cluster`, which needs Ray (an optional dependency)."""
    try:
        from vdesk.harness import cluster
    except ImportError as missing:  # say how to get it, in one line
        raise VdeskError(str(missing)) from None
    return cluster


def _run_here(episodes: Episodes, tasks: Sequence[Task], parallel: int, image: str,
              environment: Mapping[str, str] | None) -> None:
    """Every episode on a fresh desktop of this machine's engine, ``parallel`` at a time."""

    def episode(task: Task) -> None:
        episodes.ended(task, episodes.play(task, DesktopEnv(image=image, environment=environment)))

    with ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="vdesk-episode") as pool:
        futures = [pool.submit(episode, task) for task in tasks]
        try:
            _wait_all(futures)
        except BaseException:
            episodes.cancel.set()  # running episodes stop between actions and release their desktops
            _wait_all(futures, interruptible=False)
            raise


def _wait_all(futures: list[Future[None]], interruptible: bool = True) -> None:
    """Wait for every future; with ``interruptible`` a KeyboardInterrupt gets through
    (a plain blocking wait would hold it until all episodes end)."""
    pending = set(futures)
    while pending:
        _, pending = wait(pending, timeout=0.2 if interruptible else None, return_when=FIRST_COMPLETED)


def skipped(task: Task, agent: str, why: str = "not started: the run was interrupted") -> EpisodeResult:
    """The result of an episode cut short (or never started) because the run was interrupted."""
    outcome = Outcome(task_id=task.id, agent=agent, status=Status.CANCELLED.value, success=False,
                      steps=0, elapsed_s=0.0, error=why)
    return EpisodeResult(outcome)

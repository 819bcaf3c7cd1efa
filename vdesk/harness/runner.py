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
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel, Field, computed_field

from vdesk.harness.agents import Agent
from vdesk.harness.loop import EpisodeResult, Status, run_episode
from vdesk.harness.record import Outcome
from vdesk.harness.tasks import Task
from vdesk.image import IMAGE

RESULTS_FILE = "results.json"
AgentFactory = Callable[[], Agent]


class SuiteSummary(BaseModel):
    """``results.json`` of a suite run."""

    agent: str
    parallel: int
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
    """Progress of a suite run, for a progress bar: an episode started or ended."""

    kind: str                          # "started" | "ended"
    task_id: str
    result: EpisodeResult | None = None


def run_suite(tasks: Sequence[Task], agent_factory: AgentFactory, *, out: Path, parallel: int = 1,
              image: str = IMAGE, cancel: threading.Event | None = None,
              on_event: Callable[[SuiteEvent], None] | None = None) -> SuiteSummary:
    """Run every task once with a fresh agent and desktop, ``parallel`` at a time, into ``out``."""
    if parallel < 1:
        raise ValueError(f"parallel must be at least 1, got {parallel}")
    out.mkdir(parents=True, exist_ok=True)
    cancel = cancel or threading.Event()
    notify = on_event or (lambda event: None)
    summary = SuiteSummary(agent=agent_factory().name, parallel=parallel)
    started = time.monotonic()

    def episode(task: Task) -> EpisodeResult:
        if cancel.is_set():
            return _skipped(task, summary.agent)
        notify(SuiteEvent("started", task.id))
        result = run_episode(agent_factory(), task, out=out / task.id, image=image, cancel=cancel)
        if result.paused is not None:
            result.paused.close()  # nobody is there to answer in a batch run
        notify(SuiteEvent("ended", task.id, result))
        return result

    with ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="vdesk-episode") as pool:
        futures = [pool.submit(episode, task) for task in tasks]
        try:
            _wait_all(futures)
        except BaseException:
            summary.interrupted = True
            cancel.set()  # running episodes stop between actions and release their desktops
            _wait_all(futures, interruptible=False)
            raise
        finally:
            summary.episodes = [f.result().outcome for f in futures if f.done() and not f.exception()]
            summary.elapsed_s = round(time.monotonic() - started, 3)
            summary.interrupted = summary.interrupted or cancel.is_set()
            summary.write(out)
    return summary


def _wait_all(futures: list[Future[EpisodeResult]], interruptible: bool = True) -> None:
    """Wait for every future; with ``interruptible`` a KeyboardInterrupt gets through
    (a plain blocking wait would hold it until all episodes end)."""
    pending = set(futures)
    while pending:
        _, pending = wait(pending, timeout=0.2 if interruptible else None, return_when=FIRST_COMPLETED)


def _skipped(task: Task, agent: str) -> EpisodeResult:
    outcome = Outcome(task_id=task.id, agent=agent, status=Status.CANCELLED.value, success=False,
                      steps=0, elapsed_s=0.0, error="not started: the run was interrupted")
    return EpisodeResult(outcome)

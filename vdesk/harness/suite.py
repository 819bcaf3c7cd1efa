"""What a suite run is made of: its summary (``results.json``), its events, the episodes it
shares, and where they run (a :class:`Placement`).

:mod:`vdesk.harness.runner` runs a suite with a placement: on this machine
(:class:`~vdesk.harness.runner.LocalPlacement`) or on a Ray cluster
(:class:`vdesk.cluster.placement.ClusterPlacement`); both play the same :class:`Episodes`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, Field, computed_field

from vdesk.errors import FetchError
from vdesk.harness.agents.base import Agent
from vdesk.harness.env import DesktopEnv
from vdesk.harness.episode import Status
from vdesk.harness.extension import ResultsTable
from vdesk.harness.loop import EpisodeResult, run_episode
from vdesk.harness.record import OUTCOME_FILE, RESULTS_FILE, VIDEO_FILE, Outcome, Recorder, RunInfo, write_outcome
from vdesk.harness.tasks import Task
from vdesk.progress import Progress

AgentFactory = Callable[[], Agent]


class SuiteSummary(BaseModel):
    """``results.json`` of a suite run."""

    agent: str
    parallel: int
    ray_address: str | None = None  # the Ray cluster the desktops lived on, if any
    per_node: int | None = None
    network: str | None = None      # the network task desktops were granted ("bridge"), if any
    repeats: int = 1                # episodes of each task (folders <id>.r1 … when more than one)
    fork_after_setup: bool = False  # each task set up once, its episodes run on forks of that desktop
    started_at: str = Field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    elapsed_s: float = 0.0
    interrupted: bool = False
    episodes: list[Outcome] = Field(default_factory=list)
    results: list[ResultsTable] = Field(default_factory=list)  # task extensions' own, of this run

    @computed_field  # type: ignore[prop-decorator]
    @property
    def successes(self) -> int:
        return sum(outcome.success for outcome in self.episodes)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def skipped(self) -> int:
        """Tasks never run because they need what vdesk cannot offer (not counted as failures)."""
        return sum(outcome.status == Status.SKIPPED.value for outcome in self.episodes)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def success_rate(self) -> float:
        """Successes among the tasks that ran (skipped ones apart)."""
        ran = len(self.episodes) - self.skipped
        return self.successes / ran if ran else 0.0

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
    video: bool = False  # record each episode into its folder
    progress: Progress | None = None  # lines about files fetched for a task (default: stderr)
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    origin: dict[str, str] = field(default_factory=dict)  # an episode's id → its task's, when they differ (repeats)
    fork_after_setup: bool = False  # set each task up once, start its episodes from forks of it (vdesk.harness.forked)

    def video_path(self, task: Task) -> Path | None:
        """Where ``task``'s episode is recorded, when videos are wanted."""
        return self.out / task.id / VIDEO_FILE if self.video else None

    def play(self, task: Task, env: DesktopEnv) -> EpisodeResult:
        """One episode of ``task`` on the desktop ``env`` opens, into the task's folder."""
        if self.cancel.is_set():
            return skipped(task, self.agent)
        if task.skip is not None:  # what it needs cannot be had offline: no desktop at all
            return self._skip(task)
        self.notify(SuiteEvent("started", task.id))
        if task.extension is not None:  # its files, before its desktop starts
            try:
                task.extension.fetch(task.base_dir, self.progress, self.cancel)
            except FetchError as error:
                if self.cancel.is_set():
                    return skipped(task, self.agent, "cancelled while its files were fetched")
                return self.unrun(task, Status.ERROR, f"fetch failed: {error}")
        result = run_episode(self.agent_factory(), task, out=self.out / task.id, env=env, cancel=self.cancel)
        if result.paused is not None:
            result.paused.close()  # nobody is there to answer in a batch run
        return result

    def _skip(self, task: Task) -> EpisodeResult:
        """A run folder saying why ``task`` was not run (``vdesk report`` shows the reason)."""
        return self.unrun(task, Status.SKIPPED, f"skipped: {task.skip}")

    def unrun(self, task: Task, status: Status, error: str) -> EpisodeResult:
        """A run folder saying why ``task`` did not start a desktop: ``status`` and ``error``."""
        size = task.desktop.size
        recorder = Recorder(self.out / task.id, task, RunInfo(task_id=task.id, agent=self.agent, image_size=size,
                                                              screen_size=size, scale=task.desktop.scale))
        outcome = Outcome(task_id=task.id, agent=self.agent, status=status.value, success=False,
                          steps=0, elapsed_s=0.0, error=error)
        return EpisodeResult(recorder.finish(outcome, None), self.out / task.id)

    def ended(self, task: Task, result: EpisodeResult, **record: float | str) -> None:
        """``task``'s episode ended; ``record`` adds fields to its outcome (and its
        ``outcome.json``): what a placement knows of it, e.g. a shared setup's times."""
        if task.id in self.origin and self.origin[task.id] != task.id:
            record = {"repeat_of": self.origin[task.id], **record}
        if record:
            result = replace(result, outcome=result.outcome.model_copy(update=record))
            if result.run_dir is not None and (result.run_dir / OUTCOME_FILE).is_file():
                write_outcome(result.run_dir, result.outcome)
        self.outcomes[task.id] = result.outcome
        self.notify(SuiteEvent("ended", task.id, result))


class Placement(Protocol):
    """Where a suite's episodes run: each is played on a desktop the placement opens, and its
    outcome handed to :meth:`Episodes.ended`."""

    @property
    def ray_address(self) -> str | None:
        """The Ray cluster the desktops live on (None: this machine), for ``results.json``."""
        ...

    def node_limit(self, parallel: int) -> int | None:
        """Desktops at a time on one node of a cluster (None: this machine)."""
        ...

    def check_forks(self) -> None:
        """Raise, before anything starts, when episodes cannot start from forks here
        (:class:`~vdesk.errors.CheckpointUnavailable` saying what is missing)."""
        ...

    def run(self, episodes: Episodes, tasks: Sequence[Task], *, parallel: int, image: str,
            environment: Mapping[str, str] | None) -> None:
        """Play every task, ``parallel`` at a time, each on a fresh desktop of ``image`` with
        ``environment`` set (with ``episodes.fork_after_setup``: on a fork of its task's desktop
        after setup, its outcome given the setup's times); on an interrupt, release every
        desktop (and checkpoint) before re-raising."""
        ...


def skipped(task: Task, agent: str, why: str = "not started: the run was interrupted") -> EpisodeResult:
    """The result of an episode cut short (or never started) because the run was interrupted."""
    outcome = Outcome(task_id=task.id, agent=agent, status=Status.CANCELLED.value, success=False,
                      steps=0, elapsed_s=0.0, error=why)
    return EpisodeResult(outcome)

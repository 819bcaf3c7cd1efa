"""Replaying a run: the recorded actions again, on a fresh desktop, compared with the original.

A replay matches when it reaches the same check outcomes and the same final frame (a hash of
the pixels). That holds for the example suite because everything that could make two frames
differ is pinned: the image's fonts, locale (C.UTF-8) and time zone; no clock on screen; no
pointer in frames (the VNC server leaves it out); xterm's cursor does not blink; and the
tasks set the shell prompt (``PS1='$ '``) instead of showing the container's host name.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vdesk.harness.agents import ReplayAgent
from vdesk.harness.record import Outcome, episode_folders, load_run
from vdesk.harness.runner import SuiteEvent, SuiteSummary, run_suite
from vdesk.images import IMAGE


@dataclass(frozen=True)
class ReplayComparison:
    """One episode and its replay."""

    task_id: str
    original: Outcome | None        # None when the original never finished writing
    replayed: Outcome

    @property
    def same_checks(self) -> bool:
        if self.original is None:
            return False
        return ([c.passed for c in self.original.checks] == [c.passed for c in self.replayed.checks]
                and self.original.success == self.replayed.success)

    @property
    def same_final_frame(self) -> bool:
        return self.original is not None and self.original.final_hash is not None \
            and self.original.final_hash == self.replayed.final_hash

    @property
    def matches(self) -> bool:
        return self.same_checks and self.same_final_frame


@dataclass(frozen=True)
class ReplayReport:
    comparisons: list[ReplayComparison]
    summary: SuiteSummary
    out: Path

    @property
    def matches(self) -> bool:
        return bool(self.comparisons) and all(c.matches for c in self.comparisons)


def default_replay_dir(run: Path) -> Path:
    """Where a replay of ``run`` goes unless told: beside it, as ``RUN.replay``."""
    return run.parent / f"{run.name}.replay"


def replay(run: str | Path, *, out: Path | None = None, parallel: int = 1, image: str = IMAGE,
           cancel: threading.Event | None = None,
           on_event: Callable[[SuiteEvent], None] | None = None) -> ReplayReport:
    """Re-execute the trajectories of ``run`` (an episode folder or a suite run) on fresh
    desktops, writing new run folders to ``out``, and compare each with its original."""
    run = Path(run)
    originals = [load_run(folder) for folder in episode_folders(run)]
    out = out or default_replay_dir(run)
    tasks = [original.task for original in originals]
    summary = run_suite(tasks, lambda: ReplayAgent(run), out=out, parallel=parallel, image=image,
                        cancel=cancel, on_event=on_event)
    replayed = {outcome.task_id: outcome for outcome in summary.episodes}
    comparisons = [ReplayComparison(o.task.id, o.outcome, replayed[o.task.id])
                   for o in originals if o.task.id in replayed]
    return ReplayReport(comparisons, summary, out)

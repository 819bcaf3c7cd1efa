"""What the suite commands (eval, replay) show in a terminal: a one-line progress bar whose
counts are never squeezed, and summary tables (:func:`vdesk.cli.options.columns`, never cut)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import Progress, ProgressColumn, Task
from rich.text import Text

from vdesk.cli.options import columns

if TYPE_CHECKING:  # types only: the harness is imported by the commands that run it
    from vdesk.harness.record import Outcome
    from vdesk.harness.replay import ReplayReport
    from vdesk.harness.suite import SuiteEvent, SuiteSummary
    from vdesk.harness.extension import ResultsTable

@dataclass
class SuiteProgress:
    """Counts of a suite run as its events arrive; :meth:`line` is the bar's text."""

    label: str
    total: int
    done: int = 0  # episodes that ended, not those skipped when the run was interrupted
    passed: int = 0
    running: list[str] = field(default_factory=list)
    started_at: float = field(default_factory=time.monotonic)

    def count(self, event: SuiteEvent) -> str | None:
        """Count ``event``; returns a line to print above the bar, if any."""
        if event.kind == "started":
            self.running.append(event.task_id)
        elif event.task_id in self.running:  # an episode can end (or be retried) before it started
            self.running.remove(event.task_id)
        if event.kind == "retrying":
            return f"{event.task_id}: retrying on another node ({event.detail})"
        if event.kind == "ended" and event.result is not None and event.result.outcome.status != "cancelled":
            self.done += 1
            self.passed += bool(event.result.outcome.success)
        return None

    def line(self, width: int) -> str:
        """``eval 4/14  2 passed  0:12 [####....] running: a, b +3`` within ``width``: the
        counts are whole; the bar and the names of running tasks take what room is left."""
        elapsed = int(time.monotonic() - self.started_at)
        text = f"{self.label} {self.done}/{self.total}  {self.passed} passed  {elapsed // 60}:{elapsed % 60:02d}"
        bar_width = min(20, width - len(text) - 3)
        if bar_width >= 5:
            filled = bar_width * self.done // max(1, self.total)
            text += f" [{'#' * filled}{'.' * (bar_width - filled)}]"
        return text + _running(self.running, width - len(text))


def _running(names: list[str], room: int) -> str:
    """`` running: a, b +3`` in at most ``room`` characters, names whole or left out."""
    for shown in range(len(names), 0, -1):
        rest = len(names) - shown
        text = " running: " + ", ".join(names[:shown]) + (f" +{rest}" if rest else "")
        if len(text) <= room:
            return text
    text = f" {len(names)} running" if names else ""
    return text if len(text) <= room else ""


class _LineColumn(ProgressColumn):
    def __init__(self, progress: SuiteProgress, console: Console) -> None:
        super().__init__()
        self.progress, self.console = progress, console

    def render(self, task: Task) -> Text:
        return Text(self.progress.line(self.console.width - 1), no_wrap=True, overflow="crop")


@contextmanager
def suite_progress(console: Console, total: int, label: str = "eval") -> Iterator[tuple[SuiteProgress, Callable[[SuiteEvent], None]]]:
    """A one-line bar over a suite run; yields the counts and the ``on_event`` callback for the run."""
    progress = SuiteProgress(label, total)
    with Progress(_LineColumn(progress, console), console=console, transient=False) as bar:
        bar.add_task(label, total=total)

        def on_event(event: SuiteEvent) -> None:
            said = progress.count(event)
            if said:
                bar.console.print(said, highlight=False, markup=False, soft_wrap=True)
            bar.refresh()

        yield progress, on_event


def summary_table(summary: SuiteSummary) -> str:
    """The title, one row per episode, then the totals: success rate, steps, time per step;
    with forks after setup, each task's setup and each episode's fork time too."""
    ran = len(summary.episodes) - summary.skipped
    skipped = f", {summary.skipped} skipped" if summary.skipped else ""
    title = (f"{summary.agent}: {summary.successes}/{ran} passed ({summary.success_rate:.0%}){skipped} "
             f"in {summary.elapsed_s:.1f} s" + (" — interrupted" if summary.interrupted else "")
             + (f" — desktops granted the network: {summary.network}" if summary.network else ""))
    forked = summary.fork_after_setup
    rows = []
    for outcome in summary.episodes:
        notes = [outcome.retry_note, outcome.error or outcome.request or "; ".join(outcome.failed_checks)]
        times = [_seconds(outcome.setup_s), _seconds(outcome.fork_s)] if forked else []
        rows.append([outcome.task_id, outcome.status, "yes" if outcome.success else "no", str(outcome.steps),
                     f"{outcome.elapsed_s:.2f} s", f"{outcome.time_per_step_s:.2f} s", *times,
                     "; ".join(note for note in notes if note)])
    rows.append(["all", "", f"{summary.success_rate:.0%}", f"{summary.mean_steps:.1f} avg", f"{summary.elapsed_s:.1f} s",
                 f"{summary.time_per_step_s:.2f} s", *(["", ""] if forked else []), ""])
    headers = ["TASK", "STATUS", "OK", "STEPS", "TIME", "PER STEP", *(["SETUP", "FORK"] if forked else []), "DETAIL"]
    return title + "\n" + columns(headers, rows)


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


def results_table(table: ResultsTable, out: Path) -> str:
    """A task extension's own results of a suite run (OSWorld's rates per domain, for one)."""
    return "\n".join([f"{table.kind}: {out / table.file}", columns(table.columns, table.rows), *table.notes])


def replay_table(report: ReplayReport) -> str:
    """Each replayed episode against its original: checks and final frame."""
    same = sum(c.matches for c in report.comparisons)
    rows = [[c.task_id, _verdict(c.original), _verdict(c.replayed), _yes(c.same_checks), _yes(c.same_final_frame)]
            for c in report.comparisons]
    why = [f"{task_id}: {difference}" for task_id, difference in report.differences.items()]
    return "\n".join([f"replay: {same}/{len(report.comparisons)} match — {report.out}",
                      columns(["TASK", "ORIGINAL", "REPLAY", "SAME CHECKS", "SAME FINAL FRAME"], rows), *why])


def _verdict(outcome: Outcome | None) -> str:
    if outcome is None:
        return "unfinished"
    return f"{outcome.status}, {'passed' if outcome.success else 'failed'}"


def _yes(value: bool) -> str:
    return "yes" if value else "no"

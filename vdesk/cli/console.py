"""What the harness commands show in a terminal: a progress bar and summary tables (rich)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from vdesk.harness.record import Outcome
from vdesk.harness.replay import ReplayReport
from vdesk.harness.runner import SuiteEvent, SuiteSummary


@contextmanager
def suite_progress(console: Console, total: int) -> Iterator[Callable[[SuiteEvent], None]]:
    """A progress bar over a suite run; yields the ``on_event`` callback for :func:`run_suite`."""
    columns = (TextColumn("[bold]eval"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[passed]} passed"),
               TimeElapsedColumn(), TextColumn("{task.fields[running]}"))
    with Progress(*columns, console=console, transient=False) as progress:
        bar = progress.add_task("eval", total=total, passed=0, running="")
        running: list[str] = []
        passed = 0

        def on_event(event: SuiteEvent) -> None:
            nonlocal passed
            if event.kind == "started":
                running.append(event.task_id)
            elif event.task_id in running:  # an episode can end (or be retried) before it started
                running.remove(event.task_id)
            if event.kind == "retrying":
                progress.console.print(f"{event.task_id}: retrying on another node ({event.detail})",
                                       highlight=False, markup=False)
            elif event.kind == "ended":
                passed += bool(event.result and event.result.success)
                progress.advance(bar)
            progress.update(bar, passed=passed, running=", ".join(running)[:60])

        yield on_event


def summary_table(summary: SuiteSummary) -> Table:
    """One row per episode, then the totals: success rate, steps, time per step."""
    table = Table("TASK", "STATUS", "OK", "STEPS", "TIME", "PER STEP", "DETAIL",
                  title=f"{summary.agent}: {summary.successes}/{len(summary.episodes)} passed "
                        f"({summary.success_rate:.0%}) in {summary.elapsed_s:.1f} s"
                        + (" — interrupted" if summary.interrupted else ""))
    for outcome in summary.episodes:
        failed = [c.detail for c in outcome.checks if not c.passed]
        notes = [outcome.retry_note, outcome.error or outcome.request or "; ".join(failed)]
        detail = "; ".join(note for note in notes if note)
        table.add_row(outcome.task_id, outcome.status, "[green]yes[/]" if outcome.success else "[red]no[/]",
                      str(outcome.steps), f"{outcome.elapsed_s:.2f} s", f"{outcome.time_per_step_s:.2f} s",
                      detail[:80])
    table.add_section()
    table.add_row("all", "", f"{summary.success_rate:.0%}", f"{summary.mean_steps:.1f} avg", f"{summary.elapsed_s:.1f} s",
                  f"{summary.time_per_step_s:.2f} s", "")
    return table


def replay_table(report: ReplayReport) -> Table:
    """Each replayed episode against its original: checks and final frame."""
    same = sum(c.matches for c in report.comparisons)
    table = Table("TASK", "ORIGINAL", "REPLAY", "SAME CHECKS", "SAME FINAL FRAME",
                  title=f"replay: {same}/{len(report.comparisons)} match — {report.out}")
    for comparison in report.comparisons:
        original = comparison.original
        table.add_row(comparison.task_id, _verdict(original), _verdict(comparison.replayed),
                      _yes(comparison.same_checks), _yes(comparison.same_final_frame))
    return table


def _verdict(outcome: Outcome | None) -> str:
    if outcome is None:
        return "unfinished"
    return f"{outcome.status}, {'passed' if outcome.success else 'failed'}"


def _yes(value: bool) -> str:
    return "[green]yes[/]" if value else "[red]no[/]"

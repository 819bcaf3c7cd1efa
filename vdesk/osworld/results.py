"""OSWorld's results layout beside vdesk's run folders, and its success rates per domain.

    RUN/<action_space>/<observation_type>/<model>/<domain>/<task_id>/
        result.txt          the score, as the reference writes it
        traj.jsonl          one line per step: step_num, action_timestamp, action, response,
                            reward, done, info, screenshot_file
        step_<n>_<timestamp>.png   the screenshot the agent saw at that step
        recording.mp4       the episode's video (`vdesk eval --video`)
    RUN/osworld.json        the success rate per domain, per category and overall

The rates are computed as the reference's result script computes them: the mean of
``result.txt`` over the tasks that wrote one. Skipped tasks (and episodes that ended in an
error, which write no ``result.txt`` there either) are listed apart, with their reasons, and
never counted as failures.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path

from pydantic import BaseModel, Field

from vdesk.harness.episode import JUDGED, Status
from vdesk.harness.record import VIDEO_FILE, Outcome, is_run, load_run
from vdesk.harness.extension import ResultsTable
from vdesk.osworld.session import CHECK_KIND

SUMMARY_FILE = "osworld.json"
CATEGORIES = {"Office": ("libreoffice_calc", "libreoffice_impress", "libreoffice_writer"),
              "Daily": ("vlc", "thunderbird", "chrome"), "Professional": ("gimp", "vs_code")}


class DomainRate(BaseModel):
    tasks: int
    score: float
    success_rate: float


class OSWorldSummary(BaseModel):
    """``osworld.json``."""

    action_space: str
    observation_type: str
    model: str
    domains: dict[str, DomainRate] = Field(default_factory=dict)
    categories: dict[str, DomainRate] = Field(default_factory=dict)
    overall: DomainRate = DomainRate(tasks=0, score=0.0, success_rate=0.0)
    skipped: dict[str, str] = Field(default_factory=dict)   # task id → why
    errors: dict[str, str] = Field(default_factory=dict)    # task id → what went wrong


def score_of(outcome: Outcome) -> float | None:
    """The OSWorld evaluator's score of a judged episode (None: not judged, or no evaluator)."""
    if Status(outcome.status) not in JUDGED:
        return None
    scores = [check.score for check in outcome.checks if check.kind == CHECK_KIND and check.score is not None]
    return scores[0] if scores else None


def write_layout(out: Path, episodes: Sequence[tuple[Outcome, str]], *, action_space: str,
                 observation_type: str, model: str) -> OSWorldSummary:
    """Write the OSWorld layout of a suite run in ``out`` and ``osworld.json``; returns the
    summary. ``episodes``: each OSWorld episode's outcome and its task's domain."""
    summary = OSWorldSummary(action_space=action_space, observation_type=observation_type, model=model)
    scores: dict[str, list[float]] = {}
    for outcome, domain in episodes:
        if outcome.status == Status.SKIPPED.value:
            summary.skipped[outcome.task_id] = (outcome.error or "skipped").removeprefix("skipped: ")
            continue
        score = score_of(outcome)
        if score is None:
            summary.errors[outcome.task_id] = outcome.error or outcome.status
            continue
        folder = out / action_space / observation_type / model / domain / outcome.task_id
        _episode(out / outcome.task_id, folder, score)
        scores.setdefault(domain, []).append(score)
    summary.domains = {domain: _rate(values) for domain, values in sorted(scores.items())}
    summary.categories = {name: _rate([s for d in members for s in scores.get(d, [])])
                          for name, members in CATEGORIES.items() if any(d in scores for d in members)}
    summary.overall = _rate([s for values in scores.values() for s in values])
    (out / SUMMARY_FILE).write_text(summary.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return summary


def rates_table(summary: OSWorldSummary) -> ResultsTable:
    """OSWorld's success rate per domain and category, as its result script computes it."""
    rows = [[name, str(rate.tasks), f"{rate.score:g}", f"{rate.success_rate:.1%}"]
            for name, rate in [*summary.domains.items(), *summary.categories.items(), ("overall", summary.overall)]]
    notes = [f"skipped {task_id}: {why}" for task_id, why in summary.skipped.items()]
    notes += [f"no result {task_id}: {why}" for task_id, why in summary.errors.items()]
    return ResultsTable(kind="osworld", file=SUMMARY_FILE, columns=["DOMAIN", "TASKS", "SCORE", "SUCCESS RATE"],
                        rows=rows, notes=notes)


def _rate(values: list[float]) -> DomainRate:
    total = sum(values)
    return DomainRate(tasks=len(values), score=round(total, 6), success_rate=round(total / len(values), 6) if values else 0.0)


def _episode(run_folder: Path, folder: Path, score: float) -> None:
    """One task's folder of the layout, from its vdesk run folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "result.txt").write_text(f"{score}\n", encoding="utf-8")
    lines = []
    if is_run(run_folder):
        run = load_run(run_folder)
        started = datetime.fromisoformat(run.info.started_at) if run.info.started_at else datetime.now(timezone.utc)
        for number, step in enumerate(run.steps, 1):
            stamp = (started + timedelta(seconds=step.at_s)).strftime("%Y%m%d@%H%M%S")
            shot = f"step_{number}_{stamp}.png"
            if (run_folder / step.frame).is_file():
                shutil.copyfile(run_folder / step.frame, folder / shot)
            action = step.raw_reply if step.raw_reply is not None else [a.model_dump(exclude_none=True) for a in step.actions]
            lines.append({"step_num": number, "action_timestamp": stamp, "action": action,
                          "response": step.raw_reply or "", "reward": 0, "done": number == len(run.steps),
                          "info": {"results": [r.status for r in step.results]}, "screenshot_file": shot})
        if (run_folder / VIDEO_FILE).is_file():
            shutil.copyfile(run_folder / VIDEO_FILE, folder / "recording.mp4")
    (folder / "traj.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")

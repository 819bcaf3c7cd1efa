"""The apps suite with its scripted solutions at --parallel 4, and a replay of it that reaches
the same checks and the same final frames (the tasks run on a fixed clock)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vdesk.harness.agents import ScriptedAgent
from vdesk.harness.record import episode_folders, load_run
from vdesk.harness.replay import replay
from vdesk.harness.runner import run_suite
from vdesk.harness.tasks import load_suite

pytestmark = pytest.mark.desktop
APPS_SUITE = Path(__file__).resolve().parents[2] / "examples" / "apps"


@pytest.fixture(scope="module")
def apps_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("apps-suite")
    run_suite(load_suite(APPS_SUITE), ScriptedAgent, out=out, parallel=4)
    return out


def test_the_apps_suite_has_twenty_tasks_on_the_apps_image():
    tasks = load_suite(APPS_SUITE)
    assert len(tasks) >= 20
    assert all(task.desktop.image == "apps" and task.desktop.clock and task.solution for task in tasks)


def test_every_apps_task_passes_with_its_scripted_solution(apps_run):
    folders = episode_folders(apps_run)
    no_outcome = [folder.name for folder in folders if load_run(folder).outcome is None]
    assert not no_outcome, f"episodes that never finished: {no_outcome}"
    outcomes = [load_run(folder).outcome for folder in folders]
    failed = {o.task_id: o.error or [c.detail for c in o.checks if not c.passed] for o in outcomes if not o.success}
    assert not failed
    assert sorted(o.task_id for o in outcomes) == sorted(task.id for task in load_suite(APPS_SUITE))


def test_a_replay_of_the_apps_suite_matches_it(apps_run, tmp_path):
    report = replay(apps_run, out=tmp_path / "replay", parallel=4)
    assert not report.differences  # each mismatch says why: verdicts, failed checks, frames
    assert len(report.comparisons) == len(load_suite(APPS_SUITE))

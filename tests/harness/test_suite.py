"""The example suite with its scripted solutions at --parallel 4, replays of it, and interrupts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import docker
import pytest

from tests.harness.conftest import SUITE, assert_no_desktop_left, vdesk_containers
from vdesk.harness.record import episode_folders, load_run
from vdesk.harness.replay import replay
from vdesk.harness.suite import SuiteSummary
from vdesk.harness.tasks import load_suite

pytestmark = pytest.mark.desktop
VDESK = str(Path(sys.executable).parent / "vdesk")


def test_every_example_task_passes_with_its_scripted_solution(suite_run):
    summary = SuiteSummary.model_validate_json((suite_run / "results.json").read_text())
    failed = {o.task_id: o.error or [c.detail for c in o.checks if not c.passed] for o in summary.episodes if not o.success}
    assert not failed
    assert len(summary.episodes) == len(load_suite(SUITE)) and summary.success_rate == 1.0
    assert summary.parallel == 4 and not summary.interrupted
    data = json.loads((suite_run / "results.json").read_text())
    assert data["success_rate"] == 1.0 and data["time_per_step_s"] > 0


def test_each_episode_leaves_a_complete_run_folder(suite_run):
    for folder in episode_folders(suite_run):
        run = load_run(folder)
        assert run.outcome is not None and run.outcome.final_hash
        assert run.steps and all((folder / step.frame).is_file() for step in run.steps)
        assert (folder / "final.png").is_file() and run.task.id == folder.name


def test_a_replay_reaches_the_same_checks_and_the_same_final_frame(suite_run, tmp_path):
    client = docker.from_env()
    before = vdesk_containers(client)
    report = replay(suite_run, out=tmp_path / "replay", parallel=4)
    assert not report.differences
    assert len(report.comparisons) == len(load_suite(SUITE)) and report.matches
    assert_no_desktop_left(client, before)


def test_replaying_one_episode_from_the_command_line(suite_run, tmp_path):
    episode = suite_run / "terminal-echo"
    done = subprocess.run([VDESK, "replay", str(episode), "--out", str(tmp_path / "again")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1/1 match" in done.stdout
    assert load_run(tmp_path / "again" / "terminal-echo").outcome.success


def test_a_replay_that_differs_says_why_and_exits_non_zero(suite_run, tmp_path):
    # A record whose check failed (written so here): its replay passes, and the table says so.
    episode = tmp_path / "terminal-echo"
    subprocess.run(["cp", "-r", str(suite_run / "terminal-echo"), str(episode)], check=True)
    outcome = json.loads((episode / "outcome.json").read_text())
    outcome["success"] = False
    outcome["checks"][0].update(passed=False, detail="hello.txt holds 'hullo'")
    (episode / "outcome.json").write_text(json.dumps(outcome))
    done = subprocess.run([VDESK, "replay", str(episode), "--out", str(tmp_path / "again")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "0/1 match" in done.stdout
    assert ("terminal-echo: original: finished, failed (hello.txt holds 'hullo'); replay: finished, passed"
            in done.stdout), done.stdout


def _stepping(out: Path) -> list[str]:
    """Episodes under ``out`` that have recorded at least one step."""
    return sorted(steps.parent.name for steps in out.glob("*/steps.jsonl") if steps.stat().st_size > 0)


def test_an_interrupted_eval_leaves_no_desktop_behind(tmp_path):
    suite = tmp_path / "slow"
    suite.mkdir()
    for index in range(4):
        (suite / f"slow-{index}.yaml").write_text(json.dumps({
            "id": f"slow-{index}", "instruction": "wait", "desktop": {"size": "640x480"},
            "checks": [{"command": "true"}], "solution": [[{"type": "wait", "inputs": {"time": 1}}]] * 30}))
    client = docker.from_env()
    process = subprocess.Popen([VDESK, "eval", str(suite), "--parallel", "2", "--out", str(tmp_path / "out")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # The episodes are running: both have recorded a step (each takes 30 steps of 1 s).
    deadline = time.monotonic() + 180
    while len(running := _stepping(tmp_path / "out")) < 2:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"episodes stepping after 180 s: {running}"
        time.sleep(0.1)
    assert len(vdesk_containers(client, process.pid)) == 2
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=90)
    assert process.returncode == 130, stderr
    assert_no_desktop_left(client, set(), within=60, pid=process.pid)  # the engine removes them
    summary = SuiteSummary.model_validate_json((tmp_path / "out" / "results.json").read_text())
    assert summary.interrupted and summary.episodes
    assert {o.status for o in summary.episodes} == {"cancelled"}
    assert os.path.isdir(tmp_path / "out" / "slow-0")


def test_eval_from_the_command_line_prints_the_summary_and_fails_when_a_task_fails(tmp_path):
    task = json.loads(json.dumps({
        "id": "impossible", "instruction": "Nothing can pass this.", "desktop": {"size": "640x480"},
        "checks": [{"command": "false"}], "solution": [[{"type": "finished"}]]}))
    (tmp_path / "impossible.json").write_text(json.dumps(task))
    done = subprocess.run([VDESK, "eval", str(tmp_path / "impossible.json"), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "0/1 passed" in done.stdout
    summary = SuiteSummary.model_validate_json((tmp_path / "out" / "results.json").read_text())
    assert summary.episodes[0].checks[0].detail == "exit code 1, expected 0"


def test_every_example_task_with_a_wrong_solution_fails_with_it_from_the_command_line(tmp_path):
    """What a task author checks: the checks tell the near miss from the solution."""
    wrong = [task.id for task in load_suite(SUITE) if task.wrong_solution]
    assert {"terminal-echo", "clipboard-copy"} <= set(wrong)
    done = subprocess.run([VDESK, "eval", str(SUITE), "--ids", ",".join(wrong), "--agent", "wrong-solution",
                           "--parallel", "2", "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr  # not every task passed: none did
    assert done.stdout.startswith(f"wrong-solution: 0/{len(wrong)} passed")
    summary = SuiteSummary.model_validate_json((tmp_path / "out" / "results.json").read_text())
    verdicts = {o.task_id: (o.status, o.success, o.failed_checks) for o in summary.episodes}
    assert verdicts["terminal-echo"] == ("finished", False, ["~/hello.txt is 'hello vdesk', expected 'hello vdesk\\n'"])
    assert verdicts["clipboard-copy"][:2] == ("finished", False), verdicts
    assert verdicts["clipboard-copy"][2] == ["stdout is 'vdesk-42\\n', expected 'vdesk-42'"], verdicts


def test_report_from_the_command_line(suite_run):
    done = subprocess.run([VDESK, "report", str(suite_run)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and (suite_run / "report.html").is_file(), done.stderr

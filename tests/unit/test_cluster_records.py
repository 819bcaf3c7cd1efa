"""How a suite run over a cluster records its episodes' tries, without a cluster."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from rich.console import Console

from vdesk.errors import InvalidArgument
from vdesk.harness.agents import ScriptedAgent
from vdesk.cli.console import summary_table
from vdesk.cluster.placement import EPISODE_SLACK, ClusterPlacement, attempt_records, desktop_spec, episode_timeout, failed, move_aside
from vdesk.harness.env import setup_timeout
from vdesk.harness.record import AttemptRecord, Outcome, episode_folders
from vdesk.harness.runner import run_suite
from vdesk.harness.suite import SuiteSummary
from vdesk.harness.tasks import parse_task
from vdesk.cluster.actors import CALL_SLACK, UP_TIMEOUT, _on_the_node
from vdesk.cluster.scheduler import Attempt, EpisodeOutcome, _Run, _up_timeout

TASK = parse_task({"id": "probe", "instruction": "Do it.", "desktop": {"size": "640x480", "scale": 2},
                   "setup": [{"run": "true", "timeout": 5}, {"wait_window": "Terminal", "timeout": 7}],
                   "checks": [{"command": "true"}], "time_limit": 90})
LOST = Attempt("node-a" * 8, "10.0.0.2", "vdesk-aaaa", 4.2345, "screenshot on vdesk-aaaa: the desktop's actor "
               "or node died (ActorDiedError: The actor died unexpectedly)", lost=True)
KEPT = Attempt("node-b" * 8, "10.0.0.1", "vdesk-bbbb", 7.5)


def outcome(**fields: object) -> Outcome:
    data: dict[str, object] = {"task_id": "probe", "agent": "scripted", "status": "finished", "success": True,
                               "steps": 2, "elapsed_s": 3.0}
    return Outcome.model_validate({**data, **fields})


def test_a_local_outcome_says_nothing_of_attempts():
    written = json.loads(outcome().model_dump_json(exclude_none=True))
    assert "attempts" not in written and "retried" not in written and outcome().retried is None


def test_a_retried_outcome_names_the_lost_node_and_why_and_reads_back():
    records = attempt_records([LOST, KEPT], [".lost/probe/attempt-1"])
    retried = outcome(attempts=records)
    written = json.loads(retried.model_dump_json(exclude_none=True))
    assert written["retried"] is True
    first, last = written["attempts"]
    assert first == {"node": LOST.node_id, "address": "10.0.0.2", "desktop": "vdesk-aaaa", "seconds": 4.234,
                     "error": LOST.error, "lost": True, "moved_to": ".lost/probe/attempt-1"}
    assert last["node"] == KEPT.node_id and not last["lost"] and "error" not in last and "moved_to" not in last
    back = Outcome.model_validate_json(json.dumps(written))  # the computed field is ignored on the way in
    assert back == retried and back.retried


def test_one_try_on_a_cluster_is_not_a_retry():
    assert outcome(attempts=attempt_records([KEPT], [])).retried is False


def test_an_episode_without_a_result_fails_with_the_schedulers_reason():
    ended = EpisodeOutcome(0, TASK, error="timed out after 600 s", attempts=[KEPT])
    result = failed(TASK, "scripted", ended)
    assert result.status == "error" and not result.success and result.error == "timed out after 600 s"
    assert result.elapsed_s == 7.5
    assert failed(TASK, "scripted", EpisodeOutcome(0, TASK, error="no node")).elapsed_s == 0.0


def test_a_lost_try_is_moved_aside_and_is_no_longer_an_episode(tmp_path: Path):
    for task_id in ("probe", "other"):
        (tmp_path / task_id).mkdir()
        (tmp_path / task_id / "steps.jsonl").write_text("")
        (tmp_path / task_id / "task.json").write_text("{}")
    stale = tmp_path / ".lost" / "probe" / "attempt-1"
    stale.mkdir(parents=True)
    (stale / "old").write_text("from an earlier run into the same folder")
    assert move_aside(tmp_path, "probe", 1) == ".lost/probe/attempt-1"
    assert not (tmp_path / "probe").exists()
    assert sorted(p.name for p in stale.iterdir()) == ["steps.jsonl", "task.json"]
    assert [folder.name for folder in episode_folders(tmp_path)] == ["other"]
    assert move_aside(tmp_path, "probe", 2) is None  # nothing written by that try


def test_each_task_gets_its_own_desktop_spec_and_a_bound_on_its_tries():
    spec = desktop_spec(TASK, image="vdesk/desktop:test", environment={"MARK": "1"})
    assert (spec.size, spec.scale, spec.network, spec.image) == ((640, 480), 2.0, "none", "vdesk/desktop:test")
    assert spec.environment == {"MARK": "1"}
    assert setup_timeout(TASK) == setup_timeout(TASK.model_copy(update={"setup": []})) + 12
    assert episode_timeout([TASK]) == 90 + setup_timeout(TASK) + EPISODE_SLACK


def test_the_summary_table_says_which_node_an_episode_lost():
    summary = SuiteSummary(agent="scripted", parallel=2, episodes=[
        outcome(attempts=attempt_records([LOST, KEPT], [None])), outcome(task_id="other")])
    console = Console(record=True, width=200)
    console.print(summary_table(summary))
    text = console.export_text()
    assert "retried after losing its desktop on node 10.0.0.2" in text and text.count("retried") == 1


def test_per_node_and_parallel_must_be_at_least_one(tmp_path: Path):
    with pytest.raises(InvalidArgument, match="at least 1"):
        ClusterPlacement("127.0.0.1:6379", per_node=0)
    with pytest.raises(InvalidArgument, match="at least 1"):
        run_suite([TASK], ScriptedAgent, out=tmp_path, parallel=0)


def test_attempt_records_keep_the_order_of_the_tries():
    records = attempt_records([LOST, LOST, KEPT], [".lost/probe/attempt-1", None])
    assert [r.moved_to for r in records] == [".lost/probe/attempt-1", None, None]
    assert all(isinstance(r, AttemptRecord) for r in records) and [r.lost for r in records] == [True, True, False]


@pytest.mark.parametrize("left", [0.05, 0.3, 1.0, 15.0, 20.0, 89.0, 119.9])
def test_a_start_with_less_than_its_own_time_left_meets_the_items_deadline_first(left: float) -> None:
    # A start's waits (the node's own, then the call's) outlast the item's deadline, so a slow
    # start is the item timing out (once) and never a start that failed on its node (retried):
    # with the node's wait at 75 % of the time left, a loaded node ran a 20 s item twice.
    now = time.monotonic()
    run = _Run(0, Attempt("node-a" * 8, "10.0.0.2"), now, now + left)
    start = _up_timeout(run)
    assert _on_the_node(start) >= left - 0.01 and start >= left + CALL_SLACK - 0.01  # (its clock starts later)


def test_a_start_with_time_to_spare_has_its_own_bound() -> None:
    now = time.monotonic()
    assert _up_timeout(_Run(0, Attempt("node-a" * 8, "10.0.0.2"), now, now + 3600)) == UP_TIMEOUT

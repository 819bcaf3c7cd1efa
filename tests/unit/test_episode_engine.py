"""The episode engine decides what ends an episode and what it earns, for the loop and the
Gymnasium environment alike: played here with an executor that records what it was given
(pure logic; the loop and the environment run it on real desktops in tests/harness and
tests/protocols)."""

from __future__ import annotations

import threading
import time

from vdesk.actions import BaseAction, ExecuteResult, parse_batch
from vdesk.harness.episode import CheckResult
from vdesk.harness.episode import Episode, Limits, Status, reward, succeeded

WAIT = {"type": "wait", "inputs": {"time": 0}}


def actions(*specs: dict) -> list[BaseAction]:
    return parse_batch(list(specs))


class Recorder:
    """An executor: answers each action with the result queued for it (success by default)."""

    def __init__(self, *answers: ExecuteResult) -> None:
        self.answers, self.ran = list(answers), []

    def __call__(self, action: BaseAction) -> ExecuteResult:
        self.ran.append(action)
        return self.answers.pop(0) if self.answers else ExecuteResult()


def test_a_step_runs_in_order_and_stops_at_the_first_failure():
    run = Recorder(ExecuteResult(), ExecuteResult(status="failed", error_message="no"))
    engine = Episode(run, Limits(max_steps=5, time_limit=60))
    played = engine.play(actions(WAIT, WAIT, WAIT))
    assert len(run.ran) == 2 and [r.status for r in played.results] == ["success", "failed"]
    assert played.status is None and not played.terminated and not played.truncated
    assert engine.limits.steps == 1


def test_finished_and_fail_end_the_episode_and_fail_is_remembered():
    done = ExecuteResult(finished=True, finished_content="FAIL")
    engine = Episode(Recorder(ExecuteResult(), done), Limits(max_steps=5, time_limit=60))
    played = engine.play(actions(WAIT, {"type": "finished", "inputs": {"content": "FAIL"}}, WAIT))
    assert played.status is Status.FINISHED and played.terminated and played.failed and engine.failed
    assert len(played.results) == 2


def test_call_user_ends_the_step_with_its_question():
    engine = Episode(Recorder(ExecuteResult(call_user="which file?")), Limits(max_steps=5, time_limit=60))
    played = engine.play(actions({"type": "call_user", "inputs": {"content": "which file?"}}, WAIT))
    assert (played.status, played.request, played.terminated) == (Status.CALL_USER, "which file?", True)


def test_the_step_cap_truncates_after_the_step_that_reaches_it():
    engine = Episode(Recorder(), Limits(max_steps=2, time_limit=60))
    assert engine.play(actions(WAIT)).status is None
    played = engine.play(actions(WAIT))
    assert played.status is Status.MAX_STEPS and played.truncated and not played.terminated
    finishing = Episode(Recorder(ExecuteResult(finished=True)), Limits(max_steps=1, time_limit=60))
    assert finishing.play(actions({"type": "finished", "inputs": {}})).status is Status.FINISHED  # ending wins


def test_time_up_or_a_cancel_stops_before_the_next_action():
    late = Episode(run := Recorder(), Limits(max_steps=5, time_limit=10, started=time.monotonic() - 11))
    played = late.play(actions(WAIT))
    assert played.status is Status.TIMEOUT and played.truncated and run.ran == []
    cancel = threading.Event()
    cancel.set()
    engine = Episode(run := Recorder(), Limits(max_steps=5, time_limit=60))
    assert engine.play(actions(WAIT), cancel).status is Status.CANCELLED and run.ran == []
    assert engine.interrupted(cancel) is Status.CANCELLED and engine.interrupted() is None


def test_a_step_that_could_not_be_read_counts():
    engine = Episode(Recorder(), Limits(max_steps=1, time_limit=60))
    played = engine.failed_step(ExecuteResult(status="failed", error_message="not JSON"))
    assert played.status is Status.MAX_STEPS and engine.limits.steps == 1


def test_the_reward_is_the_lowest_score_and_success_needs_every_check():
    passed, failed = CheckResult("file", True, ""), CheckResult("file", False, "")
    half = CheckResult("osworld", False, "", score=0.5)
    assert reward([passed, half]) == 0.5 and not succeeded([passed, half])
    assert reward([passed]) == 1.0 and succeeded([passed])
    assert reward([passed, failed]) == 0.0 and not succeeded([passed, failed])
    assert reward([]) == 0.0 and not succeeded([])  # nothing judged: no success

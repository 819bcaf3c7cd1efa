"""The episode engine decides what ends an episode and what it earns, for the loop and the
Gymnasium environment alike: played here with an executor that records what it was given
(pure logic; the loop and the environment run it on real desktops in tests/harness and
tests/protocols)."""

from __future__ import annotations

import threading
import time

from vdesk.actions import BaseAction, ExecuteResult, parse_batch
from vdesk.harness.episode import CheckResult
from vdesk.harness.episode import Episode, EpisodeLimits, Status, each_action, reward, succeeded, through_ending

WAIT = {"type": "wait", "inputs": {"time": 0}}


def actions(*specs: dict) -> list[BaseAction]:
    return parse_batch(list(specs))


class Recorder:
    """An executor: runs a batch as the desktop's door does, answering each action with the
    result queued for it (success by default) and stopping after the first that fails."""

    def __init__(self, *answers: ExecuteResult) -> None:
        self.answers, self.ran, self.batches = list(answers), [], 0

    def __call__(self, batch, stop) -> list[ExecuteResult]:  # type: ignore[no-untyped-def]
        self.batches += 1
        results = []
        for action in batch:
            if stop.is_set():
                break
            self.ran.append(action)
            results.append(result := self.answers.pop(0) if self.answers else ExecuteResult())
            if result.status != "success":
                break
        return results


def test_a_step_runs_in_order_and_stops_at_the_first_failure():
    run = Recorder(ExecuteResult(), ExecuteResult(status="failed", error_message="no"))
    engine = Episode(run, EpisodeLimits(max_steps=5, time_limit=60))
    played = engine.play(actions(WAIT, WAIT, WAIT))
    assert len(run.ran) == 2 and [r.status for r in played.results] == ["success", "failed"]
    assert run.batches == 1  # the step went to the desktop as one batch
    assert played.status is None and not played.terminated and not played.truncated
    assert engine.limits.steps == 1


def test_finished_and_fail_end_the_episode_and_fail_is_remembered():
    done = ExecuteResult(finished=True, finished_content="FAIL")
    engine = Episode(run := Recorder(ExecuteResult(), done), EpisodeLimits(max_steps=5, time_limit=60))
    played = engine.play(actions(WAIT, {"type": "finished", "inputs": {"content": "FAIL"}}, WAIT))
    assert played.status is Status.FINISHED and played.terminated and played.failed and engine.failed
    assert len(played.results) == 2 and len(run.ran) == 2  # what follows finished is never sent


def test_call_user_ends_the_step_with_its_question():
    engine = Episode(Recorder(ExecuteResult(call_user="which file?")), EpisodeLimits(max_steps=5, time_limit=60))
    played = engine.play(actions({"type": "call_user", "inputs": {"content": "which file?"}}, WAIT))
    assert (played.status, played.request, played.terminated) == (Status.CALL_USER, "which file?", True)


def test_the_step_cap_truncates_after_the_step_that_reaches_it():
    engine = Episode(Recorder(), EpisodeLimits(max_steps=2, time_limit=60))
    assert engine.play(actions(WAIT)).status is None
    played = engine.play(actions(WAIT))
    assert played.status is Status.MAX_STEPS and played.truncated and not played.terminated
    finishing = Episode(Recorder(ExecuteResult(finished=True)), EpisodeLimits(max_steps=1, time_limit=60))
    assert finishing.play(actions({"type": "finished", "inputs": {}})).status is Status.FINISHED  # ending wins


def test_a_cancel_between_two_bursts_ends_the_step_cancelled_without_a_failure():
    cancel = threading.Event()

    class CancelAfterOne(Recorder):
        def __call__(self, batch, stop):  # type: ignore[no-untyped-def]
            cancel.set()  # the first burst ran, then the cancel came
            return [ExecuteResult()]

    played = Episode(CancelAfterOne(), EpisodeLimits(max_steps=5, time_limit=60)).play(actions(WAIT, WAIT, WAIT), cancel)
    assert played.status is Status.CANCELLED and [r.status for r in played.results] == ["success"]


def test_time_up_or_a_cancel_stops_before_the_next_action():
    late = Episode(run := Recorder(), EpisodeLimits(max_steps=5, time_limit=10, started=time.monotonic() - 11))
    played = late.play(actions(WAIT))
    assert played.status is Status.TIMEOUT and played.truncated and run.ran == []
    cancel = threading.Event()
    cancel.set()
    engine = Episode(run := Recorder(), EpisodeLimits(max_steps=5, time_limit=60))
    assert engine.play(actions(WAIT), cancel).status is Status.CANCELLED and run.ran == []
    assert engine.interrupted(cancel) is Status.CANCELLED and engine.interrupted() is None


def test_a_step_that_could_not_be_read_counts():
    engine = Episode(Recorder(), EpisodeLimits(max_steps=1, time_limit=60))
    played = engine.failed_step(ExecuteResult(status="failed", error_message="not JSON"))
    assert played.status is Status.MAX_STEPS and engine.limits.steps == 1


def test_the_reward_is_the_lowest_score_and_success_needs_every_check():
    passed, failed = CheckResult("file", True, ""), CheckResult("file", False, "")
    half = CheckResult("osworld", False, "", score=0.5)
    assert reward([passed, half]) == 0.5 and not succeeded([passed, half])
    assert reward([passed]) == 1.0 and succeeded([passed])
    assert reward([passed, failed]) == 0.0 and not succeeded([passed, failed])
    assert reward([]) == 0.0 and not succeeded([])  # nothing judged: no success


def test_a_batch_result_is_split_into_a_result_per_action_that_ran():
    batch = actions(WAIT, WAIT, {"type": "finished", "inputs": {"content": "done"}})
    whole = ExecuteResult(executed=3, completed_ms=[300.0, 300.0, 310.0], finished=True, finished_content="done",
                          elapsed_ms=320.0)
    each = each_action(whole, batch, stopped=False)
    assert [r.elapsed_ms for r in each] == [300.0, 0.0, 10.0]  # the first two were chained into one burst
    assert [r.finished for r in each] == [False, False, True] and each[2].finished_content == "done"
    failed = ExecuteResult(status="failed", error_message="X went away", executed=1, completed_ms=[5.0], elapsed_ms=9.0)
    assert [(r.status, r.error_message) for r in each_action(failed, batch, stopped=False)] == [
        ("success", None), ("failed", "X went away")]
    cancelled = failed.model_copy(update={"error_message": "cancelled after 1 of 3 actions"})
    assert [r.status for r in each_action(cancelled, batch, stopped=True)] == ["success"]
    invalid = ExecuteResult(status="failed", error_message="action 2: no such key")  # nothing ran
    assert [r.error_message for r in each_action(invalid, batch, stopped=False)] == ["action 2: no such key"]


def test_a_step_is_cut_after_its_first_ending_action():
    step = actions(WAIT, {"type": "call_user", "inputs": {"content": "?"}}, WAIT, {"type": "finished"})
    assert [a.type.value for a in through_ending(step)] == ["wait", "call_user"]
    assert through_ending(actions(WAIT, WAIT)) == actions(WAIT, WAIT) and through_ending([]) == []

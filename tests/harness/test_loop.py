"""The episode loop on real desktops: each way an episode ends, and that its desktop goes away."""

from __future__ import annotations

import threading

import docker
import pytest

from tests.harness.conftest import make_task
from vdesk.desktop import Desktop
from vdesk.harness.agents import Agent, AgentReply, ScriptedAgent
from vdesk.harness.env import DesktopEnv
from vdesk.harness.episode import Status
from vdesk.harness.loop import run_episode
from vdesk.harness.record import load_run

pytestmark = [pytest.mark.desktop, pytest.mark.usefixtures("no_desktop_left")]
WRITE_OK = [{"type": "type", "inputs": {"content": "echo ok > ~/ok.txt\n"}}]


def test_a_finished_episode_is_judged_and_recorded(tmp_path):
    result = run_episode(ScriptedAgent([WRITE_OK, [{"type": "finished", "inputs": {"content": "done"}}]]),
                         make_task(), out=tmp_path / "run")
    assert result.status is Status.FINISHED and result.success
    run = load_run(tmp_path / "run")
    assert [s.step for s in run.steps] == [1, 2]
    assert run.steps[0].actions[0].inputs.content == "echo ok > ~/ok.txt\n"
    assert run.steps[0].results[0].status == "success" and run.steps[0].execute_ms > 0
    assert all((tmp_path / "run" / s.frame).is_file() for s in run.steps)
    assert run.outcome is not None and run.outcome.final_hash and (tmp_path / "run" / "final.png").is_file()
    assert run.info.image_size == (640, 480) and run.info.agent == "scripted"


def test_an_empty_reply_ends_the_episode_and_checks_still_decide(tmp_path):
    result = run_episode(ScriptedAgent([WRITE_OK, []]), make_task())
    assert result.status is Status.NO_ACTIONS and result.success and result.outcome.steps == 1


def test_a_script_played_to_its_end_has_finished(tmp_path):
    result = run_episode(ScriptedAgent([WRITE_OK]), make_task(), out=tmp_path / "run")
    assert result.status is Status.FINISHED and result.success and result.outcome.steps == 2
    last = load_run(tmp_path / "run").steps[-1]
    assert [(a.type.value, a.inputs.content) for a in last.actions] == [("finished", "end of the script")]


def test_the_step_cap_ends_the_episode_with_its_own_status():
    waits = [[{"type": "wait", "inputs": {"time": 0}}]] * 10
    result = run_episode(ScriptedAgent(waits), make_task(), max_steps=3)
    assert result.status is Status.MAX_STEPS and result.outcome.steps == 3
    assert not result.success and "cannot be read" in result.outcome.checks[0].detail


def test_the_time_limit_ends_the_episode():
    slow = [[{"type": "wait", "inputs": {"time": 0.4}}]] * 10
    result = run_episode(ScriptedAgent(slow), make_task(), timeout=1.0)
    assert result.status is Status.TIMEOUT and 1 <= result.outcome.steps <= 3


def test_a_cancel_stops_the_episode_between_two_actions(tmp_path):
    cancel = threading.Event()
    batch = [{"type": "wait", "inputs": {"time": 0.3}}] * 20

    class CancelledSoon(ScriptedAgent):
        def act(self, observation):  # the setup is over: cancel while the batch runs
            threading.Timer(0.45, cancel.set).start()
            return super().act(observation)

    result = run_episode(CancelledSoon([batch]), make_task(), cancel=cancel, out=tmp_path / "run")
    assert result.status is Status.CANCELLED and not result.success
    assert result.outcome.checks == []
    (step,) = load_run(result.run_dir).steps
    # Some actions ran, each of them whole, and the rest never started: it stopped between two.
    assert 1 <= len(step.results) < len(batch)
    assert all(r.status == "success" and r.elapsed_ms >= 300 for r in step.results), step.results


def test_call_user_pauses_with_the_desktop_up_and_resumes_with_the_answer():
    class AskingAgent(Agent):
        name = "asking"
        seen: list[str | None] = []

        def act(self, observation):
            self.seen.append(observation.user_reply)
            if observation.user_reply is None:
                return AgentReply([{"type": "call_user", "inputs": {"content": "Which file?"}}])  # type: ignore[list-item]
            return AgentReply([{"type": "type", "inputs": {"content": f"echo ok > ~/{observation.user_reply}\n"}},  # type: ignore[list-item]
                               {"type": "finished"}])

    agent = AskingAgent()
    result = run_episode(agent, make_task())
    assert result.status is Status.CALL_USER and result.request == "Which file?" and result.paused is not None
    desktop = result.paused.env.desktop
    assert desktop.call(Desktop.is_alive)  # kept up for the person
    resumed = result.paused.resume("ok.txt")
    assert resumed.status is Status.FINISHED and resumed.success
    assert agent.seen == [None, "ok.txt"]
    assert not desktop.call(Desktop.is_alive)


def test_a_failed_setup_is_an_error_naming_the_step_and_releases_the_desktop(tmp_path):
    task = make_task(setup=[{"run": "echo broken >&2; exit 3"}])
    result = run_episode(ScriptedAgent([WRITE_OK]), task, out=tmp_path / "run")
    assert result.status is Status.ERROR
    assert "setup step 0 (run: 'echo broken >&2; exit 3') failed: sh exited with 3: broken" in result.outcome.error
    assert load_run(tmp_path / "run").outcome.status == "error"


def test_an_action_that_fails_is_reported_to_the_agent_and_the_episode_goes_on():
    class Probing(Agent):
        name = "probing"
        results = []

        def act(self, observation):
            self.results.append(observation.results)
            if observation.step == 1:
                return AgentReply([{"type": "click", "inputs": {"point": [5000, 5000]}}])  # type: ignore[list-item]
            return AgentReply([])

    agent = Probing()
    result = run_episode(agent, make_task())
    assert result.status is Status.NO_ACTIONS
    assert agent.results[1][0].status == "failed" and "outside" in agent.results[1][0].error_message


def test_the_loops_finer_steps_on_the_gymnasium_environment():
    with DesktopEnv() as env:
        observation = env.open(make_task())
        assert observation.step == 1 and observation.instruction == "Write ok into ~/ok.txt."
        assert observation.frame.size == (640, 480) and observation.screen.screen_width == 640
        results = env.execute(WRITE_OK)  # one batch
        observation = env.observe(results)
        assert observation.step == 2 and observation.results[0].status == "success"
        assert [check.passed for check in env.evaluate()] == [True]
        name = env.desktop.name
    assert name not in {c.name for c in docker.from_env().containers.list(all=True)}

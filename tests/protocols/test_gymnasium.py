"""The Gymnasium environment ``vdesk/Desktop-v0`` on real desktops: the API checker, a task
solved through ``step`` and judged by its checks, the limits, and a vector of 4 desktops."""

from __future__ import annotations

import gc
import json
import warnings

import docker
import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from tests.harness.conftest import TERMINAL, make_task, vdesk_containers
from vdesk.errors import InvalidArgument
from vdesk.harness.env import DesktopEnv  # importing it registers vdesk/Desktop-v0

TYPE_OK = json.dumps([{"type": "type", "inputs": {"content": "echo ok > ~/ok.txt\n"}},
                      {"type": "finished", "inputs": {"content": "DONE"}}])
SMALL = {"id": "small", "instruction": "Look.", "desktop": {"size": "320x240"},
         "checks": [{"command": "true"}], "max_steps": 3}


def names(env: gymnasium.Env) -> str:
    return env.unwrapped.desktop.name


def test_the_gymnasium_checker_passes_on_a_real_desktop():
    env = gymnasium.make("vdesk/Desktop-v0", task=SMALL, render_mode="rgb_array")
    before = vdesk_containers(docker.from_env())
    gc.collect()  # an earlier test's garbage may warn when freed (an unclosed loop did): not in the block below
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    env.close()
    assert vdesk_containers(docker.from_env()) - before == set()
    # Nothing the checker warns of is ours (it warns of the nondeterminism we declare).
    ours = [str(w.message) for w in caught if "determin" not in str(w.message)]
    assert ours == [], ours


def test_a_task_solved_through_step_is_rewarded_and_terminates():
    task = make_task(desktop={"size": "640x480"})
    with gymnasium.make("vdesk/Desktop-v0", task=task, render_mode="rgb_array") as env:
        observation, info = env.reset(seed=1)
        assert observation["screenshot"].shape == (480, 640, 3) and observation["screenshot"].dtype == np.uint8
        assert observation in env.observation_space
        assert info["step"] == 1 and info["instruction"] == "Write ok into ~/ok.txt."
        observation, reward, terminated, truncated, info = env.step(TYPE_OK)
        assert (reward, terminated, truncated) == (1.0, True, False)
        assert [check["passed"] for check in info["checks"]] == [True]
        assert info["results"][-1]["finished_content"] == "DONE"
        frame = env.render()
        assert frame.shape == (480, 640, 3) and frame.any()
        name = names(env)
    assert name not in vdesk_containers(docker.from_env())


def test_fail_terminates_unrewarded_and_a_bad_action_runs_nothing_but_counts():
    with gymnasium.make("vdesk/Desktop-v0", task=make_task(max_steps=2)) as env:
        env.reset()
        _, reward, terminated, truncated, info = env.step("not json")
        assert (reward, terminated, truncated) == (0.0, False, False)
        assert info["results"][0]["status"] == "failed" and "not valid JSON" in info["results"][0]["error"]
        _, reward, terminated, truncated, info = env.step('{"type": "finished", "inputs": {"content": "FAIL"}}')
        assert (reward, terminated, truncated) == (0.0, True, False)
        assert [check["passed"] for check in info["checks"]] == [False]  # ~/ok.txt was never written


def test_the_step_limit_truncates_and_the_task_in_reset_options_wins():
    with gymnasium.make("vdesk/Desktop-v0", max_steps=2) as env:
        observation, info = env.reset(options={"task": make_task(desktop={"size": "640x480"})})
        assert info["instruction"] == "Write ok into ~/ok.txt."
        assert observation["screenshot"].shape == (800, 1280, 3)  # the env's image size; the screen is scaled
        wait = '{"type": "wait", "inputs": {"time": 0.1}}'
        assert env.step(wait)[2:4] == (False, False)
        _, reward, terminated, truncated, info = env.step(wait)
        assert (reward, terminated, truncated) == (0.0, False, True) and "checks" in info


def test_pyautogui_actions_through_the_action_format():
    task = make_task(desktop={"size": "640x480"})
    with gymnasium.make("vdesk/Desktop-v0", task=task, action_format="pyautogui") as env:
        env.reset()
        env.step("pyautogui.write('echo ok > ~/ok.txt'); pyautogui.press('enter')")
        _, reward, terminated, _, _ = env.step("DONE")
        assert (reward, terminated) == (1.0, True)


def test_bad_settings_are_named():
    with pytest.raises(InvalidArgument, match="render_mode"):
        DesktopEnv(render_mode="ansi")
    with pytest.raises(InvalidArgument, match="observation .smell."):
        gymnasium.make("vdesk/Desktop-v0", observation="smell")
    with pytest.raises(InvalidArgument, match="unknown format"):
        gymnasium.make("vdesk/Desktop-v0", action_format="morse")


def test_an_async_vector_of_four_desktops_steps():
    task = dict(SMALL, max_steps=10)
    # spawn: a forked worker would inherit this process's VNC reactor as running, without its
    # thread. A spawned one imports nothing of ours: "module:id" imports the module that registers.
    make = lambda: gymnasium.make("vdesk.harness.env:vdesk/Desktop-v0", task=task)  # noqa: E731
    envs = gymnasium.vector.AsyncVectorEnv([make] * 4, context="spawn")
    try:
        observations, infos = envs.reset(seed=0)
        assert observations["screenshot"].shape == (4, 240, 320, 3)
        click = json.dumps({"type": "click", "inputs": {"point": {"raw": {"x": 10, "y": 10}}}})
        for _ in range(2):
            observations, rewards, terminated, truncated, infos = envs.step((click,) * 4)
            assert observations["screenshot"].shape == (4, 240, 320, 3)
            assert list(terminated) == [False] * 4 and list(truncated) == [False] * 4
        done = json.dumps({"type": "finished"})
        _, rewards, terminated, _, _ = envs.step((done, click, done, click))
        assert list(terminated) == [True, False, True, False]
        assert list(rewards) == [1.0, 0.0, 1.0, 0.0]  # the check `true` passes when judged
    finally:
        envs.close()


def test_reset_from_a_checkpoint_puts_the_desktop_back_to_it():
    """The RL reset: what an episode changed is gone, the checkpoint's state is back, on the
    same desktop (restored in place); an environment made with the checkpoint forks it."""
    from vdesk import forks

    client = docker.from_env()
    before = vdesk_containers(client)
    task = make_task(setup=[{"write": "~/from-setup", "content": "set up\n"},
                            {"start": TERMINAL}, {"wait_window": "Terminal"}])
    with gymnasium.make("vdesk/Desktop-v0", task=task) as env:
        env.reset()
        start = env.unwrapped.save_checkpoint()
        try:
            name = names(env)
            for _ in range(2):
                *_, info = env.step(TYPE_OK)  # the episode writes ~/ok.txt and ends rewarded
                assert [check["passed"] for check in info["checks"]] == [True]
                observation, info = env.reset(options={"checkpoint": start})
                assert names(env) == name and info["fork_s"] > 0 and observation in env.observation_space
                desktop = env.unwrapped.desktop
                assert desktop.call(read, "ok.txt") is None  # the episode's change is gone
                assert desktop.call(read, "from-setup") == b"set up\n"  # the checkpoint's state is back
            with gymnasium.make("vdesk/Desktop-v0", task=task, checkpoint=start) as forked:
                _, info = forked.reset()
                assert names(forked) != name and info["fork_s"] > 0
                assert forked.unwrapped.desktop.call(read, "from-setup") == b"set up\n"
                *_, info = forked.step(TYPE_OK)
                assert [check["passed"] for check in info["checks"]] == [True]
                assert env.unwrapped.desktop.call(read, "ok.txt") is None  # the fork's change is its own
        finally:
            forks.remove(client, start.name)
    assert vdesk_containers(client) - before == set()


def read(desktop, name: str) -> bytes | None:
    """A file of the desktop's home, or None when there is none."""
    done = desktop.programs.run(["sh", "-c", 'cat ~/"$1"', "sh", name], wait=True)
    return done.stdout.encode() if done.returncode == 0 else None

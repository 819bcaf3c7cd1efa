"""Helpers for the harness tests: small tasks, and a check that no desktop is left behind."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest

from vdesk.harness.tasks import Task, parse_task

SUITE = Path(__file__).resolve().parents[2] / "examples" / "suite"
TERMINAL = "xterm -geometry 80x24+0+0 -title Terminal -e env 'PS1=$ ' bash --norc --noprofile"


def make_task(**fields: Any) -> Task:
    """A small terminal task; ``fields`` replace its parts."""
    data: dict[str, Any] = {
        "id": "probe", "instruction": "Write ok into ~/ok.txt.", "desktop": {"size": "640x480"},
        "setup": [{"start": TERMINAL}, {"wait_window": "Terminal"}],
        "checks": [{"file": "~/ok.txt", "equals": "ok\n"}], "max_steps": 5, "time_limit": 60,
    }
    data.update(fields)
    return parse_task(data)


def vdesk_containers(client: docker.DockerClient, pid: int | None = None) -> set[str]:
    """Names of the vdesk desktops started by process ``pid`` (default: this one). One list
    call, so a desktop being removed meanwhile is no error; other processes' are ignored."""
    listed = client.api.containers(all=True, filters={"label": "vdesk=desktop"})
    owner_suffix = f":{pid or os.getpid()}"
    return {name.lstrip("/") for item in listed if item["Labels"].get("vdesk.owner", "").endswith(owner_suffix)
            for name in item["Names"]}


@pytest.fixture
def no_desktop_left() -> Iterator[None]:
    """Fails the test if a desktop started during it still exists afterwards."""
    client = docker.from_env()
    before = vdesk_containers(client)
    yield
    assert_no_desktop_left(client, before)


def assert_no_desktop_left(client: docker.DockerClient, before: set[str], within: float = 10.0,
                           pid: int | None = None) -> None:
    """Every desktop not in ``before`` is gone within ``within`` seconds (removal by the engine
    can still be in progress right after ``down()``)."""
    deadline = time.monotonic() + within
    while (left := vdesk_containers(client, pid) - before) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"desktops left behind: {sorted(left)}"


@pytest.fixture(scope="session")
def suite_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example suite, run once per test session by the scripted agent, 4 at a time."""
    from vdesk.harness.agents import ScriptedAgent
    from vdesk.harness.runner import run_suite
    from vdesk.harness.tasks import load_suite

    out = tmp_path_factory.mktemp("eval") / "run"
    client = docker.from_env()
    before = vdesk_containers(client)
    run_suite(load_suite(SUITE), ScriptedAgent, out=out, parallel=4)
    assert_no_desktop_left(client, before)
    return out

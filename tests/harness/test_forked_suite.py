"""A suite whose task is set up once and whose episodes start from forks of that desktop
(``run_suite(fork_after_setup=True)``, ``vdesk eval --fork-after-setup``), on real desktops:
each episode sees what the setup made (a file, a program still running), keeps its own changes,
and leaves no desktop and no checkpoint behind; the times are in the results and the report."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import docker
import pytest

from tests.harness.conftest import TERMINAL, assert_no_desktop_left, make_task, vdesk_containers
from vdesk import forks
from vdesk.harness.agents import ScriptedAgent
from vdesk.harness.record import OUTCOME_FILE, Outcome, episode_folders, load_run
from vdesk.harness.report import write_report
from vdesk.harness.runner import run_suite
from vdesk.harness.suite import SuiteSummary
from vdesk.harness.tasks import Task

pytestmark = pytest.mark.desktop
VDESK = str(Path(sys.executable).parent / "vdesk")
REPEATS = 3
PRUNED_WITH = "PRUNED_WITH"  # a desktop variable that lets pruning() find a test's own checkpoints
TICKER = "vdesk-ticker"  # the setup's program, found by its name in each fork


def forked_task(**fields: object) -> Task:
    """A terminal task whose setup leaves a file of random bytes and a program running; the
    agent appends one line to ~/seen, which holds exactly that line only in a desktop of its own."""
    parts: dict[str, object] = dict(
        id="forked",
        setup=[{"run": ["sh", "-c", "od -An -N8 -tx8 /dev/urandom > ~/token"]},
               {"start": ["sh", "-c", "while :; do date +%s%N > /tmp/ticks; sleep 0.2; done", TICKER]},
               {"start": TERMINAL}, {"wait_window": "Terminal"}],
        checks=[{"file": "~/seen", "equals": "mine\n"},
                {"file": "~/token", "matches": "^ *[0-9a-f]{16}\n$"},
                {"command": ["pgrep", "-f", TICKER]}],
        solution=[[{"type": "type", "inputs": {"content": "echo mine >> ~/seen\n"}}]])
    return make_task(**{**parts, **fields})


@contextmanager
def desktops_created(client: docker.DockerClient) -> Iterator[list[dict[str, str]]]:
    """The labels of the desktops this process creates meanwhile, from Docker's event stream
    (read live: the engine keeps only its last few hundred events, and others run desktops too)."""
    created: list[dict[str, str]] = []
    stream = client.events(decode=True, filters={"type": "container", "event": "create", "label": "vdesk=desktop"})

    def read() -> None:
        try:
            for event in stream:
                labels = event["Actor"]["Attributes"]
                if labels.get("vdesk.owner", "").endswith(f":{os.getpid()}"):
                    created.append(labels)
        except Exception:  # the stream closed
            pass

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        yield created
    finally:
        time.sleep(0.5)  # events of the last moments still on their way
        stream.close()
        reader.join(timeout=5)


def test_episodes_start_from_forks_of_one_setup_and_keep_their_changes(tmp_path: Path) -> None:
    client = docker.from_env()
    before, out = vdesk_containers(client), tmp_path / "run"
    with desktops_created(client) as created:
        summary = run_suite([forked_task()], ScriptedAgent, out=out, parallel=2, repeats=REPEATS, fork_after_setup=True)

    failed = {o.task_id: o.error or [c.detail for c in o.checks if not c.passed] for o in summary.episodes if not o.success}
    assert not failed  # each saw the setup's file and program, and its own ~/seen alone
    assert [o.task_id for o in summary.episodes] == [f"forked.r{n}" for n in range(1, REPEATS + 1)]
    assert summary.repeats == REPEATS and summary.fork_after_setup
    checkpoint = {o.forked_from for o in summary.episodes}
    assert len(checkpoint) == 1 and None not in checkpoint
    for outcome in summary.episodes:
        assert outcome.repeat_of == "forked"
        assert outcome.setup_s and outcome.setup_s > 0 and outcome.checkpoint_s and outcome.checkpoint_s > 0
        assert outcome.fork_s and outcome.fork_s > 0
    assert len({o.setup_s for o in summary.episodes}) == 1  # one setup, shared

    # One desktop was set up; every other desktop was a fork of its checkpoint.
    assert len(created) == 1 + REPEATS
    assert sorted(labels.get("vdesk.checkpoint", "") for labels in created) == ["", *checkpoint, *checkpoint, *checkpoint]

    assert_no_desktop_left(client, before)
    assert checkpoint.isdisjoint(c.name for c in forks.list_checkpoints(client))

    for folder in episode_folders(out):  # the times are in each outcome.json, and the report says them
        written = Outcome.model_validate_json((folder / OUTCOME_FILE).read_text())
        assert written.fork_s == next(o.fork_s for o in summary.episodes if o.task_id == folder.name)
        assert load_run(folder).task.id == folder.name
    assert "started from a fork of" in write_report(out).read_text()


def test_a_setup_that_fails_fails_each_episode_once_and_leaves_nothing(tmp_path: Path) -> None:
    client = docker.from_env()
    before, task = vdesk_containers(client), forked_task(setup=[{"run": ["false"]}])
    with desktops_created(client) as created:
        summary = run_suite([task], ScriptedAgent, out=tmp_path / "run", parallel=2, repeats=2, fork_after_setup=True)
    assert [o.status for o in summary.episodes] == ["error", "error"]
    assert all("setup failed" in (o.error or "") and "setup step 0" in (o.error or "") for o in summary.episodes)
    assert len(created) == 1  # tried once, not once per episode
    assert_no_desktop_left(client, before)


def test_eval_fork_after_setup_from_the_command_line(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "forked.json").write_text(forked_task().model_dump_json(exclude_none=True))
    out = tmp_path / "run"
    done = subprocess.run([VDESK, "eval", str(suite), "--repeats", "2", "--fork-after-setup", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SETUP" in done.stdout and "FORK" in done.stdout and "forked.r2" in done.stdout
    summary = SuiteSummary.model_validate_json((out / "results.json").read_text())
    assert summary.success_rate == 1.0 and all(o.fork_s for o in summary.episodes)


@contextmanager
def pruning(client: docker.DockerClient, run: str) -> Iterator[list[str]]:
    """`vdesk prune`'s own decision, made over and over meanwhile, for the checkpoints of desktops
    whose ``PRUNED_WITH`` variable is ``run`` (only those: other tests' checkpoints are theirs to
    prune; a checkpoint keeps its desktop's variables but vdesk's own); yields the names it removed."""
    removed: list[str] = []
    stop = threading.Event()

    def prune() -> None:
        while not stop.wait(0.05):
            mine = [c.name for c in forks.list_checkpoints(client) if c.environment.get(PRUNED_WITH) == run]
            if mine:
                removed.extend(forks.prune(client, only=mine))

    pruner = threading.Thread(target=prune, daemon=True)
    pruner.start()
    try:
        yield removed
    finally:
        stop.set()
        pruner.join(timeout=30)


def test_a_prune_meanwhile_leaves_the_checkpoint_the_run_holds(tmp_path: Path) -> None:
    # One episode at a time: between two forks, and between the setup desktop's end and the first
    # fork, no desktop uses the checkpoint, and only the run's hold keeps `vdesk prune` off it.
    client, run = docker.from_env(), secrets.token_hex(4)
    with pruning(client, run) as removed:
        summary = run_suite([forked_task()], ScriptedAgent, out=tmp_path / "run", parallel=1, repeats=REPEATS,
                            fork_after_setup=True, environment={PRUNED_WITH: run})
    failed = {o.task_id: o.error or [c.detail for c in o.checks if not c.passed] for o in summary.episodes if not o.success}
    assert not failed and len(summary.episodes) == REPEATS
    (checkpoint,) = {o.forked_from for o in summary.episodes}
    assert checkpoint not in removed  # the run removed it at its end, not the pruner
    assert checkpoint not in {c.name for c in forks.list_checkpoints(client)}


def test_a_hold_that_fails_removes_the_checkpoint_it_would_have_held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The checkpoint exists once saved; were it left unheld and unowned, only a later
    # `vdesk prune` would remove it.
    client, run = docker.from_env(), secrets.token_hex(4)
    before, tried = vdesk_containers(client), []

    def failing_hold(engine: docker.DockerClient, name: str) -> forks.Hold:
        tried.append(name)
        raise PermissionError(13, "Permission denied", f"{name}/held")

    monkeypatch.setattr(forks, "hold", failing_hold)
    summary = run_suite([forked_task()], ScriptedAgent, out=tmp_path / "run", parallel=2, repeats=2,
                        fork_after_setup=True, environment={PRUNED_WITH: run})
    assert [o.status for o in summary.episodes] == ["error", "error"]
    assert all("setup failed: PermissionError" in (o.error or "") for o in summary.episodes)
    assert len(tried) == 1  # the setup ran and was checkpointed once
    assert tried[0] not in {c.name for c in forks.list_checkpoints(client)}
    assert not [c for c in forks.list_checkpoints(client) if c.environment.get(PRUNED_WITH) == run]
    assert_no_desktop_left(client, before)

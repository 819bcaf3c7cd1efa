"""The pure parts of forks after setup: repeated episodes' ids, and one setup shared by a task's
episodes (run once whoever asks first, its checkpoint removed after the last)."""

from __future__ import annotations

import threading
from datetime import datetime, timezone

import pytest

from tests.harness.conftest import make_task
from vdesk.errors import InvalidArgument, SetupError
from vdesk.forks import Checkpoint
from vdesk.harness.forked import SetUp, SharedSetups, repeated


def checkpoint(name: str) -> Checkpoint:
    return Checkpoint(name=name, source="d", created=datetime.now(timezone.utc), size=1, image="sha256:x",
                      image_name="vdesk/desktop", screen=(640, 480, 1.0), network="none", limits={}, environment={})


def test_repeats_get_ids_of_their_own_and_know_their_task() -> None:
    tasks = [make_task(id="a"), make_task(id="b")]
    assert repeated(tasks, 1) == (tasks, {"a": "a", "b": "b"})
    episodes, origin = repeated(tasks, 2)
    assert [e.id for e in episodes] == ["a.r1", "a.r2", "b.r1", "b.r2"]
    assert origin == {"a.r1": "a", "a.r2": "a", "b.r1": "b", "b.r2": "b"}
    assert episodes[0].base_dir == tasks[0].base_dir and episodes[0].setup == tasks[0].setup
    with pytest.raises(InvalidArgument, match="task a.r1 has the name of another task's repeat"):
        repeated([make_task(id="a"), make_task(id="a.r1")], 2)
    for bad in (0, 1001, True, 1.5):
        with pytest.raises(InvalidArgument, match="repeats must be"):
            repeated(tasks, bad)  # type: ignore[arg-type]


def test_one_setup_per_task_whoever_asks_and_its_checkpoint_removed_after_the_last() -> None:
    episodes, origin = repeated([make_task(id="a"), make_task(id="b")], 3)
    made: list[str] = []
    removed: list[str] = []
    gate = threading.Event()

    def make(episode):  # type: ignore[no-untyped-def]
        gate.wait(5)  # every episode of the task asks while the first one sets up
        made.append(origin[episode.id])
        return SetUp(checkpoint(f"cp-{origin[episode.id]}"), 1.0, 0.5)

    setups = SharedSetups(origin, make, lambda c: removed.append(c.name))
    got: list[SetUp] = []
    threads = [threading.Thread(target=lambda e=e: got.append(setups.get(e))) for e in episodes[:3]]
    for thread in threads:
        thread.start()
    gate.set()
    for thread in threads:
        thread.join(5)
    assert made == ["a"] and {s.checkpoint.name for s in got} == {"cp-a"} and len(got) == 3
    for episode in episodes[:2]:
        setups.done(episode)
    assert removed == []
    setups.done(episodes[2])
    assert removed == ["cp-a"]
    setups.get(episodes[3])  # b's setup; the run ends before its episodes do
    setups.close()
    assert removed == ["cp-a", "cp-b"]


def test_a_failed_setup_fails_each_episode_and_is_not_run_again() -> None:
    episodes, origin = repeated([make_task(id="a")], 2)
    tries: list[str] = []

    def make(episode):  # type: ignore[no-untyped-def]
        tries.append(episode.id)
        raise SetupError("setup step 0 failed")

    setups = SharedSetups(origin, make, lambda c: pytest.fail("nothing to remove"))
    for episode in episodes:
        with pytest.raises(SetupError, match="setup step 0"):
            setups.get(episode)
        setups.done(episode)
    setups.close()
    assert tries == ["a.r1"]

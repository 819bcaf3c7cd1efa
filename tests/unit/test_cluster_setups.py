"""A cluster run's setups are discarded when the run ends, whenever each one comes back: the
checkpoint removed from its node, then the run's hold let go. (Removal is a Ray call; here it is
recorded instead: a real run over two nodes is in tests/desktop/test_ray.py.)"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from vdesk.cluster import placement
from vdesk.cluster.actors import NodeCheckpoint
from vdesk.cluster.placement import NodeSetUp, SetUps
from vdesk.errors import ClusterError
from vdesk.forks import Checkpoint
from vdesk.harness.forked import SetUp


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    said: list[str] = []

    def remove_checkpoint(checkpoint: NodeCheckpoint, *, missing_ok: bool = False) -> None:
        assert missing_ok
        said.append(f"removed {checkpoint.checkpoint.name} on {checkpoint.node_id}")
        if checkpoint.checkpoint.name == "broken":
            raise ClusterError("the node is gone")

    monkeypatch.setattr(placement, "remove_checkpoint", remove_checkpoint)
    return said


def made(name: str, said: list[str]) -> NodeSetUp:
    checkpoint = Checkpoint(name=name, source="d", created=datetime.now(timezone.utc), size=1, image="sha256:x",
                            image_name="vdesk/desktop", screen=(640, 480, 1.0), network="none", limits={},
                            environment={})
    return NodeSetUp(SetUp(checkpoint, 1.0, 0.5, lambda: said.append(f"released {name}")), "node-a")


def test_the_setups_kept_are_discarded_when_the_run_ends_removed_before_let_go(events: list[str]) -> None:
    setups = SetUps()
    setups.keep(made("one", events))
    setups.keep(made("two", events))
    assert events == []  # the run's episodes fork them meanwhile
    setups.close()
    assert events == ["removed one on node-a", "released one", "removed two on node-a", "released two"]
    setups.close()
    assert len(events) == 4  # once


def test_a_setup_that_comes_back_after_the_run_ended_is_discarded_at_once(events: list[str]) -> None:
    setups = SetUps()
    setups.close()
    late = made("late", events)
    assert setups.keep(late) is late
    assert events == ["removed late on node-a", "released late"]


def test_one_removal_that_fails_leaves_the_others_tried_and_is_raised(events: list[str]) -> None:
    setups = SetUps()
    for name in ("broken", "fine"):
        setups.keep(made(name, events))
    with pytest.raises(ClusterError, match="the node is gone"):
        setups.close()
    assert events == ["removed broken on node-a", "released broken", "removed fine on node-a", "released fine"]

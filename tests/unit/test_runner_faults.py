"""An episode that raises what no episode should (a fault of vdesk's own) stops the suite with
that error: it is not dropped from the results in silence."""

from __future__ import annotations

from pathlib import Path

import pytest

from vdesk.harness.agents.scripted import ScriptedAgent
from vdesk.harness.runner import run_suite
from vdesk.harness.suite import Episodes
from vdesk.harness.tasks import load_suite

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "suite"


def test_an_episode_that_raises_fails_the_suite_loudly(tmp_path, monkeypatch):
    def broken(self, task, env):  # type: ignore[no-untyped-def]
        raise RuntimeError(f"a bug while playing {task.id}")

    monkeypatch.setattr(Episodes, "play", broken)
    tasks = load_suite(EXAMPLES)[:2]
    with pytest.raises(RuntimeError, match="a bug while playing"):
        run_suite(tasks, ScriptedAgent, out=tmp_path / "run", parallel=2)
    assert (tmp_path / "run" / "results.json").is_file()  # the summary of what did end is still written

"""The wait for what a setup started (vdesk.started) does not hang on programs that never show a
window: a daemon at rest counts as settled, one that never rests is given up at the bound and
named where the episode's results say how it began."""

from __future__ import annotations

import pytest

from vdesk.desktop import Desktop
from vdesk.started import snapshot, wait_started


@pytest.fixture(scope="module")
def desktop():
    with Desktop.up(size=(640, 480)) as desktop:
        yield desktop


def test_a_daemon_at_rest_settles_without_a_window(desktop):
    before = snapshot(desktop)
    desktop.programs.run(["socat", "TCP-LISTEN:9222,fork,bind=127.0.0.1", "TCP:127.0.0.1:1337"])  # as OSWorld's Chrome tasks
    started = wait_started(desktop, before)
    assert (started.programs, started.windowless, started.notes) == (("socat",), ("socat",), ())


def test_a_program_that_never_rests_nor_shows_a_window_is_given_up_at_the_bound_and_noted(monkeypatch):
    """Through the harness: the agent gets its first frame, and the note says what had not settled."""
    import vdesk.harness.env
    from vdesk.harness.env import DesktopEnv
    from vdesk.harness.loop import opening_record
    from vdesk.harness.tasks import Task

    monkeypatch.setattr(vdesk.harness.env, "START_TIMEOUT", 3.0)  # the bound, not the behaviour: 60 s otherwise
    task = Task.model_validate({"id": "sleeper", "instruction": "-", "checks": [{"command": "true"}],
                                "setup": [{"start": ["sh", "-c", "exec sleep 600"]}]})  # to the wait, about to start one
    env = DesktopEnv(task)
    try:
        _, info = env.reset()
        assert info["setup_note"] == "sleep showed no window and was not at rest within 3 s"
        assert opening_record(env.opening)["setup_note"] == info["setup_note"]  # what results.json keeps
    finally:
        env.close()

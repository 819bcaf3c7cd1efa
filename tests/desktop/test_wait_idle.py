"""The `wait_idle` setup step waits for a program that is done, not for one starved of CPU.

On a loaded machine a program still loading its document can run for a tiny share of a CPU;
counting only the time it ran calls it idle, and a task's first keys then go nowhere. Here a
program is starved on purpose (the lowest priority, pinned to one CPU beside four spinning
loops at normal priority): it runs under 1 % of that CPU while it wants all of it.
"""

from __future__ import annotations

import pytest

from vdesk.desktop import Desktop
from vdesk.errors import SetupError
from vdesk.harness.env import run_setup
from vdesk.idle import program, wait_idle
from vdesk.harness.tasks import Task

SPIN = "while :; do :; done"


def named(name: str, body: str) -> list[str]:
    """A bash loop whose process name (what `ps` and the step match) is ``name``."""
    return ["bash", "-c", f"printf {name} > /proc/self/comm; {body}"]


def waiting_for(name: str, quiet: float, timeout: float) -> Task:
    return Task.model_validate({"id": "idle", "instruction": "-", "checks": [{"command": "true"}],
                                "setup": [{"wait_idle": name, "quiet": quiet, "timeout": timeout}]})


@pytest.fixture(scope="module")
def desktop():
    with Desktop.up(size=(640, 480)) as desktop:
        yield desktop


def test_a_starved_program_is_not_idle(desktop):
    for _ in range(4):
        desktop.programs.run(["taskset", "-c", "0", *named("hog", SPIN)])
    desktop.programs.run(["taskset", "-c", "0", "nice", "-n", "19", *named("starved", SPIN)])
    try:
        with pytest.raises(SetupError, match="starved did not go idle within 3 s"):
            run_setup(desktop, waiting_for("starved", quiet=0.5, timeout=3))
    finally:
        desktop.programs.run(["pkill", "-x", "hog"], wait=True)
        desktop.programs.run(["pkill", "-x", "starved"], wait=True)


def test_a_sleeping_program_is_idle(desktop):
    desktop.programs.run(named("sleeper", "sleep 600; exit"))  # not the last command: bash would exec it
    run_setup(desktop, waiting_for("sleeper", quiet=0.3, timeout=30))
    desktop.programs.run(["pkill", "-x", "sleeper"], wait=True)


def test_a_window_names_its_program_and_that_program_can_be_waited_for(desktop):
    """What the OSWorld `open` step waits for: the window's own process, from its _NET_WM_PID."""
    desktop.programs.run(["xterm", "-title", "idle-probe", "-e", "sleep", "600"])
    window = desktop.windows.wait_for("idle-probe", timeout=30)
    try:
        pid = desktop.windows.pid(window)
        assert pid is not None
        listed = desktop.programs.run(["pgrep", "-x", "xterm"], wait=True).stdout.split()
        assert str(pid) in listed
        assert program(desktop, window) == "xterm"
        wait_idle(desktop, "xterm", quiet=0.3, timeout=30)
    finally:
        desktop.programs.run(["pkill", "-f", "xterm -title idle-probe"], wait=True)


def test_judging_waits_for_a_busy_program_and_not_for_an_absent_one(desktop):
    """A task's judge_when_idle: the final frame waits while the named program works (here it
    writes a file after 2 s of spinning), and not at all for a program that is not running."""
    from vdesk.harness.env import idle_before_judging

    desktop.programs.run(named("saver", "end=$((SECONDS+2)); while [ $SECONDS -lt $end ]; do :; done; "
                               "echo saved > /tmp/judged; sleep 600; exit"))
    try:
        idle_before_judging(desktop, "saver")
        assert desktop.programs.run(["cat", "/tmp/judged"], wait=True).stdout == "saved\n"  # written before judging
    finally:
        desktop.programs.run(["pkill", "-x", "saver"], wait=True)
    idle_before_judging(desktop, "never-started")  # returns at its first look, not after a minute

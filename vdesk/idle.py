"""Waiting until a program in the desktop has gone idle.

A window is often shown before its program has drawn what it shows or can take input: an
office document still loading, which then takes the focus back from whatever was activated
meanwhile. A program is idle once all its processes (by name, as ``ps`` shows it, e.g.
``soffice.bin``) wanted almost no CPU over a quiet period — measured inside the desktop by a
short Python script, the program's own threads' scheduler counts, with no agent code involved.
"""

from __future__ import annotations

from vdesk.desktop import Desktop
from vdesk.errors import DesktopTimeout
from vdesk.windows import Window

IDLE_SHARE = 0.03  # of one CPU: a program using less than this is idle (a blinking caret, a timer)
# Runs in the desktop: sums what every process of the name wanted of the CPUs over one quiet
# period — the time it ran and the time it waited runnable on a run queue (from each thread's
# /proc/PID/task/TID/schedstat) — and exits 0 once that was under IDLE_SHARE of the period and no
# thread is runnable. The wait counts because on a busy machine a starved program runs little while
# it is still loading; the state too, because the kernel adds a wait up only when the thread runs.
WAIT_IDLE = f"""
import os, sys, time
name, quiet, timeout = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
absent_is_idle = sys.argv[4:] == ["absent-is-idle"]
def read(path):
    try:
        with open(path) as file:
            return file.read()
    except OSError:  # the process or thread ended meanwhile
        return ""
def wanted():
    total, runnable, found = 0, False, False
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if read(f"/proc/{{pid}}/stat").rsplit(")", 1)[0].partition("(")[2] != name:
            continue
        found = True
        try:
            threads = os.listdir(f"/proc/{{pid}}/task")
        except OSError:
            continue
        for tid in threads:
            total += sum(int(n) for n in read(f"/proc/{{pid}}/task/{{tid}}/schedstat").split()[:2])
            runnable = runnable or read(f"/proc/{{pid}}/task/{{tid}}/stat").rsplit(")", 1)[-1].split()[:1] == ["R"]
    return (total / 1e9, runnable) if found else None
deadline = time.monotonic() + timeout
before = wanted()
while time.monotonic() < deadline:
    time.sleep(quiet)
    now = wanted()
    if now is None and absent_is_idle:
        sys.exit(0)
    if before is not None and now is not None and not now[1] and now[0] - before[0] < {IDLE_SHARE} * quiet:
        sys.exit(0)
    before = now
sys.exit(f"{{name}} did not go idle within {{timeout:g}} s")
"""


def wait_idle(desktop: Desktop, name: str, *, quiet: float = 1.0, timeout: float = 60.0,
              absent_is_idle: bool = False) -> None:
    """Return once the processes called ``name`` used under :data:`IDLE_SHARE` of a CPU for
    ``quiet`` seconds with no thread runnable (or, with ``absent_is_idle``, none runs);
    :class:`DesktopTimeout` after ``timeout``."""
    argv = ["python3", "-c", WAIT_IDLE, name, str(quiet), str(timeout)] + (["absent-is-idle"] if absent_is_idle else [])
    # vdesk's own probe, not the task's program: on the desktop's real clock.
    done = desktop.programs.run(argv, wait=True, timeout=timeout + 5, clock=False)
    if done.returncode != 0:
        raise DesktopTimeout(done.stderr.strip() or f"{name} did not go idle within {timeout:g} s")


def program(desktop: Desktop, window: Window) -> str | None:
    """The process name of the program that shows ``window`` (from its ``_NET_WM_PID``), None
    when the window names no process or the process is gone."""
    pid = desktop.windows.pid(window)
    if pid is None:
        return None
    done = desktop.programs.run(["cat", f"/proc/{pid}/comm"], wait=True, timeout=10, clock=False)
    name = done.stdout.strip()
    return name if done.returncode == 0 and name else None

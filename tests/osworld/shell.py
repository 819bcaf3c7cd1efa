"""Commands run inside a real desktop by the osworld desktop's tests: once, or again until they
succeed (a program starting on a loaded machine)."""

from __future__ import annotations

import time

from vdesk.channel import Completed
from vdesk.desktop import Desktop

# What is left of a browser that `pkill chrome` did not end: each process, its state and parent.
CHROME_LEFT = "ps -eo pid,ppid,stat,etimes,comm,args | grep -i '[c]hrom' | cut -c1-200"


def sh(desktop: Desktop, command: str, timeout: float = 60.0) -> Completed:
    return desktop.programs.run(["bash", "-c", command], wait=True, timeout=timeout)


def until(desktop: Desktop, command: str, timeout: float = 90.0, *, explain: str | None = None) -> str:
    """Re-run ``command`` until it succeeds; its output. If it never does, the failure shows its
    last error and the output of ``explain`` (a command that says what stood in the way)."""
    deadline = time.monotonic() + timeout
    while True:
        result = sh(desktop, command)
        if result.returncode == 0:
            return result.stdout
        if time.monotonic() >= deadline:
            why = sh(desktop, explain).stdout[-2000:] if explain else ""
            raise AssertionError(f"{command!r} kept failing for {timeout:g} s: {result.stderr[-400:]}{why}")
        time.sleep(0.3)

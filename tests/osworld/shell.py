"""Commands run inside a real desktop by the osworld desktop's tests: once, or again until they
succeed (a program starting on a loaded machine)."""

from __future__ import annotations

import time

from vdesk.channel import Completed
from vdesk.desktop import Desktop


def sh(desktop: Desktop, command: str, timeout: float = 60.0) -> Completed:
    return desktop.programs.run(["bash", "-c", command], wait=True, timeout=timeout)


def until(desktop: Desktop, command: str, timeout: float = 90.0) -> str:
    """Re-run ``command`` until it succeeds; its output."""
    deadline = time.monotonic() + timeout
    while True:
        result = sh(desktop, command)
        if result.returncode == 0:
            return result.stdout
        assert time.monotonic() < deadline, f"{command!r} kept failing: {result.stderr[-400:]}"
        time.sleep(0.3)

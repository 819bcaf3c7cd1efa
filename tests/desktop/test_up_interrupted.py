"""Ctrl-C or SIGTERM at any moment of `vdesk up`: the desktop is up and announced, or gone."""

from __future__ import annotations

import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.engine import CLIENT  # made on first use, not at import
from vdesk.container import remove_container

VDESK = str(Path(sys.executable).parent / "vdesk")
# `vdesk up` takes ~0.6 s on an idle machine and several seconds on a loaded one: the signal
# lands in the imports, the container's creation, the wait for X and the first frame, the
# announcement, or after it.
DELAYS = (0.2, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.85, 1.0, 1.3, 1.5)


def containers_named(name: str) -> list[str]:
    return [c.status for c in CLIENT.containers.list(all=True, filters={"name": f"^/{name}$"})]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("delay", DELAYS)
def test_an_interrupted_up_leaves_no_unannounced_desktop(signum: int, delay: float) -> None:
    name = f"vdesk-interrupted-{secrets.token_hex(3)}"
    up = subprocess.Popen([VDESK, "up", "--name", name, "--json"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(delay)
        up.send_signal(signum)
        stdout, stderr = up.communicate(timeout=120)
        left = containers_named(name)
        if name in stdout:  # it finished before the signal: announced, and it must be running
            assert left == ["running"], (stdout, stderr)
        else:
            assert left == [], f"an unannounced desktop remains ({left}); stderr: {stderr}"
            assert up.returncode in (130, -signum, 128 + signum), (up.returncode, stderr)
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()
        for container in CLIENT.containers.list(all=True, filters={"name": f"^/{name}$"}):
            remove_container(container)

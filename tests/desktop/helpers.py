"""Small helpers shared by the tests that run against Docker."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import docker

from vdesk.desktop import Desktop
from vdesk.execstream import ExecStream
from vdesk.windows import Window

# A bound that only catches a hang, never a speed claim: a call that ends by its own timeout
# is proven so by the error it raises (and by ending before what it ran could have ended by
# itself); a minute is what no loaded machine takes for a promise that has no timeout.
HANG = 60.0


@dataclass(frozen=True)
class Ran:
    exit_code: int | None
    output: bytes


def separate_exec(desktop: Desktop, argv: list[str], timeout: float = 30.0) -> Ran:
    """Run ``argv`` through a ``docker exec`` of its own, not through the desktop's channel.
    (Not docker-py's ``exec_run``: on a loaded machine it can lose the start of the output, see
    :mod:`vdesk.execstream`.)"""
    received: list[bytes] = []
    ended = threading.Event()
    stream = ExecStream(desktop.client.api, desktop.id, argv, on_data=received.append, on_close=ended.set, stdin=False)
    assert ended.wait(timeout), f"{argv} did not end within {timeout:g} s"
    deadline = time.monotonic() + 5  # the engine records the exit code just after the output ends
    while (code := stream.exit_code()) is None and time.monotonic() < deadline:
        time.sleep(0.02)
    return Ran(code, b"".join(received))


def vdesk_containers(client: docker.DockerClient) -> set[str]:
    """Names of every container labelled as a vdesk desktop, running or not."""
    # sparse: one list call, no per-container inspect that races with removals
    listed = client.containers.list(all=True, sparse=True, filters={"label": "vdesk=desktop"},
                                    ignore_removed=True)
    return {c.attrs["Names"][0].lstrip("/") for c in listed}


def own_desktops(client: docker.DockerClient) -> set[str]:
    """Desktops (running or not) started by this process; other test runs' desktops come and go."""
    containers = client.containers.list(all=True, filters={"label": "vdesk=desktop"}, ignore_removed=True)
    return {c.name for c in containers if c.labels.get("vdesk.owner", "").endswith(f":{os.getpid()}")}


def wait_gone(client: docker.DockerClient, name: str, timeout: float) -> float:
    """Seconds until container ``name`` no longer exists; raises AssertionError after ``timeout``."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if name not in vdesk_containers(client):
            return time.monotonic() - started
        time.sleep(0.05)
    raise AssertionError(f"container {name} still exists after {timeout} s")


def paints(desktop: Desktop, colour: tuple[int, int, int], timeout: float = 5.0) -> float:
    """Seconds until the centre of the screen shows ``colour`` in a screenshot. The VNC
    server finds changes by polling, so the first fresh frame may not hold it yet."""
    started = time.monotonic()
    while (seen := desktop.screen.shot().getpixel((desktop.screen.width // 2, desktop.screen.height // 2))) != colour:
        assert time.monotonic() - started < timeout, f"the screen shows {seen}, not {colour}"
        time.sleep(0.05)
    return time.monotonic() - started


@contextmanager
def xterm(desktop: Desktop, title: str, *argv: str) -> Iterator[Window]:
    """An xterm titled ``title`` (running ``argv`` if given) on screen; killed on leaving, and
    waited for until the window manager has let go of it (the next program may get the same
    window id)."""
    desktop.programs.run(["xterm", "-title", title, *argv])
    window: Window | None = None
    try:
        window = desktop.windows.wait_for(title)
        yield window
    finally:
        close_window(desktop, title, window)


def close_window(desktop: Desktop, title: str, window: Window | None = None) -> None:
    """Kill the program whose command line holds ``title`` and wait until the window manager
    has let go of its window (``window``, or the one now titled so). The program may have
    ended by itself already."""
    window = window or desktop.windows.find(title)
    desktop.programs.run(["pkill", "-f", title], wait=True)
    if window is not None:
        desktop.windows.wait_gone(window)


@contextmanager
def program_receiving_keys(desktop: Desktop, tag: str) -> Iterator[Callable[[], str]]:
    """An xterm running ``cat > FILE`` with the keyboard focus. The yielded function waits for
    cat to end (the test sends end-of-file) and returns what the program received."""
    path = f"/tmp/{tag}-{time.monotonic_ns()}.txt"
    with xterm(desktop, path, "-e", "sh", "-c", f"cat > {path}") as window:
        desktop.windows.focus(window)
        desktop.input.execute([{"type": "click", "inputs": {"point": {"raw": {"x": window.x + 20, "y": window.y + 20}}}}])

        def received() -> str:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                if desktop.programs.run(["pgrep", "-f", f"cat > {path}"], wait=True).returncode != 0:
                    break
                time.sleep(0.05)
            return desktop.programs.run(["cat", path], wait=True).stdout

        yield received


def listening_addresses(port: int) -> set[str]:
    """Local addresses listening on ``port``, from /proc/net/tcp (hex, little-endian IPv4)."""
    import socket

    found = set()
    for line in open("/proc/net/tcp").read().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, hex_port = local.split(":")
        if int(hex_port, 16) == port and state == "0A":
            found.add(socket.inet_ntoa(bytes.fromhex(address)[::-1]))
    return found


# What a desktop's own programs find of a network: a connection out, a name resolved, its interfaces.
NETWORK_PROBE = """
import json, socket
outcome = {}
try:
    socket.create_connection(("1.1.1.1", 53), timeout=3)
    outcome["connect"] = "connected"
except OSError as error:
    outcome["connect"] = error.strerror or type(error).__name__
try:
    socket.getaddrinfo("example.com", 80)
    outcome["resolve"] = "resolved"
except OSError as error:
    outcome["resolve"] = type(error).__name__
with open("/proc/net/dev") as table:
    outcome["interfaces"] = sorted(line.split(":")[0].strip() for line in table.readlines()[2:])
print(json.dumps(outcome))
"""
NO_NETWORK = {"connect": "Network is unreachable", "resolve": "gaierror", "interfaces": ["lo"]}


def network_outcome(desktop: Desktop) -> dict[str, object]:
    """What :data:`NETWORK_PROBE` finds, run in ``desktop`` as its user."""
    result = desktop.programs.run(["python3", "-c", NETWORK_PROBE], wait=True, timeout=30).check()
    return dict(json.loads(result.stdout))

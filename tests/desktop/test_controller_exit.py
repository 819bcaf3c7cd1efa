"""Whatever a controller starts in a desktop stops when the controller stops.

A real ``vdesk exec`` process types a long text into a program; it is then interrupted with a
real signal. After that no xdotool may remain in the desktop and no more characters may arrive.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.desktop.helpers import xterm
from vdesk.actions import MAX_TYPED_CHARS
from vdesk.desktop import Desktop

VDESK = str(Path(sys.executable).parent / "vdesk")


def _size(desktop: Desktop, path: str) -> int:
    done = desktop.programs.run(["stat", "-c", "%s", path], wait=True)
    return int(done.stdout) if done.returncode == 0 else 0


def _xdotools(desktop: Desktop) -> int:
    return len(desktop.programs.run(["pgrep", "-x", "xdotool"], wait=True).stdout.split())


def _wait_for(condition, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_typing_stops_when_vdesk_exec_is_stopped(shared_desktop: Desktop, tmp_path: Path, signum: signal.Signals) -> None:
    desktop = shared_desktop
    path = f"/tmp/typed-{signum.name}-{time.monotonic_ns()}"
    line = "the quick brown fox jumps over the lazy dog 0123456\n"
    text = line * (MAX_TYPED_CHARS // len(line))  # ~16 s of typing: far longer than the test waits
    actions = tmp_path / "actions.json"
    actions.write_text(json.dumps([{"type": "type", "inputs": {"content": text}}]))
    with xterm(desktop, path, "-e", "sh", "-c", f"cat > {path}") as window:
        desktop.windows.focus(window)
        desktop.input.execute([{"type": "click", "inputs": {"point": {"raw": {"x": window.x + 20, "y": window.y + 20}}}}])
        typing = subprocess.Popen([VDESK, "exec", desktop.name, "-f", str(actions)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait_for(lambda: _size(desktop, path) > 2000, 30, "the typing never started")
            typing.send_signal(signum)
            typing.wait(timeout=30)
        finally:
            typing.kill()
        _wait_for(lambda: _xdotools(desktop) == 0, 5, "an xdotool still runs in the desktop")
        # No key is left held down (the X server would repeat it into the next program).
        _wait_for(lambda: not any(desktop.windows.request(lambda display: display.query_keymap())), 5,
                  "a key is still held down")
        time.sleep(0.5)  # events already sent reach the program
        settled = _size(desktop, path)
        time.sleep(2.0)
        assert _size(desktop, path) == settled, "characters kept arriving after the controller stopped"
        assert settled < len(text.encode()) // 2


def test_an_interrupted_call_ends_its_command(shared_desktop: Desktop) -> None:
    """Ctrl-C inside the Python API (KeyboardInterrupt) ends the command in the desktop too."""
    tag = f"vdesk-interrupted-{time.monotonic_ns()}"
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        shared_desktop.programs.run(["bash", "-c", f"exec -a {tag} sleep 300"], wait=True, timeout=300)
    timer.join()
    _wait_for(lambda: shared_desktop.programs.run(["pgrep", "-f", tag], wait=True).returncode != 0, 5,
              "the command outlived its call")


def test_a_started_program_outlives_the_controller(shared_desktop: Desktop) -> None:
    """run() without wait keeps its documented behaviour: the program keeps running."""
    tag = f"vdesk-detached-{time.monotonic_ns()}"
    script = ("from vdesk.desktop import Desktop; import sys; "
              f"Desktop.attach(sys.argv[1]).programs.run(['bash', '-c', 'exec -a {tag} sleep 300'])")
    subprocess.run([sys.executable, "-c", script, shared_desktop.name], check=True, timeout=60)
    try:
        assert shared_desktop.programs.run(["pgrep", "-f", tag], wait=True).returncode == 0
    finally:
        shared_desktop.programs.run(["pkill", "-f", tag], wait=True)


def _vdesk_run(name: str, *argv: str, timeout: str = "60") -> subprocess.CompletedProcess[str]:
    return subprocess.run([VDESK, "run", name, "--wait", "--timeout", timeout, "--", *argv],
                          capture_output=True, text=True, timeout=120)


def test_what_a_finished_command_leaves_running_outlives_the_controller(shared_desktop: Desktop) -> None:
    """As after a shell's command: `echo hi | xclip` leaves xclip's server owning the clipboard,
    and a later paste (a read by another controller) gives "hi"."""
    text = f"hi {time.monotonic_ns()}"
    copied = _vdesk_run(shared_desktop.name, "sh", "-c", 'echo "$1" | xclip -selection clipboard', "sh", text)
    assert copied.returncode == 0, copied.stderr
    pasted = _vdesk_run(shared_desktop.name, "xclip", "-o", "-selection", "clipboard")
    assert (pasted.returncode, pasted.stdout) == (0, text + "\n"), pasted.stderr


def _running(desktop: Desktop, tag: str) -> bool:
    return desktop.programs.run(["pgrep", "-f", tag], wait=True).returncode == 0


@pytest.mark.parametrize("ending", ["timeout", "SIGINT"])
def test_a_command_timed_out_or_interrupted_ends_with_what_it_started(shared_desktop: Desktop, ending: str) -> None:
    tag = f"{time.monotonic_ns() % 10**9}.5"  # `sleep TAG` is this test's own process
    script = f"sleep {tag} & sleep 300"
    if ending == "timeout":
        done = _vdesk_run(shared_desktop.name, "sh", "-c", script, timeout="2")
        assert (done.returncode, done.stderr) == (2, f"vdesk: desktop {shared_desktop.name}: sh did not finish "
                                                     "within 2 s (it was killed)\n")
    else:
        running = subprocess.Popen([VDESK, "run", shared_desktop.name, "--wait", "--", "sh", "-c", script],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait_for(lambda: _running(shared_desktop, f"sleep {tag}"), 30, "the command never started")
            running.send_signal(signal.SIGINT)
            assert running.wait(timeout=30) == 130
        finally:
            running.kill()
    _wait_for(lambda: not _running(shared_desktop, f"sleep {tag}"), 5, "what the command started outlived it")

"""Faults: a killed container, a dead VNC or X server, a dropped or hung channel, a missing
engine. Each ends in a clear error or a transparent recovery: a call that may wait ends by its
own timeout (the error says so), none waits out a hang (:data:`~tests.desktop.helpers.HANG`)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from vdesk import engine
from vdesk.desktop import Desktop
from tests.desktop.helpers import HANG, paints, separate_exec, xterm
from tests.desktop.probe import EventProbe, buttons
from vdesk.errors import DesktopGone, DesktopTimeout, EngineUnavailable

VDESK = str(Path(sys.executable).parent / "vdesk")
CHANNEL_CMDLINE = "/usr/bin/python3 /usr/local/bin/vdesk-channel"
CLICK = [{"type": "click", "inputs": {"point": [5, 5]}}]


class ApiCalls:
    """Counts the engine API requests a desktop's client makes (to rule out retry storms)."""

    def __init__(self, desktop: Desktop) -> None:
        self.count = 0
        api = desktop.client.api
        original = api.request

        def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
            self.count += 1
            return original(*args, **kwargs)

        api.request = counting  # type: ignore[method-assign]




# -- the container is killed -------------------------------------------------------------------
def _execute(desktop: Desktop) -> None:
    result = desktop.input.execute(CLICK)  # the operator contract folds the error into the result
    assert result.status == "failed"
    raise DesktopGone(result.error_message)


OPERATIONS: dict[str, Callable[[Desktop], object]] = {
    "execute": _execute,
    "screenshot": lambda desktop: desktop.screen.shot(),
    "run": lambda desktop: desktop.programs.run(["true"], wait=True),
    "run-detached": lambda desktop: desktop.programs.run(["xterm"]),
}


@pytest.mark.parametrize("operation", OPERATIONS)
def test_after_the_container_is_killed_the_next_call_raises_desktop_gone_naming_it_without_retrying(operation):
    with Desktop.up() as desktop:
        assert desktop.input.execute(CLICK).status == "success" and desktop.screen.shot()  # mid-episode
        desktop.container.kill()
        calls = ApiCalls(desktop)
        started = time.monotonic()
        with pytest.raises(DesktopGone, match=desktop.name):
            OPERATIONS[operation](desktop)
        elapsed = time.monotonic() - started
        print(f"{operation}: DesktopGone after {elapsed * 1000:.0f} ms and {calls.count} engine requests")
        assert calls.count <= 10, "the call kept retrying a dead desktop"
        assert elapsed < HANG


def test_a_call_in_flight_when_the_container_is_killed_ends_with_desktop_gone():
    with Desktop.up() as desktop:
        outcome: list[BaseException] = []

        def long_call() -> None:  # its command and its timeout both outlast HANG
            try:
                desktop.programs.run(["sleep", "300"], wait=True, timeout=300)
            except BaseException as error:  # noqa: BLE001 - handed to the test thread
                outcome.append(error)

        caller = threading.Thread(target=long_call, daemon=True)
        caller.start()
        # In flight: its command runs in the desktop, and the call has not returned.
        deadline = time.monotonic() + 60
        while separate_exec(desktop, ["pgrep", "-xf", "sleep 300"]).exit_code != 0:
            assert caller.is_alive(), f"the call ended before its command ran: {outcome!r}"
            assert time.monotonic() < deadline, "the command never started in the desktop"
            time.sleep(0.1)
        assert caller.is_alive() and not outcome
        desktop.container.kill()
        killed = time.monotonic()
        caller.join(timeout=HANG)  # far less than the command's 300 s: only the kill can end it
        elapsed = time.monotonic() - killed
        print(f"in-flight run: ended {elapsed * 1000:.0f} ms after the kill with {outcome!r}")
        assert not caller.is_alive(), f"the call still waited {HANG:g} s after the container was killed"
        assert len(outcome) == 1 and isinstance(outcome[0], DesktopGone) and desktop.name in str(outcome[0])


def test_a_desktop_removed_mid_typing_is_reported_as_gone_like_any_other_call():
    with Desktop.up() as desktop:
        results: list[object] = []
        typing = threading.Thread(target=lambda: results.append(
            desktop.input.execute([{"type": "type", "inputs": {"content": "a" * 20_000}}], receipt=False)))
        typing.start()
        deadline = time.monotonic() + 60
        while not any("xdotool type" in " ".join(p) for p in desktop.container.top()["Processes"]):
            assert typing.is_alive() and time.monotonic() < deadline, results
            time.sleep(0.05)
        desktop.container.remove(force=True)
        typing.join(timeout=HANG)  # only catches a hang
    assert not typing.is_alive() and len(results) == 1
    result = results[0]
    assert result.status == "failed"  # type: ignore[attr-defined]
    assert result.error_message.startswith(  # type: ignore[attr-defined]
        f"desktop {desktop.name} is gone (its container stopped or was removed)"), result


# -- the VNC connection drops, or the server hangs --------------------------------------------
def test_when_the_vnc_connection_drops_frames_resume_on_their_own():
    with Desktop.up() as desktop:
        desktop.programs.run(["xsetroot", "-solid", "#ff0000"], wait=True).check()
        paints(desktop, (255, 0, 0))
        # The in-desktop end of the VNC tunnel: killing it drops the held connection.
        desktop.programs.run(["pkill", "-f", "TCP:127.0.0.1:5900"], wait=True).check()
        killed = time.monotonic()
        frame = desktop.screen.shot()  # reconnects by itself
        print(f"first frame {(time.monotonic() - killed) * 1000:.0f} ms after the VNC connection dropped")
        assert frame.getpixel((640, 400)) == (255, 0, 0)
        # Frames resume: a change made while a wait watches the reconnected screen is seen, and
        # a fresh screenshot shows it too.
        desktop.programs.run(["sh", "-c", "sleep 2; xsetroot -solid '#0000ff'"])  # starts now, paints in 2 s
        changed = desktop.screen.wait_for_change(timeout=20, since=frame)  # seen even if it came first
        assert changed.getpixel((640, 400)) == (0, 0, 255)
        paints(desktop, (0, 0, 255))


def held_connection_ended(desktop: Desktop, timeout: float = 30.0) -> None:
    """Wait until the X tunnel has passed the drop on (it shut its end of the held connection, so
    the socket reads its end), without sending on the connection: the next request is the one
    that must find it closed."""
    tunnel = desktop.windows.connection._link.tunnel  # type: ignore[union-attr]
    deadline = time.monotonic() + timeout
    while tunnel._streams:
        assert time.monotonic() < deadline, f"the X tunnel still relayed the dropped connection after {timeout:g} s"
        time.sleep(0.01)


def test_when_the_x_connection_drops_window_queries_and_typing_go_on():
    with Desktop.up() as desktop, xterm(desktop, "after-the-drop") as window:
        assert desktop.windows.find("after-the-drop").id == window.id  # the connection is open
        # The in-desktop end of the X tunnel: killing it drops the held connection.
        desktop.programs.run(["pkill", "-f", "UNIX-CONNECT:/tmp/.X11-unix/X0"], wait=True).check()
        assert desktop.windows.find("after-the-drop").id == window.id  # asked again on a new connection
        result = desktop.input.execute([{"type": "type", "inputs": {"content": "ça 日本"}}])  # binds keys over X
        assert result.status == "success", result.error_message
        # Dropped while idle: the next input goes on a new connection (nothing of it was lost).
        desktop.programs.run(["pkill", "-f", "UNIX-CONNECT:/tmp/.X11-unix/X0"], wait=True).check()
        held_connection_ended(desktop)  # the drop reached this process; nobody has asked yet
        with EventProbe(desktop) as probe:
            assert desktop.input.execute(CLICK, receipt=False).status == "success"
            assert buttons(probe.events()) == [("button_press", 1, 5, 5), ("button_release", 1, 5, 5)]


def test_a_hung_x_and_vnc_server_gives_desktop_timeout_and_frames_come_back_when_it_resumes():
    with Desktop.up() as desktop:
        desktop.screen.shot()
        desktop.windows.count()  # the X connection input goes on is open
        assert separate_exec(desktop, ["pkill", "-STOP", "-x", "Xvnc"]).exit_code == 0
        try:
            started = time.monotonic()
            # Each ends by its own 5 s timeout, as its error says; 10 times that only catches a hang.
            with pytest.raises(DesktopTimeout, match=f"{desktop.name}: no fresh frame within 5 s"):
                desktop.screen.shot()
            elapsed = time.monotonic() - started
            print(f"hung X and VNC server: DesktopTimeout after {elapsed:.1f} s")
            assert elapsed < 50
            started = time.monotonic()
            result = desktop.input.execute(CLICK, receipt=False)  # input waits for the X server no longer either
            elapsed = time.monotonic() - started
            print(f"hung X server: input failed after {elapsed:.1f} s: {result.error_message}")
            assert result.status == "failed" and desktop.name in result.error_message
            assert "the X server did not take input within 5 s" in result.error_message and elapsed < 50
        finally:
            separate_exec(desktop, ["pkill", "-CONT", "-x", "Xvnc"])
        desktop.programs.run(["xsetroot", "-solid", "#00ff00"], wait=True).check()
        paints(desktop, (0, 255, 0))


# -- the X server dies -------------------------------------------------------------------------
@pytest.mark.parametrize("leased", [True, False], ids=["leased", "unleased"])
def test_when_the_x_server_dies_the_desktop_stops_and_the_next_call_says_so_naming_it(leased):
    desktop = Desktop.up(lease=leased, ttl=None if leased else 120)
    try:
        desktop.screen.shot()
        desktop.programs.run(["pkill", "-x", "Xvnc"])
        killed = time.monotonic()
        with pytest.raises(DesktopGone, match=desktop.name) as raised:
            while time.monotonic() - killed < HANG:  # calls made before the desktop noticed may pass
                desktop.screen.shot()
                desktop.programs.run(["true"], wait=True)
                time.sleep(0.05)
        elapsed = time.monotonic() - killed
        print(f"X server killed: DesktopGone after {elapsed * 1000:.0f} ms: {raised.value}")
        deadline = time.monotonic() + HANG
        while desktop.is_alive():
            assert time.monotonic() < deadline, "the desktop kept running without its X server"
            time.sleep(0.1)
        if not leased:  # it is kept: its log says why it stopped
            assert "the X server died" in desktop.container.logs().decode()
    finally:
        desktop.down()


# -- the channel -------------------------------------------------------------------------------
def test_commands_that_fail_do_not_harm_the_channel(shared_desktop):
    reopened = shared_desktop.channel.reopened
    assert shared_desktop.programs.run(["false"], wait=True).returncode == 1
    missing = shared_desktop.programs.run(["no-such-program-here"], wait=True)
    assert missing.returncode == 127 and "no-such-program-here" in missing.stderr
    crashed = shared_desktop.programs.run(["python3", "-c", "import os; os.abort()"], wait=True)
    assert crashed.returncode == -6
    noisy = shared_desktop.programs.run(["python3", "-c", "import sys; sys.stderr.write('e' * 1000000); sys.exit(3)"], wait=True)
    assert noisy.returncode == 3 and len(noisy.stderr) == 1000000
    assert shared_desktop.programs.run(["echo", "still here"], wait=True).check().stdout == "still here\n"
    assert shared_desktop.channel.reopened == reopened  # the same channel served them all


def _dropped(desktop: Desktop) -> bool:
    """Whether this process has seen the desktop's channel stream end."""
    stream = desktop.channel._stream
    return stream is None or stream.closed


def _serving_ends(desktop: Desktop) -> int:
    processes = separate_exec(desktop, ["ps", "-eo", "args="]).output.decode().splitlines()
    return processes.count(CHANNEL_CMDLINE)


def test_a_dropped_channel_is_reopened_on_the_next_request(shared_desktop):
    shared_desktop.programs.run(["true"], wait=True).check()
    assert _serving_ends(shared_desktop) == 1  # the serving end, as killed below
    reopened = shared_desktop.channel.reopened
    killed = separate_exec(shared_desktop, ["pkill", "-f", f"^{CHANNEL_CMDLINE}$"])
    assert killed.exit_code == 0
    # The next request is to find the drop noticed (one sent while the end of the stream is
    # still on its way is a command lost under the channel: ChannelLost, another test's case).
    deadline = time.monotonic() + HANG
    while not _dropped(shared_desktop):
        assert time.monotonic() < deadline, "the channel's stream never saw its serving end die"
        time.sleep(0.02)
    assert shared_desktop.programs.run(["echo", "again"], wait=True).check().stdout == "again\n"
    assert shared_desktop.channel.reopened == reopened + 1
    assert shared_desktop.input.execute(CLICK).status == "success"


def test_a_command_that_runs_too_long_gets_desktop_timeout_and_the_channel_goes_on(shared_desktop):
    started = time.monotonic()
    with pytest.raises(DesktopTimeout, match=f"{shared_desktop.name}: sleep did not finish within 1 s \\(it was killed\\)"):
        shared_desktop.programs.run(["sleep", "31"], wait=True, timeout=1)
    elapsed = time.monotonic() - started
    print(f"sleep 31 with a 1 s timeout: DesktopTimeout after {elapsed:.2f} s")
    assert elapsed < 31  # its timeout ended it, not the command's own end
    assert shared_desktop.programs.run(["pgrep", "-f", "sleep 31"], wait=True).returncode == 1  # it was killed
    assert shared_desktop.programs.run(["echo", "next"], wait=True).check().stdout == "next\n"


def test_a_channel_that_stops_answering_gives_desktop_timeout_then_a_fresh_channel_works(shared_desktop):
    shared_desktop.programs.run(["true"], wait=True).check()
    assert separate_exec(shared_desktop, ["pkill", "-STOP", "-f", f"^{CHANNEL_CMDLINE}$"]).exit_code == 0
    try:
        started = time.monotonic()
        # The channel's own bound (timeout 1 s + 5 s of grace) ends it, as its error says; 10
        # times that only catches a hang.
        with pytest.raises(DesktopTimeout, match=f"{shared_desktop.name}: true gave no answer within 6 s"):
            shared_desktop.programs.run(["true"], wait=True, timeout=1)
        elapsed = time.monotonic() - started
        print(f"hung channel: DesktopTimeout after {elapsed:.1f} s (timeout 1 s + 5 s grace)")
        assert elapsed < 60
        assert shared_desktop.programs.run(["echo", "fresh"], wait=True).check().stdout == "fresh\n"
    finally:
        separate_exec(shared_desktop, ["pkill", "-CONT", "-f", f"^{CHANNEL_CMDLINE}$"])
    # The resumed old end finds its stdin closed and exits, leaving the fresh one alone.
    deadline = time.monotonic() + HANG
    while (ends := _serving_ends(shared_desktop)) != 1:
        assert time.monotonic() < deadline, f"{ends} channel processes serve the desktop, not 1"
        time.sleep(0.1)


# -- the engine --------------------------------------------------------------------------------
def test_an_engine_that_is_not_there_is_one_clear_error_line():
    started = time.monotonic()
    with pytest.raises(EngineUnavailable) as raised:
        engine.connect("unix:///nonexistent.sock")
    message = str(raised.value)
    print(message)
    # A missing socket is refused: the call does not wait out the engine's timeout.
    assert "No such file or directory" in message and time.monotonic() - started < engine.PING_TIMEOUT
    assert "\n" not in message and "no Docker engine answers" in message and "/nonexistent.sock" in message
    with pytest.raises(EngineUnavailable):
        Desktop.up(engine="unix:///nonexistent.sock")


def test_an_engine_that_never_answers_times_out(monkeypatch):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "silent.sock")
        silent = socket.socket(socket.AF_UNIX)
        silent.bind(path)
        silent.listen(8)  # accepts connections, never says a word
        monkeypatch.setattr(engine, "API_TIMEOUT", 2)
        started = time.monotonic()
        try:
            with pytest.raises(EngineUnavailable, match="no Docker engine answers") as raised:
                engine.connect(f"unix://{path}")
        finally:
            silent.close()
        elapsed = time.monotonic() - started
        print(f"silent engine: EngineUnavailable after {elapsed:.1f} s: {raised.value}")
        # Its timeout ended the wait (a hang would have met no end but HANG).
        assert "timed out" in str(raised.value) and engine.API_TIMEOUT <= elapsed < HANG


@pytest.mark.parametrize("command", [["ls"], ["up"], ["exec", "some-desktop", "[]"], ["down", "--all"]])
def test_the_cli_says_in_one_line_that_no_engine_answers(command):
    env = {**os.environ, "DOCKER_HOST": "unix:///nonexistent.sock"}
    started = time.monotonic()
    done = subprocess.run([VDESK, *command], env=env, capture_output=True, text=True, timeout=30)
    print(f"vdesk {' '.join(command)} -> exit {done.returncode} in {time.monotonic() - started:.1f} s: {done.stderr!r}")
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert "no Docker engine answers" in done.stderr

"""Checkpoints and forks of real desktops: a fork starts with the checkpoint's pixels and its
programs running on from their saved state, is its own desktop (input, password, container),
many start at once, a desktop is restored in place, and the apps image's Chromium forks too."""

from __future__ import annotations

import functools
import json
import re
import secrets
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import docker
import pytest
from PIL import Image

from pathlib import Path

from tests.desktop.helpers import NO_NETWORK, network_outcome, own_desktops, wait_gone
from vdesk import forks
from vdesk.container import VNC_TARGET
from vdesk.desktop import Desktop
from vdesk.errors import CheckpointError, DesktopNotFound, PasswordRefused, VNCUnavailable
from vdesk.execstream import start_exec
from vdesk.forks import Checkpoint
from vdesk.frames import LiveFramebuffer
from vdesk.images import TASKBAR_CLOCK
from vdesk.screen import DesktopScreen
from vdesk.tunnel import Tunnel
from vdesk.xconn import X_SOCKET

VDESK = str(Path(sys.executable).parent / "vdesk")
COUNTER = ["sh", "-c", "i=0; while true; do i=$((i+1)); echo $i > /tmp/ticks; sleep 0.2; done"]
TERMINAL_TITLE = "fork-probe"
RUN = secrets.token_hex(2)  # in the desktops' names: two runs of this file on one engine do not collide
CLOCK_WIDTH, TASKBAR_HEIGHT = TASKBAR_CLOCK
X_SETUP = b"l\0\x0b\0\0\0\0\0\0\0\0\0"  # an X client's first words: little-endian, protocol 11, no auth


def ticks(desktop: Desktop) -> int:
    return int(desktop.programs.run(["cat", "/tmp/ticks"], wait=True).check().stdout.strip() or 0)


def wait_until(condition, timeout: float = 30.0, what: str = "condition") -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} not within {timeout:g} s"
        time.sleep(0.05)


def same_pixels(a: Image.Image, b: Image.Image) -> bool:
    return a.size == b.size and a.tobytes() == b.tobytes()


def assert_refused(desktop: Desktop, password: str) -> None:
    """``desktop``'s VNC server refuses ``password`` (a connection of its own, not the desktop's)."""
    source = functools.partial(start_exec, desktop.client.api, desktop.id, ["socat", "STDIO", VNC_TARGET],
                               label=desktop.name)
    stale = LiveFramebuffer(source, password, desktop.name)
    try:
        with pytest.raises(PasswordRefused):
            stale.connect(timeout=10)
    finally:
        stale.close()


@pytest.fixture(scope="module")
def original() -> Iterator[Desktop]:
    """A lean desktop with a terminal that echoes what is typed and a counter writing /tmp/ticks."""
    with Desktop.up(name=f"fork-original-{RUN}") as desktop:
        desktop.programs.run(["xterm", "-T", TERMINAL_TITLE, "-geometry", "60x10+40+40", "-e", "sh", "-c",
                     "echo forked desktops; exec sleep 100000"])
        desktop.windows.wait_for(TERMINAL_TITLE)
        desktop.programs.run(COUNTER)
        wait_until(lambda: ticks(desktop) >= 5, what="the counter")
        yield desktop


@pytest.fixture(scope="module")
def taken(original: Desktop) -> Iterator[tuple[Checkpoint, Image.Image, int]]:
    """The original's checkpoint, its screen just before it, and the counter just before it."""
    screen = original.screen.settle(quiet=0.3)
    before = ticks(original)
    checkpoint = original.checkpoint()
    yield checkpoint, screen, before
    forks.remove(original.client, checkpoint.name)


def test_a_fork_shows_the_checkpoint_screen_and_its_programs_run_on(original: Desktop, taken) -> None:  # type: ignore[no-untyped-def]
    checkpoint, screen, before = taken
    assert checkpoint.source == original.name and checkpoint.size > 1_000_000
    assert original.screen.shot().size == screen.size  # the original runs on, reconnected
    (fork,) = Desktop.fork(checkpoint)
    with fork:
        assert fork.name != original.name and fork.id != original.id
        assert same_pixels(fork.screen.shot(), screen)
        saved = ticks(fork)
        assert saved >= before > 1  # from its saved value, not from 1
        wait_until(lambda: ticks(fork) > saved, what="the fork's counter to go on")
        assert fork.windows.find(TERMINAL_TITLE) is not None
        assert fork.info().status == "running" and fork.container.labels["vdesk.checkpoint"] == checkpoint.name


def test_a_fork_forks_in_turn_and_its_fork_refuses_both_earlier_passwords(original: Desktop, taken) -> None:  # type: ignore[no-untyped-def]
    checkpoint, screen, before = taken
    (child,) = Desktop.fork(checkpoint)
    with child:
        (grandchild,) = child.fork(1)  # its container runs under the fork runtime: checkpointed all the same
        with grandchild:
            assert same_pixels(grandchild.screen.shot(), screen)
            assert ticks(grandchild) >= before
            assert grandchild.vnc.password not in {child.vnc.password, original.vnc.password}
            for stale_password in (child.vnc.password, original.vnc.password):
                assert_refused(grandchild, stale_password)
        forks.remove(child.client, grandchild.container.labels["vdesk.checkpoint"])


def test_typing_into_one_fork_changes_only_that_fork(original: Desktop, taken) -> None:  # type: ignore[no-untyped-def]
    checkpoint, screen, _ = taken
    first, second = Desktop.fork(checkpoint, 2)
    with first, second:
        first.windows.focus(first.windows.wait_for(TERMINAL_TITLE))
        first.input.execute([{"type": "type", "inputs": {"content": "only here"}}])
        first.text.wait_for("only here")
        assert not same_pixels(first.screen.shot(), screen)
        assert same_pixels(second.screen.shot(), screen)
        assert original.text.find("only here") == []


def test_a_fork_has_its_own_vnc_password_and_refuses_the_originals(original: Desktop, taken) -> None:  # type: ignore[no-untyped-def]
    checkpoint, _, _ = taken
    (fork,) = Desktop.fork(checkpoint)
    with fork:
        assert fork.vnc.password != original.vnc.password
        assert fork.vnc.view_password != original.vnc.view_password
        attached = Desktop.attach(fork.name)  # reads the password the fork's files say
        assert attached.vnc.password == fork.vnc.password
        attached.close()
        assert_refused(fork, original.vnc.password)
        fork.screen.shot()  # its own password still opens it


def test_a_fork_whose_first_relay_fails_is_made_its_own_all_the_same(original: Desktop, taken,  # type: ignore[no-untyped-def]
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A fork's password and time-to-live are set by the exec that carries its first frame; when
    that connection fails, the reset runs alone and a plain connection follows."""
    checkpoint, screen, _ = taken

    def failing(*_: object) -> None:
        raise VNCUnavailable("the relay failed (injected)")

    monkeypatch.setattr(DesktopScreen, "connect_after", failing)
    (fork,) = Desktop.fork(checkpoint, ttl=600)
    with fork:
        assert same_pixels(fork.screen.shot(), screen)
        assert_refused(fork, original.vnc.password)
        assert fork.programs.run(["pgrep", "-f", "-x", "sh -c .* vdesk-ttl 600"], wait=True).check().stdout.strip()


def test_eight_forks_at_once_all_healthy_all_removed(taken) -> None:  # type: ignore[no-untyped-def]
    checkpoint, screen, _ = taken
    client = docker.from_env()
    desktops = Desktop.fork(checkpoint, 8)
    try:
        assert len({d.name for d in desktops}) == 8
        for desktop in desktops:
            assert same_pixels(desktop.screen.shot(), screen)
            assert desktop.programs.run(["echo", "alive"], wait=True).check().stdout.strip() == "alive"
    finally:
        for desktop in desktops:
            desktop.down()
    assert not own_desktops(client) & {d.name for d in desktops}


def test_a_fork_has_no_network_but_loopback_as_its_original_has(taken) -> None:  # type: ignore[no-untyped-def]
    # Docker's network hook runs beside a network-less fork's restore (vdesk-network-hook): the
    # loopback the relay needs is up at once, and nothing else is there.
    checkpoint, _, _ = taken
    (fork,) = Desktop.fork(checkpoint)
    try:
        assert network_outcome(fork) == NO_NETWORK
        fork.container.reload()
        assert fork.container.attrs["HostConfig"]["NetworkMode"] == "none"
    finally:
        fork.down()


def test_a_checkpoint_removed_twice_is_not_found_the_second_time_unless_that_is_fine(original: Desktop) -> None:
    checkpoint = original.checkpoint()
    forks.remove(original.client, checkpoint.name)
    with pytest.raises(DesktopNotFound, match=f"no checkpoint named '{checkpoint.name}'"):
        forks.remove(original.client, checkpoint.name)
    forks.remove(original.client, checkpoint.name, missing_ok=True)  # a cleanup after `vdesk prune`
    assert checkpoint.name not in {c.name for c in forks.list_checkpoints(original.client)}


@contextmanager
def x_client_through_a_tunnel(desktop: Desktop) -> Iterator[Tunnel]:
    """An X client outside the desktop, as a viewer or `vdesk tunnel` user would hold one: its
    relay (socat, in an exec of its own) is connected to the X server inside."""
    tunnel = Tunnel(desktop.client.api, desktop.id, X_SOCKET, tcp_port=0)
    client = socket.create_connection(("127.0.0.1", tunnel.port), timeout=10)
    try:
        client.sendall(X_SETUP)
        assert client.recv(1)[:1] == b"\x01", "the X server did not accept the client"
        yield tunnel
    finally:
        client.close()
        tunnel.close()


def test_a_checkpoint_waits_for_a_relay_on_its_way_out(original: Desktop) -> None:
    # Closing a connection ends its relay inside a moment later; a dump in that moment would fail
    # ("External socket is used"). Here the relay ends 0.3 s after the checkpoint was asked for.
    with x_client_through_a_tunnel(original) as tunnel:
        threading.Timer(0.3, tunnel.close).start()
        checkpoint = original.checkpoint()
    forks.remove(original.client, checkpoint.name)


def test_a_tunnel_held_open_fails_a_checkpoint_saying_so(original: Desktop) -> None:
    with x_client_through_a_tunnel(original):
        with pytest.raises(CheckpointError, match=r"External socket is used.*close VNC viewers and tunnels"):
            original.checkpoint()
    assert original.programs.run(["echo", "on"], wait=True).check().stdout.strip() == "on"


def test_prune_leaves_a_held_checkpoint_until_its_hold_is_released(original: Desktop) -> None:
    checkpoint = original.checkpoint()
    with Desktop.up() as other:  # a checkpoint whose desktop is gone and that no fork runs from
        gone = other.checkpoint()
    try:
        held = forks.hold(original.client, gone.name)
        assert forks.prune(original.client, only=[gone.name, checkpoint.name]) == []  # held; source alive
        held.release()
        assert forks.prune(original.client, only=[gone.name, checkpoint.name]) == [gone.name]
        with pytest.raises(DesktopNotFound):
            forks.hold(original.client, gone.name)
    finally:
        forks.remove(original.client, checkpoint.name)
        forks.remove(original.client, gone.name, missing_ok=True)


def test_a_hold_ends_with_the_process_that_held_it(original: Desktop) -> None:
    with Desktop.up() as other:
        gone = other.checkpoint()
    holder = subprocess.Popen([sys.executable, "-c", "import sys, docker; from vdesk import forks; "
                               f"forks.hold(docker.from_env(), {gone.name!r}); print('held', flush=True); sys.stdin.read()"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        assert forks.prune(original.client, only=[gone.name]) == []
        holder.kill()  # SIGKILL: no release ran
        holder.wait(timeout=30)
        assert forks.prune(original.client, only=[gone.name]) == [gone.name]
    finally:
        holder.kill()
        forks.remove(original.client, gone.name, missing_ok=True)


def test_restore_puts_a_desktop_back_in_place(taken) -> None:  # type: ignore[no-untyped-def]
    checkpoint, screen, before = taken
    (desktop,) = Desktop.fork(checkpoint)
    with desktop:
        name, password = desktop.name, desktop.vnc.password
        desktop.windows.focus(desktop.windows.wait_for(TERMINAL_TITLE))
        desktop.input.execute([{"type": "type", "inputs": {"content": "undone"}}])
        desktop.text.wait_for("undone")
        desktop.programs.run(["touch", "/tmp/made-after"], wait=True).check()
        desktop.programs.run(["pkill", "-f", "echo \\$i > /tmp/ticks"], wait=True).check()  # the counter stops
        stopped = ticks(desktop)
        desktop.restore(checkpoint)
        assert desktop.name == name and desktop.is_alive()
        assert same_pixels(desktop.screen.shot(), screen)
        assert desktop.programs.run(["test", "-e", "/tmp/made-after"], wait=True).returncode == 1
        now = ticks(desktop)
        wait_until(lambda: ticks(desktop) > now, what="the restored counter to run")  # its process is back
        assert now >= before and stopped >= before
        assert desktop.vnc.password != password
        assert len([c for c in desktop.client.containers.list(filters={"name": name}) if c.name == name]) == 1


def test_a_desktop_forks_itself_and_prune_leaves_a_checkpoint_in_use(original: Desktop) -> None:
    client = original.client
    (fork,) = original.fork(1, ttl=600)
    try:
        name = fork.container.labels["vdesk.checkpoint"]
        assert 0 < forks.remaining_ttl(fork.container) <= 600  # type: ignore[operator]
        assert name not in forks.prune(client)
        assert name in [c.name for c in forks.list_checkpoints(client)]
    finally:
        fork.down()
        forks.remove(client, name)


def without_clock(screen: Image.Image) -> Image.Image:
    """The screen with the taskbar's clock blanked: it shows the minute now, which may turn
    between the checkpoint and the fork's first frame (a fork of Chromium takes seconds)."""
    covered = screen.copy()
    covered.paste((0, 0, 0), (screen.width - CLOCK_WIDTH, screen.height - TASKBAR_HEIGHT, screen.width, screen.height))
    return covered


@pytest.fixture(scope="module")
def chromium() -> Iterator[Desktop]:
    with Desktop.up(name=f"fork-chromium-{RUN}", image="apps", timeout=120) as desktop:
        desktop.programs.run(["chromium", "data:text/html,<title>fork page</title><h1>A page to fork</h1>"])
        desktop.windows.wait_for("fork page", timeout=60)
        desktop.text.wait_for("A page to fork", timeout=60)
        yield desktop


@contextmanager
def fork_of_the_screen(desktop: Desktop, window: str) -> Iterator[Desktop]:
    """A fork of ``desktop`` (its screen still) whose first frame equals the original's but for
    the clock, its window ``window`` focused; the fork and the checkpoint are removed after."""
    checkpoint = None
    for _ in range(5):  # a screen the same before and after the checkpoint is the one it holds
        screen = desktop.screen.settle(quiet=1.0, timeout=30)
        checkpoint = desktop.checkpoint()
        if same_pixels(without_clock(desktop.screen.shot()), without_clock(screen)):
            break
        forks.remove(desktop.client, checkpoint.name)  # a late repaint (a loaded machine): again
    else:
        raise AssertionError(f"{desktop.name}'s screen kept changing around its checkpoint")
    try:
        (fork,) = Desktop.fork(checkpoint, timeout=120)
        with fork:
            assert same_pixels(without_clock(fork.screen.shot()), without_clock(screen))
            fork.windows.focus(fork.windows.wait_for(window))
            yield fork
    finally:
        forks.remove(desktop.client, checkpoint.name)


def test_an_apps_desktop_with_chromium_forks_with_the_same_pixels(chromium: Desktop) -> None:
    with fork_of_the_screen(chromium, "fork page") as fork:
        fork.input.execute([{"type": "hotkey", "inputs": {"key": "ctrl+t"}}])
        fork.windows.wait_for("New Tab", timeout=30)  # the forked browser takes input and draws
        assert chromium.windows.find("fork page") is not None


def test_the_command_line_checkpoints_forks_lists_and_prunes() -> None:
    def vdesk(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([VDESK, *args], capture_output=True, text=True, timeout=300)

    cli, cp = f"fork-cli-{RUN}", f"fork-cli-{RUN}-cp"
    up = vdesk("up", "--name", cli, "--ttl", "600", "--json")
    assert up.returncode == 0, up.stderr
    made: list[str] = [cli]
    try:
        taken = vdesk("checkpoint", cli, "--as", cp)
        assert taken.returncode == 0 and taken.stdout.startswith(f"{cp} "), taken.stderr
        assert cp in vdesk("ls").stdout
        listed = json.loads(vdesk("ls", "--json").stdout)
        (checkpoint,) = [c for c in listed["checkpoints"] if c["name"] == cp]
        assert checkpoint["source"] == cli and checkpoint["size"] > 1_000_000
        assert cli in {d["name"] for d in listed["desktops"]}
        forked = vdesk("fork", cp, "-n", "2", "--json")
        assert forked.returncode == 0, forked.stderr
        facts = [json.loads(line) for line in forked.stdout.splitlines()]
        made += [fact["name"] for fact in facts]
        assert len(facts) == 2 and all(fact["checkpoint"] == cp for fact in facts)
        assert json.loads(up.stdout)["password"] not in {fact["password"] for fact in facts}
        shot = vdesk("run", facts[0]["name"], "--wait", "--", "echo", "forked")
        assert shot.returncode == 0 and shot.stdout == "forked\n"
        from_desktop = vdesk("fork", cli)  # a desktop: checkpointed first
        assert from_desktop.returncode == 0, from_desktop.stderr
        made.append(from_desktop.stdout.split()[0])
        assert f"checkpoint {cp}" not in vdesk("prune").stdout  # its forks still run
        assert vdesk("down", *made).returncode == 0
        made = []
        pruned = vdesk("prune").stdout
        assert f"removed checkpoint {cp}" in pruned and f"removed checkpoint {cli}-" in pruned.replace(
            f"removed checkpoint {cp}", "")
        assert cp not in vdesk("ls").stdout
        assert cp not in {c["name"] for c in json.loads(vdesk("ls", "--json").stdout)["checkpoints"]}
        missing = vdesk("fork", "no-such-thing")
        assert missing.returncode == 2 and missing.stderr == "vdesk: no desktop or checkpoint named 'no-such-thing' (see `vdesk ls`)\n"
    finally:
        if made:
            vdesk("down", *made)


def test_a_fork_lives_by_its_own_time_to_live_not_the_originals() -> None:
    client = docker.from_env()
    with Desktop.up(name=f"fork-ttl-{RUN}", ttl=20) as short:
        expires = int(short.container.labels["vdesk.expires-at"])
        checkpoint = short.checkpoint()
        try:
            (lasting,) = Desktop.fork(checkpoint, ttl=600)
            (brief,) = Desktop.fork(checkpoint, ttl=10)
            with lasting, brief:
                wait_gone(client, brief.name, 60)  # its own ten seconds
                wait_gone(client, short.name, 60)  # the original's twenty
                wait_until(lambda: time.time() > expires + 5, what="the original's deadline to pass")
                assert lasting.is_alive()  # the original's watcher was not restored into it
                assert lasting.programs.run(["echo", "on"], wait=True).check().stdout == "on\n"
        finally:
            forks.remove(client, checkpoint.name)


TYPED_IN_FORK = re.compile(r"only\s*in\s*the\s*fork")


def test_an_apps_desktop_with_calc_and_a_document_forks_with_the_same_pixels(tmp_path: Path) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    book.active["A1"] = "forked cell"
    book.save(tmp_path / "sheet.xlsx")
    with Desktop.up(name=f"fork-calc-{RUN}", image="apps", timeout=120) as desktop:
        desktop.files.write_file("/home/desk/sheet.xlsx", (tmp_path / "sheet.xlsx").read_bytes())
        desktop.programs.run(["libreoffice", "--calc", "--norestore", "/home/desk/sheet.xlsx"])
        desktop.windows.wait_for("sheet.xlsx", timeout=90)
        desktop.text.wait_for("forked cell", timeout=60)
        with fork_of_the_screen(desktop, "sheet.xlsx") as fork:
            # No Enter: the cell stays in editing, its text in the formula bar too. OCR of these
            # small fonts can drop the spaces of a line ("onlyinthe fork" in the formula bar,
            # "oniy in the forkl" in the cell beside two CPU hogs), hence the pattern.
            typed = fork.input.execute([{"type": "type", "inputs": {"content": "only in the fork"}}])
            assert typed.status == "success", typed.error_message
            fork.text.wait_for(TYPED_IN_FORK, timeout=60)  # the forked Calc takes input
            assert desktop.text.find(TYPED_IN_FORK) == []

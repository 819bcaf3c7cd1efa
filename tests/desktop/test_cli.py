"""The command line works from a shell as the README shows: up, exec, run, shot, ls, down."""

from __future__ import annotations

import io
import json
import secrets
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PIL import Image

from tests.desktop.helpers import HANG, vdesk_containers
from vdesk.container import remove_container
from tests.desktop.probe import buttons, keys

VDESK = str(Path(sys.executable).parent / "vdesk")
from tests.engine import CLIENT  # noqa: E402  (made on first use, not at import)


def vdesk(*args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([VDESK, *args], capture_output=True, text=True, input=input, timeout=120)


def test_up_exec_run_shot_ls_down_from_a_shell(tmp_path):
    up = vdesk("up", "--size", "1024x768", "--json")
    assert up.returncode == 0, up.stderr
    facts = json.loads(up.stdout)  # stdout is the JSON alone, even when the image was (re)built
    name = facts["name"]
    try:
        assert len(facts["password"]) == 8
        assert name in vdesk_containers(CLIENT)  # it outlived the command

        listed = json.loads(vdesk("ls", "--json").stdout)
        assert isinstance(listed["checkpoints"], list)
        mine = next(d for d in listed["desktops"] if d["name"] == name)
        assert mine["size"] == "1024x768" and mine["status"] == "running" and not mine["leased"]
        assert mine["clock"] is None  # started without one: the real time
        assert 0 < mine["ttl_left"] <= 7200

        run = vdesk("run", name, "--wait", "--", "sh", "-c", "echo hi from $(id -un)")
        assert run.returncode == 0 and run.stdout == "hi from desk\n"

        click = '{"type": "click", "inputs": {"point": {"raw": {"x": 10, "y": 20}}}}'
        done = vdesk("exec", name, click, '{"type": "hotkey", "inputs": {"key": "ctrl+c"}}')
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["status"] == "success"

        batch = json.dumps([{"type": "mouse_move", "inputs": {"point": [1, 1]}}])
        assert vdesk("exec", name, "-f", "-", input=batch).returncode == 0

        shot = tmp_path / "shot.png"
        assert vdesk("shot", name, "-o", str(shot)).returncode == 0
        assert Image.open(shot).size == (1024, 768)
    finally:
        down = vdesk("down", name)
    assert down.returncode == 0 and name not in vdesk_containers(CLIENT)


def test_a_taken_name_says_what_holds_it_and_how_to_free_it(shared_desktop):
    taken = shared_desktop.name
    running = vdesk("up", "--name", taken)
    assert (running.returncode, running.stderr) == (2, f"vdesk: a desktop named '{taken}' already exists and is "
                                                       f"running: give another name, or remove it first (`vdesk down {taken}`)\n")
    name = f"vdesk-test-{secrets.token_hex(4)}"
    # 20 s: a loaded machine may take a while to bring it up, and it must be up before it expires.
    assert vdesk("up", "--name", name, "--ttl", "20").returncode == 0
    try:
        container = CLIENT.containers.get(name)
        deadline = time.monotonic() + 20 + HANG  # its time, then its stop
        while container.status != "exited" and time.monotonic() < deadline:
            time.sleep(0.2)
            container.reload()
        assert container.status == "exited"  # its time-to-live stopped it
        again = vdesk("up", "--name", name)
        assert (again.returncode, again.stderr) == (2, f"vdesk: a desktop named '{name}' already exists, expired or "
                                                       f"stopped (exited): `vdesk prune {name}` removes it\n")
        pruned = vdesk("prune", name)  # as it says
        assert (pruned.returncode, pruned.stdout) == (0, f"removed {name}\n") and name not in vdesk_containers(CLIENT)
    finally:
        if name in vdesk_containers(CLIENT):
            remove_container(CLIENT.containers.get(name))


def test_a_failed_batch_exits_non_zero_with_the_reason(shared_desktop):
    bad = vdesk("exec", shared_desktop.name, '{"type": "click", "inputs": {"point": {"raw": {"x": 5000, "y": 1}}}}')
    assert bad.returncode == 1
    assert json.loads(bad.stdout)["status"] == "failed" and "outside" in bad.stdout


def test_errors_are_one_clear_line_not_a_traceback():
    missing = vdesk("shot", "no-such-desktop", "-o", "/tmp/x.png")
    assert missing.returncode == 2 and "no desktop named 'no-such-desktop'" in missing.stderr
    assert "Traceback" not in missing.stderr
    bad_json = vdesk("exec", "no-such-desktop", "{not json")
    assert bad_json.returncode == 2 and "Traceback" not in bad_json.stderr
    bad_size = vdesk("up", "--size", "huge")
    assert bad_size.returncode == 2 and "invalid size 'huge'" in bad_size.stderr


def test_exec_speaks_model_formats(shared_desktop, probe):
    name = shared_desktop.name
    uitars = vdesk("exec", name, "--format", "uitars", "Thought: click it\nAction: click(start_box='(500,500)')")
    assert uitars.returncode == 0, uitars.stderr + uitars.stdout
    assert buttons(probe.events()) == [("button_press", 1, 640, 400), ("button_release", 1, 640, 400)]  # grid centre
    anthropic = vdesk("exec", name, "--format", "anthropic", '{"action": "left_click", "coordinate": [100, 50]}')
    assert anthropic.returncode == 0, anthropic.stderr + anthropic.stdout
    # a 1280x800 screen is its own screenshot size for the model (WXGA): the point is the screen's
    assert buttons(probe.events()) == [("button_press", 1, 100, 50), ("button_release", 1, 100, 50)]
    openai = vdesk("exec", name, "--format", "openai", '{"type": "keypress", "keys": ["CTRL", "L"]}')
    assert openai.returncode == 0, openai.stderr + openai.stdout
    assert keys(probe.events()) == [("key_press", "Control_L"), ("key_press", "l"),
                                    ("key_release", "l"), ("key_release", "Control_L")]


def test_vnc_forwards_a_loopback_port_that_needs_the_password(shared_desktop):
    import socket

    from tests.desktop.helpers import listening_addresses
    from vdesk.frames import LiveFramebuffer, PasswordRefused

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    forward = subprocess.Popen([VDESK, "vnc", shared_desktop.name, "--port", str(port)],
                               stdout=subprocess.PIPE, text=True)
    try:
        assert f"127.0.0.1:{port}" in forward.stdout.readline()
        assert listening_addresses(port) == {"127.0.0.1"}  # loopback only, never all interfaces
        frames = LiveFramebuffer(f"127.0.0.1::{port}", shared_desktop.vnc.password, "forwarded")
        try:
            frames.connect(timeout=10)
            assert frames.fresh().image.size == (1280, 800)
        finally:
            frames.close()
        for wrong in ("", "not-it"):  # without the password the viewer gets nothing
            refused = LiveFramebuffer(f"127.0.0.1::{port}", wrong, "forwarded")
            with pytest.raises(PasswordRefused):
                refused.connect(timeout=10)
            refused.close()
    finally:
        forward.terminate()
        forward.wait(timeout=10)


def test_prune_removes_an_expired_desktop_and_keeps_a_live_one(shared_desktop):
    import time

    from vdesk.desktop import Desktop

    # 20 s: a loaded machine may take longer than a few seconds to bring it up, and a desktop
    # whose time ran out while it started is an error of `up` (not this test's subject).
    expired = Desktop.up(lease=False, ttl=20)
    expired.close()
    deadline = time.monotonic() + 80  # its 20 s, then its stop, on a loaded 2-core machine
    while expired.is_alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not expired.is_alive(), "a desktop with ttl=20 still ran 80 s later"
    # Scoped to this test's desktops: other runs' stopped desktops on this engine are theirs.
    pruned = vdesk("prune", expired.name, shared_desktop.name)
    assert pruned.returncode == 0 and pruned.stdout.splitlines() == [f"removed {expired.name}"]
    assert expired.name not in vdesk_containers(CLIENT)
    assert shared_desktop.name in vdesk_containers(CLIENT)
    kept = vdesk("prune", shared_desktop.name)  # a named one that stays says why
    assert kept.returncode == 0 and kept.stdout == ""
    assert kept.stderr.strip().endswith(f"left {shared_desktop.name}: it is running within its time-to-live "
                                        f"(vdesk down {shared_desktop.name} removes it)")


def test_shot_to_stdout_writes_the_png_there_and_says_so_on_stderr(shared_desktop):
    shot = subprocess.run([VDESK, "shot", shared_desktop.name, "-o", "-"], capture_output=True, timeout=120)
    assert shot.returncode == 0, shot.stderr
    image = Image.open(io.BytesIO(shot.stdout))
    assert image.format == "PNG" and image.size == shared_desktop.screen.size
    assert shot.stderr.decode() == f"wrote a PNG to stdout ({image.width}x{image.height})\n"


def test_exec_anthropic_takes_the_sdks_whole_tool_use_block(shared_desktop, probe):
    # What `block.model_dump()` of the SDK's toolset reply gives, pasted as is.
    block = {"type": "tool_use", "id": "toolu_01", "name": "left_click", "toolset_name": "computer",
             "caller": {"type": "direct"}, "input": {"coordinate": [30, 40]}}
    done = vdesk("exec", shared_desktop.name, "--format", "anthropic", json.dumps(block))
    assert done.returncode == 0, done.stderr + done.stdout
    assert buttons(probe.events()) == [("button_press", 1, 30, 40), ("button_release", 1, 30, 40)]
    single = {"type": "tool_use", "id": "toolu_02", "name": "computer", "input": {"action": "key", "text": "Return"}}
    done = vdesk("exec", shared_desktop.name, "--format", "anthropic", json.dumps(single))
    assert done.returncode == 0, done.stderr + done.stdout
    assert keys(probe.events()) == [("key_press", "Return"), ("key_release", "Return")]


def test_run_wait_says_when_output_was_cut_and_keeps_it_all_when_asked(shared_desktop):
    name = shared_desktop.name
    whole = "".join(f"{i}\n" for i in range(1, 400_001))  # 2,688,895 bytes: past the default 1 MiB
    cut = vdesk("run", name, "--wait", "--", "seq", "1", "400000")
    assert cut.returncode == 2 and cut.stdout == whole[:1 << 20]  # what came, and no more
    assert cut.stderr.count("\n") == 1 and "Traceback" not in cut.stderr
    assert cut.stderr == documented_cut_line().replace("NAME", name)  # the page shows what it prints
    assert f"seq: output cut: kept the first 1048576 of {len(whole)} bytes of stdout" in cut.stderr
    assert "pass --max-output 3MiB to keep it all" in cut.stderr and f"vdesk cp {name}:PATH ." in cut.stderr

    kept = vdesk("run", name, "--wait", "--max-output", "3MiB", "--", "seq", "1", "400000")
    assert kept.returncode == 0 and kept.stdout == whole, kept.stderr

    failed = vdesk("run", name, "--wait", "--max-output", "10", "--", "sh", "-c", "seq 1 100; exit 4")
    assert failed.returncode == 2 and failed.stdout == "1\n2\n3\n4\n5\n"  # the first 10 bytes
    assert "sh (it exited with 4): output cut: kept the first 10 of 292 bytes of stdout" in failed.stderr


def documented_cut_line() -> str:
    """The line docs/cli.md shows under `vdesk run NAME --wait -- seq 1 400000 > numbers.txt`."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text().splitlines()
    shown = page[page.index("$ vdesk run NAME --wait -- seq 1 400000 > numbers.txt") + 1]
    return shown + "\n"


def test_a_bad_max_output_is_refused_before_any_desktop_is_reached():
    for size in ("huge", "0", "65MiB"):
        bad = vdesk("run", "no-such-desktop", "--wait", "--max-output", size, "--", "true")
        assert bad.returncode == 2 and f"--max-output {size!r}" in bad.stderr and "Traceback" not in bad.stderr

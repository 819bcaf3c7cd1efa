"""What `vdesk` prints is whole and says what happened: names and URLs never cut, one channel
for invalid actions, a model agent checked before any desktop, an interrupted eval that says
how far it got. The real command in a subprocess, a real desktop, real signals."""

from __future__ import annotations

import http.client
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from vdesk.cli import run as run_cli
from vdesk.cli.console import SuiteProgress

VDESK = str(Path(sys.executable).parent / "vdesk")
SUITE = Path(__file__).parents[2] / "examples" / "suite"
pytestmark = pytest.mark.desktop


def vdesk(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([VDESK, *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "COLUMNS": "80", **(env or {})})


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_ls_prints_a_long_name_whole_at_80_columns_and_in_a_pipe():
    name = "vdesk-test-" + secrets.token_hex(26)  # 63 characters, the longest name allowed
    assert vdesk("up", "--name", name, "--ttl", "600").returncode == 0
    try:
        listed = vdesk("ls")  # stdout is a pipe; COLUMNS=80
        assert listed.returncode == 0 and max(len(line) for line in listed.stdout.splitlines()) <= 80, listed.stdout
        rows = [line for line in listed.stdout.splitlines() if line.startswith(name)]
        assert len(rows) == 1 and rows[0].split() == [name, "running"] and "…" not in listed.stdout
        folded = listed.stdout.splitlines()[listed.stdout.splitlines().index(rows[0]) + 1]
        assert folded.startswith("  1280x800  ")  # the rest of its row, whole, under it
        piped = vdesk("ls", env={"COLUMNS": ""})  # no width to fit: each row whole on its line
        (row,) = [line for line in piped.stdout.splitlines() if line.startswith(name)]
        assert row.split()[:3] == [name, "running", "1280x800"]
        mine = next(d for d in json.loads(vdesk("ls", "--json").stdout)["desktops"] if d["name"] == name)
        assert mine["size"] == "1280x800" and mine["vnc_address"] is None and 0 < mine["ttl_left"] <= 600
    finally:
        assert vdesk("down", name).returncode == 0


@pytest.mark.parametrize("control", [False, True])
def test_view_prints_a_one_time_link_whole_and_never_the_password(shared_desktop, control):
    args = ["view", shared_desktop.name, *(["--control"] if control else [])]
    viewer = subprocess.Popen([VDESK, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "COLUMNS": "40"})
    try:
        first = viewer.stdout.readline()  # type: ignore[union-attr]
        assert first.startswith("open http://127.0.0.1:") and "/view/" in first, first
        url = first.removeprefix("open ").strip()
        parts = urlsplit(url)
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        connection.request("GET", parts.path)
        response = connection.getresponse()
        assert response.status == 303
        query = parse_qs(urlsplit(response.headers["Location"]).query)
        assert query["view_only"] == ["0" if control else "1"] and query["autoconnect"] == ["1"]
    finally:
        viewer.send_signal(signal.SIGINT)
        stdout, stderr = viewer.communicate(timeout=30)
    assert viewer.returncode == 130 and stderr.endswith("vdesk: interrupted\n")
    said = first + stdout + stderr
    assert shared_desktop.vnc.password not in said and shared_desktop.vnc.view_password not in said
    assert ("view-only" in stderr) is not control
    # noVNC reads `view_only` from the page's address (UI.initSetting), so the page opens so.
    assert "initSetting('view_only'" in Path("/usr/share/novnc/app/ui.js").read_text()


CLICK = '{"type": "click", "inputs": {"point": {"raw": {"x": 10, "y": 10}}}}'


@pytest.mark.parametrize("bad, why", [
    ('{"type": "click", "inputs": {"point": {"raw": {"x": "left"}}}}', "x"),  # a schema error
    ('{"type": "click", "inputs": {"point": {"raw": {"x": 5000, "y": 1}}}}', "outside"),  # off the screen
    ('{"type": "type", "inputs": {"content": "a\\u0007b"}}', "control"),  # a control character
    ("{not json", "not valid JSON"),
])
def test_an_invalid_action_is_reported_one_way_numbered_across_arguments(shared_desktop, bad, why):
    result = vdesk("exec", shared_desktop.name, CLICK, f"[{CLICK}]", bad)
    assert result.returncode == 1 and result.stderr == ""
    reply = json.loads(result.stdout)
    assert reply["status"] == "failed" and reply["executed"] == 0 and why in reply["error_message"]
    # The third argument holds the third action: action 2 (or, unreadable, payload 3).
    assert reply["error_message"].startswith(("action 2", "payload 3 of 3")), reply["error_message"]


def test_an_unreachable_model_agent_fails_once_before_any_desktop(tmp_path):
    out = tmp_path / "run"
    url = f"http://127.0.0.1:{free_port()}/v1"
    result = vdesk("eval", str(SUITE), "--agent", "openai-chat", "--out", str(out), env={"VDESK_CHAT_BASE_URL": url})
    lines = result.stderr.splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert url in lines[0] and "VDESK_CHAT_BASE_URL" in lines[0]
    assert not out.exists()  # no episode began, so no desktop was asked for
    keyless = vdesk("eval", str(SUITE), "--agent", "anthropic", "--out", str(out), env={"ANTHROPIC_API_KEY": ""})
    assert keyless.returncode == 2 and keyless.stderr.strip().endswith("set ANTHROPIC_API_KEY")
    assert not out.exists()


def test_an_interrupted_eval_says_how_far_it_got_and_replay_says_replay(tmp_path):
    out = tmp_path / "run"
    tasks = sorted(p for p in SUITE.iterdir() if p.suffix == ".yaml")
    evaluation = subprocess.Popen([VDESK, "eval", str(SUITE), "--out", str(out)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env={**os.environ, "COLUMNS": "80"})
    deadline = time.monotonic() + 180
    while not list(out.glob("*/outcome.json")) and time.monotonic() < deadline and evaluation.poll() is None:
        time.sleep(0.1)
    evaluation.send_signal(signal.SIGINT)
    _, stderr = evaluation.communicate(timeout=120)
    done = len(list(out.glob("*/outcome.json")))
    assert evaluation.returncode == 130, stderr
    last = stderr.splitlines()[-1]
    assert 1 <= done < len(tasks)
    finished = json.loads((out / "results.json").read_text())
    assert finished["interrupted"]
    ended = [e for e in finished["episodes"] if e["status"] != "cancelled"]
    assert last == f"vdesk: interrupted: {len(ended)} of {len(tasks)} done, results in {out / 'results.json'}"

    first = out / ended[0]["task_id"]
    replayed = vdesk("replay", str(first), "--out", str(tmp_path / "again"))
    assert replayed.returncode in (0, 1), replayed.stderr
    assert "replay 1/1" in replayed.stderr and "eval" not in replayed.stderr
    table = replayed.stdout.splitlines()
    assert table[1].split()[0] == "TASK" and table[2].split()[0] == ended[0]["task_id"]


def test_eval_tables_keep_names_and_counts_whole_at_80_columns(tmp_path):
    out = tmp_path / "run"
    task = SUITE / "terminal-count-lines.yaml"
    result = vdesk("eval", str(task), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "…" not in result.stdout + result.stderr
    rows = result.stdout.splitlines()
    assert rows[0].startswith("scripted: 1/1 passed (100%)")
    assert rows[2].split()[:3] == ["terminal-count-lines", "finished", "yes"]
    assert "eval 1/1  1 passed" in result.stderr


def test_the_eval_bar_keeps_its_counts_whole_however_narrow():
    progress = SuiteProgress("eval", 14, done=4, passed=3,
                             running=["a-rather-long-task-name-number-one", "another-long-task-name", "third"])
    for width in (40, 60, 80, 120):
        line = progress.line(width)
        assert line.startswith("eval 4/14  3 passed  0:0") and len(line) <= width, (width, line)
        assert "…" not in line
        names = line.split("running: ", 1)[1].split(" +")[0].split(", ") if "running: " in line else []
        assert all(name in progress.running for name in names)  # whole names, or none
    assert progress.line(100).endswith(" running: a-rather-long-task-name-number-one +2")
    assert progress.line(80).endswith(" 3 running")


def test_empty_listings_say_so(monkeypatch, capsys):
    # The shared engine holds other users' desktops and checkpoints, so the empty case is an
    # engine with none: the listings are replaced, the command is the real one.
    import vdesk.forks
    import vdesk.inventory

    monkeypatch.setattr(vdesk.inventory, "list_desktops", lambda engine=None, client=None: [])
    monkeypatch.setattr(vdesk.forks, "list_checkpoints", lambda client: [])
    assert run_cli(["ls"]) == 0
    assert capsys.readouterr().out == "no desktops (start one with `vdesk up`)\n"
    assert run_cli(["down", "--all"]) == 0
    assert capsys.readouterr().out == "no desktops to remove\n"


def pointer(desktop) -> tuple[int, int]:
    shell = desktop.programs.run(["xdotool", "getmouselocation", "--shell"], wait=True).check().stdout
    fields = dict(line.split("=", 1) for line in shell.split())
    return int(fields["X"]), int(fields["Y"])


@pytest.mark.filterwarnings("ignore:TripleDES has been moved")  # vncdotool's own client, as a viewer would be
def test_the_view_only_password_watches_and_the_vnc_server_drops_its_input(shared_desktop):
    from vncdotool import api as vnc_api

    assert shared_desktop.vnc.view_password != shared_desktop.vnc.password
    shared_desktop.input.execute([{"type": "mouse_move", "inputs": {"point": [10, 10]}}])
    address = shared_desktop.vnc.address
    watcher = vnc_api.connect(address, shared_desktop.vnc.view_password, timeout=30)
    try:
        watcher.mouseMove(300, 200)
        watcher.refreshScreen()  # a round trip: the move, if honoured, has reached the server
        assert watcher.screen.size == shared_desktop.screen.physical_size  # it sees the screen
    finally:
        watcher.disconnect()
    assert pointer(shared_desktop) == (10, 10)
    controller = vnc_api.connect(address, shared_desktop.vnc.password, timeout=30)
    try:
        controller.mouseMove(300, 200)
        controller.refreshScreen()
    finally:
        controller.disconnect()
    assert pointer(shared_desktop) == (300, 200)  # the same move with the full password lands

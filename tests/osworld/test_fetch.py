"""Fetching a task's files on the host, and granting its desktop a network, against an HTTP
server the test starts on this machine (its loopback, or the Docker bridge's gateway for a
desktop), never the internet: files land in OSWorld's cache layout and are reused, failures
name the URL, ``--offline`` fetches nothing, ``tasks check`` only says what would be fetched;
on real desktops (the ``desktop`` tests) the fetched file reaches the desktop, and a task with
``proxy: true`` reaches the test's server once ``--network`` grants it the bridge network."""

from __future__ import annotations

import ipaddress
import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from vdesk.cli.app import invoke
from vdesk.errors import FetchError
from vdesk.harness.agents import ScriptedAgent
from vdesk.harness.runner import run_suite
from vdesk.osworld.extension import spec_of
from vdesk.osworld.fetch import FetchSettings, default_folder, fetch
from vdesk.osworld.loader import load_tasks
from vdesk.osworld import inside
from vdesk.osworld.session import OSWorldSession, fetch_task_files

TASK_ID = "fetch-task"
DATA = b"a line the download step brings\n"


@dataclass
class Page:
    body: bytes = b""
    status: int = 200
    delay: float = 0.0               # before the answer
    trickle: float = 0.0             # between two bytes of the body
    length: int | None = -1          # Content-Length sent (-1: the body's; None: none)
    location: str | None = None      # a redirect's target


@dataclass
class Server:
    """An HTTP server in a thread; ``pages`` by path, ``requests`` the paths asked for."""

    host: str
    pages: dict[str, Page] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    port: int = 0

    def url(self, path: str) -> str:
        return f"http://{self.host}:{self.port}{path}"


@pytest.fixture(autouse=True)
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The default task-files folder under the test's own folder, never the user's; no proxy
    of the environment between the fetch and the test's server."""
    monkeypatch.setenv("VDESK_CACHE", str(tmp_path / "vdesk-cache"))
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    return default_folder()


def serve(host: str) -> Iterator[Server]:
    server = Server(host)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # the body ends when the connection closes (no length needed)

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            server.requests.append(self.path)
            page = server.pages.get(self.path, Page(b"no such page", status=404))
            time.sleep(page.delay)
            self.send_response(page.status)
            if page.location:
                self.send_header("Location", page.location)
            length = len(page.body) if page.length == -1 else page.length
            if length is not None:
                self.send_header("Content-Length", str(length))
            self.end_headers()
            try:
                if page.trickle:
                    for byte in page.body:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(page.trickle)
                else:
                    self.wfile.write(page.body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up, as it should

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer((host, 0), Handler)
    httpd.daemon_threads = True
    server.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def server() -> Iterator[Server]:
    yield from serve("127.0.0.1")


def task_tree(folder: Path, server: Server, **extra: Any) -> Path:
    """A folder holding one OSWorld-format task of our own: a download step and a cloud_file
    getter on ``server``; it passes when the downloaded file in the desktop equals the gold one."""
    server.pages.update({"/files/data.txt": Page(DATA), "/files/gold.txt": Page(DATA)})
    data = {
        "id": TASK_ID, "instruction": "Leave the downloaded file as it is.", "config": [
            {"type": "download", "parameters": {"files": [{"url": server.url("/files/data.txt"),
                                                           "path": "/home/user/data.txt"}]}}],
        "evaluator": {"func": "compare_text_file",
                      "result": {"type": "vm_file", "path": "/home/user/data.txt", "dest": "data.txt"},
                      "expected": {"type": "cloud_file", "path": server.url("/files/gold.txt"), "dest": "gold.txt"}},
        "solution": {"pyautogui": ["WAIT"]}, **extra}
    (folder / "os").mkdir(parents=True, exist_ok=True)
    (folder / "os" / f"{TASK_ID}.json").write_text(json.dumps(data))
    return folder


def cached_download(root: Path, url: str, name: str) -> Path:
    return root / TASK_ID / f"{uuid.uuid5(uuid.NAMESPACE_URL, url)}_{name}"  # OSWorld's cache name


def test_files_land_in_the_cache_layout_and_are_fetched_once(tmp_path: Path, server: Server) -> None:
    tree, files = task_tree(tmp_path / "tree", server), tmp_path / "files"
    files.mkdir()
    (task,) = load_tasks(tree, task_files=files, fetch=FetchSettings())
    assert task.skip is None  # what is not there yet will be fetched
    lines: list[str] = []
    fetched = fetch_task_files(spec_of(task), task.base_dir, lines.append)
    download = cached_download(files, server.url("/files/data.txt"), "data.txt")
    assert sorted(fetched) == sorted([download, files / TASK_ID / "gold.txt"])
    assert download.read_bytes() == DATA and (files / TASK_ID / "gold.txt").read_bytes() == DATA
    assert any(line.startswith(f"fetched {server.url('/files/data.txt')}") for line in lines)
    assert fetch_task_files(spec_of(task), task.base_dir, lines.append) == []  # reused: nothing asked for again
    assert sorted(server.requests) == ["/files/data.txt", "/files/gold.txt"]
    assert not list((files / TASK_ID).glob(".*.part"))
    (offline,) = load_tasks(tree, task_files=files)  # and offline, the fetched files are found
    assert offline.skip is None


def test_one_url_a_step_and_a_getter_name_differently_is_fetched_for_each(tmp_path: Path, server: Server) -> None:
    tree = task_tree(tmp_path / "tree", server)
    file = tree / "os" / f"{TASK_ID}.json"
    data = json.loads(file.read_text())
    data["evaluator"]["expected"]["path"] = server.url("/files/data.txt")  # the same URL as the download
    file.write_text(json.dumps(data))
    (tmp_path / "files").mkdir()
    (task,) = load_tasks(tree, task_files=tmp_path / "files", fetch=FetchSettings())
    fetch_task_files(spec_of(task), task.base_dir, lambda line: None)
    assert (tmp_path / "files" / TASK_ID / "gold.txt").read_bytes() == DATA
    assert cached_download(tmp_path / "files", server.url("/files/data.txt"), "data.txt").read_bytes() == DATA


def test_the_default_folder_is_under_vdesk_cache(tmp_path: Path, server: Server, cache_home: Path) -> None:
    (task,) = load_tasks(task_tree(tmp_path / "tree", server), fetch=FetchSettings())
    assert spec_of(task) is not None and spec_of(task).task_files == str(cache_home.resolve())
    fetch_task_files(spec_of(task), task.base_dir)
    assert (cache_home / TASK_ID / "gold.txt").read_bytes() == DATA


def test_a_missing_page_names_the_url_and_its_status(tmp_path: Path, server: Server) -> None:
    url = server.url("/nowhere.txt")
    with pytest.raises(FetchError, match=f"^{url}: HTTP 404"):
        fetch(url, tmp_path / "x" / "nowhere.txt")
    assert not (tmp_path / "x" / "nowhere.txt").exists() and not list((tmp_path / "x").iterdir())


def test_a_file_past_the_size_bound_is_refused_by_its_length_or_as_it_comes(tmp_path: Path, server: Server) -> None:
    server.pages["/big"] = Page(b"x" * 5000)
    server.pages["/big-unsaid"] = Page(b"x" * 5000, length=None)  # no Content-Length: counted as read
    for path in ("/big", "/big-unsaid"):
        with pytest.raises(FetchError, match=f"^{server.url(path)}: too big: .*4000 bytes"):
            fetch(server.url(path), tmp_path / "big", FetchSettings(max_bytes=4000))
    assert not list(tmp_path.iterdir())
    assert fetch(server.url("/big"), tmp_path / "big", FetchSettings(max_bytes=5000)).stat().st_size == 5000


def test_a_slow_server_runs_out_of_time(tmp_path: Path, server: Server) -> None:
    server.pages["/silent"] = Page(DATA, delay=3.0)
    server.pages["/trickle"] = Page(b"x" * 40, trickle=0.05)  # every read in time, the whole too slow
    started = time.monotonic()
    with pytest.raises(FetchError, match=f"^{server.url('/silent')}: timed out"):
        fetch(server.url("/silent"), tmp_path / "silent", FetchSettings(timeout=0.5))
    assert time.monotonic() - started < 2.5
    with pytest.raises(FetchError, match=f"^{server.url('/trickle')}: timed out: not fetched within 0.5 s"):
        fetch(server.url("/trickle"), tmp_path / "trickle", FetchSettings(timeout=1.0, total_time=0.5))
    assert not list(tmp_path.iterdir())


def test_a_cancelled_fetch_stops_between_reads_and_leaves_nothing(tmp_path: Path, server: Server) -> None:
    server.pages["/long"] = Page(b"x" * 200, trickle=0.02)  # 4 s in all
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()
    with pytest.raises(FetchError, match=f"^{server.url('/long')}: cancelled"):
        fetch(server.url("/long"), tmp_path / "long", cancel=cancel)
    assert time.monotonic() - started < 2.0 and not list(tmp_path.iterdir())


def test_a_place_that_cannot_be_written_names_the_url(tmp_path: Path, server: Server) -> None:
    server.pages["/files/data.txt"] = Page(DATA)
    (tmp_path / "taken").write_text("a file where the folder would be")
    with pytest.raises(FetchError, match=f"^{server.url('/files/data.txt')}: cannot write into"):
        fetch(server.url("/files/data.txt"), tmp_path / "taken" / "data.txt")
    (tmp_path / "dir" / "data.txt").mkdir(parents=True)  # a folder where the file would be
    with pytest.raises(FetchError, match=f"^{server.url('/files/data.txt')}: cannot write"):
        fetch(server.url("/files/data.txt"), tmp_path / "dir" / "data.txt")
    assert [p.name for p in (tmp_path / "dir").iterdir()] == ["data.txt"]


def test_only_http_urls_are_fetched_and_redirects_stay_http(tmp_path: Path, server: Server) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("host file")
    for url in (secret.as_uri(), "ftp://127.0.0.1/x", "https://drive.google.com/uc?id=1&export=download"):
        with pytest.raises(FetchError, match="only http and https|Google Drive"):
            fetch(url, tmp_path / "out" / "x")
    server.pages["/to-file"] = Page(status=302, location=secret.as_uri())
    server.pages["/to-ftp"] = Page(status=302, location="ftp://127.0.0.1:1/x")
    with pytest.raises(FetchError, match=f"^{server.url('/to-file')}: HTTP 302 .*file:.* is not allowed"):
        fetch(server.url("/to-file"), tmp_path / "out" / "x")
    with pytest.raises(FetchError, match=f"^{server.url('/to-ftp')}: redirected to ftp:.*not http or https"):
        fetch(server.url("/to-ftp"), tmp_path / "out" / "x")
    assert not list((tmp_path / "out").iterdir())
    server.pages["/moved"] = Page(status=301, location=server.url("/files/data.txt"))
    server.pages["/files/data.txt"] = Page(DATA)
    assert fetch(server.url("/moved"), tmp_path / "out" / "x").read_bytes() == DATA


def test_a_url_vdesk_does_not_fetch_is_a_missing_file_that_says_why(tmp_path: Path, server: Server) -> None:
    tree = task_tree(tmp_path / "tree", server)
    file = tree / "os" / f"{TASK_ID}.json"
    data = json.loads(file.read_text())
    data["config"][0]["parameters"]["files"][0]["url"] = "file:///etc/passwd"
    file.write_text(json.dumps(data))
    (task,) = load_tasks(tree, fetch=FetchSettings())
    reason = "task file missing: file:///etc/passwd (not fetched: only http and https URLs are fetched)"
    assert reason in (task.skip or "")


def test_offline_fetches_nothing_and_skips(tmp_path: Path, server: Server, capsys: Any) -> None:
    tree, out = task_tree(tmp_path / "tree", server), tmp_path / "run"
    assert invoke(["eval", str(tree), "--offline", "--out", str(out)]) == 0
    (episode,) = json.loads((out / "results.json").read_text())["episodes"]
    assert episode["status"] == "skipped" and "task file missing: " + server.url("/files/data.txt") in episode["error"]
    assert server.requests == []


def test_tasks_check_says_what_it_would_fetch_and_fetches_nothing(tmp_path: Path, server: Server,
                                                                   capsys: Any, cache_home: Path) -> None:
    tree = task_tree(tmp_path / "tree", server)
    assert invoke(["tasks", "check", str(tree)]) == 0
    said = capsys.readouterr().out
    assert f"{server.url('/files/data.txt')} (will fetch)" in said and "will fetch 2 files into" in said
    assert invoke(["tasks", "check", str(tree), "--offline"]) == 1
    assert "task file missing" in capsys.readouterr().out
    assert server.requests == [] and not cache_home.exists()


def test_a_fetch_that_fails_is_the_episodes_error_and_starts_no_desktop(tmp_path: Path, server: Server) -> None:
    (task,) = load_tasks(task_tree(tmp_path / "tree", server), fetch=FetchSettings())
    del server.pages["/files/gold.txt"]
    summary = run_suite([task], ScriptedAgent, out=tmp_path / "run", progress=lambda line: None)
    (outcome,) = summary.episodes
    assert outcome.status == "error"
    assert outcome.error == f"fetch failed: {server.url('/files/gold.txt')}: HTTP 404 Not Found"


class RecordingHost:
    """A desktop stand-in for a session's setup: its home, and the files put into it."""

    name = "recording"

    def __init__(self) -> None:
        self.put: dict[str, bytes] = {}

    def call(self, function: Any, *args: Any, timeout: float = 0.0) -> Any:
        if function is inside.home:
            return "/home/user"
        assert function is inside.put_file, function
        self.put[args[0]] = args[1]


def test_a_session_used_alone_fetches_before_its_download_step(tmp_path: Path, server: Server) -> None:
    (task,) = load_tasks(task_tree(tmp_path / "tree", server), fetch=FetchSettings())
    host = RecordingHost()
    session = OSWorldSession(host, spec_of(task), task.base_dir)  # type: ignore[arg-type]
    try:
        session.setup()
    finally:
        session.close()
    assert host.put == {"/home/user/data.txt": DATA}
    assert sorted(server.requests) == ["/files/data.txt", "/files/gold.txt"]


def test_a_proxy_task_is_skipped_naming_network_and_runs_with_it(tmp_path: Path, server: Server) -> None:
    tree = task_tree(tmp_path / "tree", server, proxy=True)
    (task,) = load_tasks(tree, fetch=FetchSettings())
    assert "--network" in (task.skip or "") and task.desktop.network == "none"
    (granted,) = load_tasks(tree, fetch=FetchSettings(), network=True)
    assert granted.skip is None and granted.desktop.network == "bridge"


# -- on real desktops ----------------------------------------------------------------------
@pytest.mark.desktop
def test_the_fetched_file_reaches_the_desktop_and_is_judged(tmp_path: Path, server: Server, capsys: Any) -> None:
    tree, out = task_tree(tmp_path / "tree", server), tmp_path / "run"
    assert invoke(["eval", str(tree), "--out", str(out)]) == 0
    assert f"fetched {server.url('/files/data.txt')}: {len(DATA)} bytes" in capsys.readouterr().err
    (episode,) = json.loads((out / "results.json").read_text())["episodes"]
    assert episode["success"], episode  # the desktop's ~/data.txt equals the gold file: it got there
    assert sorted(server.requests) == ["/files/data.txt", "/files/gold.txt"]
    assert invoke(["eval", str(tree), "--out", str(out), "--replace"]) == 0
    assert len(server.requests) == 2  # the second run fetched nothing


def bridge_gateway() -> str:
    """The host's address on Docker's bridge network, where its desktops reach this machine."""
    import docker

    config = docker.from_env().networks.get("bridge").attrs["IPAM"]["Config"][0]
    return config.get("Gateway") or str(next(ipaddress.ip_network(config["Subnet"]).hosts()))


@pytest.mark.desktop
def test_network_grants_a_proxy_task_the_bridge_and_it_reaches_a_server(tmp_path: Path, capsys: Any) -> None:
    for web in serve(bridge_gateway()):  # a server the desktop can reach; not the internet
        web.pages["/ping"] = Page(b"pong")
        data = {"id": "web-task", "instruction": "Nothing to do.", "config": [], "proxy": True,
                "evaluator": {"func": "exact_match",
                              "result": {"type": "vm_command_line",
                                         "command": ["curl", "-s", "-m", "20", web.url("/ping")]},
                              "expected": {"type": "rule", "rules": {"expected": "pong"}}},
                "solution": {"pyautogui": ["WAIT"]}}
        tree, out = tmp_path / "tree", tmp_path / "run"
        (tree / "os").mkdir(parents=True)
        (tree / "os" / "web-task.json").write_text(json.dumps(data))
        assert invoke(["eval", str(tree), "--out", str(out)]) == 0  # without --network: skipped
        (episode,) = json.loads((out / "results.json").read_text())["episodes"]
        assert episode["status"] == "skipped" and "--network" in episode["error"] and web.requests == []
        capsys.readouterr()
        assert invoke(["eval", str(tree), "--out", str(out), "--replace", "--network"]) == 0
        assert "desktops granted the network: bridge" in capsys.readouterr().out
        results = json.loads((out / "results.json").read_text())
        assert results["network"] == "bridge" and results["episodes"][0]["success"], results
        assert web.requests == ["/ping"]

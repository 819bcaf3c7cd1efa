"""`vdesk mcp --transport http`, driven by the MCP SDK's client over streamable HTTP: the bearer
token, a desktop per session (or one shared), the limit, the session's end, and viewer links."""

from __future__ import annotations

import base64
import io
import json
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest
from PIL import Image

from tests.desktop.probe import EventProbe, buttons
from tests.protocols.conftest import TOKEN, container_exists, http_server, structured, wait_gone
from vdesk.desktop import Desktop

ROOT = Path(__file__).resolve().parents[2]
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}}}


def post(url: str, token: str | None) -> int:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=json.dumps(INITIALIZE).encode(), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_requests_without_the_token_are_refused_with_401():
    with http_server() as server:
        assert post(server.url, None) == 401
        assert post(server.url, "not-the-token-" + "y" * 20) == 401
        assert post(server.url, TOKEN) == 200


def test_a_generated_token_is_printed_on_stderr_and_is_the_one_wanted():
    import subprocess

    from tests.protocols.conftest import VDESK

    process = subprocess.Popen([VDESK, "mcp", "--transport", "http", "--port", "0"], stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = process.stderr.readline().split("serving MCP at ")[1].strip()  # type: ignore[union-attr]
        token = process.stderr.readline().split("bearer token: ")[1].strip()  # type: ignore[union-attr]
        assert len(token) >= 32 and post(url, token) == 200 and post(url, None) == 401
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.parametrize("given", ["--token", "VDESK_MCP_TOKEN"])
def test_a_given_token_is_not_printed_and_the_line_says_where_it_came_from(given):
    import os

    from tests.protocols.conftest import VDESK

    arguments, environment = ([], {**os.environ, "VDESK_MCP_TOKEN": TOKEN}) if given == "VDESK_MCP_TOKEN" else \
        (["--token", TOKEN], {key: value for key, value in os.environ.items() if key != "VDESK_MCP_TOKEN"})
    process = subprocess.Popen([VDESK, "mcp", "--transport", "http", "--port", "0", *arguments], env=environment,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = process.stderr.readline().split("serving MCP at ")[1].strip()  # type: ignore[union-attr]
        line = process.stderr.readline().strip()  # type: ignore[union-attr]
        assert line == f"vdesk mcp: bearer token: as given by {given}" and post(url, TOKEN) == 200
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_screenshot_click_and_type_over_http():
    with Desktop.up(size=(640, 480)) as desktop, EventProbe(desktop) as probe, http_server("--attach", desktop.name) as server:
        async def main():
            async with server.client() as client:
                shot = await client.call_tool("screenshot", {"height": 240})
                await client.call_tool("click", {"x": 50, "y": 60})
                typed = await client.call_tool("type", {"text": "ok"})
                return shot, typed

        shot, typed = anyio.run(main)
        events = probe.events()
    assert Image.open(io.BytesIO(base64.b64decode(shot.content[0].data))).size == (320, 240)
    assert buttons(events) == [("button_press", 1, 101, 121), ("button_release", 1, 101, 121)]
    assert not typed.is_error and [e.keysym for e in events if e.kind == "key_press"] == ["o", "k"]


def test_each_session_has_its_own_desktop_which_goes_when_the_client_closes_the_session():
    with http_server("--size", "640x480") as server:
        async def main():
            async with server.client() as first, server.client() as second:
                one = structured(await first.call_tool("screen_size", {}))["desktop"]
                two = structured(await second.call_tool("screen_size", {}))["desktop"]
                again = structured(await first.call_tool("screen_size", {}))["desktop"]
                assert container_exists(one) and container_exists(two)
            return one, two, again

        one, two, again = anyio.run(main)
        assert one != two and again == one
        assert wait_gone(one) and wait_gone(two)  # while the server runs on


def test_share_gives_every_session_one_desktop_and_max_desktops_is_a_clear_error():
    with http_server("--size", "640x480", "--share") as server:
        async def shared():
            async with server.client() as first, server.client() as second:
                return [structured(await c.call_tool("screen_size", {}))["desktop"] for c in (first, second)]

        one, two = anyio.run(shared)
        assert one == two
    assert wait_gone(one)
    with http_server("--size", "640x480", "--max-desktops", "1") as server:
        async def limited():
            async with server.client() as first, server.client() as second:
                await first.call_tool("screen_size", {})
                return await second.call_tool("screen_size", {})

        refused = anyio.run(limited)
    assert refused.is_error and "--max-desktops 1" in refused.content[0].text


HOLDING_CLIENT = """
import anyio, json, sys
from tests.protocols.conftest import HttpServer
async def main():
    async with HttpServer(None, sys.argv[1], sys.argv[2]).client() as client:
        result = await client.call_tool("screen_size", {})
        print(json.dumps(result.structured_content), flush=True)
        await anyio.sleep(600)
anyio.run(main)
"""


@contextmanager
def holding_client(server):  # type: ignore[no-untyped-def]
    """A client in a process of its own (so it can die by SIGKILL) holding a session open; yields
    it and its desktop's name."""
    client = subprocess.Popen([sys.executable, "-c", HOLDING_CLIENT, server.url, server.token],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        yield client, json.loads(client.stdout.readline())["desktop"]  # type: ignore[union-attr]
    finally:
        client.kill()
        client.wait()


def test_a_killed_clients_session_goes_idle_and_loses_its_desktop():
    with http_server("--size", "640x480", "--idle-timeout", "4") as server, holding_client(server) as (client, name):
        assert container_exists(name)
        client.kill()  # its requests end with it: nothing of the session is in flight any more
        assert wait_gone(name, timeout=4 + 60)
        assert server.process.poll() is None


def test_a_killed_server_takes_its_desktops_along():
    with http_server("--size", "640x480") as server, holding_client(server) as (client, name):
        server.process.send_signal(signal.SIGKILL)
        assert wait_gone(name)


def test_viewer_link_hands_out_a_one_time_link_on_the_same_port():
    with http_server("--size", "640x480") as server:
        async def main():
            async with server.client() as client:
                return structured(await client.call_tool("viewer_link", {"read_only": True, "expires_in": 60}))

        link = anyio.run(main)
        assert link["url"].startswith(server.url.removesuffix("/mcp") + "/view/") and link["read_only"]
        import http.client
        from urllib.parse import urlsplit

        parts = urlsplit(link["url"])
        for expected in (303, 403):  # once, then refused
            connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
            connection.request("GET", parts.path)
            assert connection.getresponse().status == expected


def test_a_session_closed_while_its_stream_is_open_and_then_ctrl_c_end_without_a_traceback():
    # The client's DELETE ends the session while its GET stream is still in flight; that
    # request's end must find the session's bookkeeping gone, not raise in the ASGI app.
    with http_server() as server:
        async def main():
            for _ in range(3):
                async with server.client() as client:
                    assert not (await client.call_tool("wait", {"seconds": 0})).is_error

        anyio.run(main)
        server.process.send_signal(signal.SIGINT)
        _, stderr = server.process.communicate(timeout=60)
    assert "Traceback" not in stderr and "KeyError" not in stderr, stderr

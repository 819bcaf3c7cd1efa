"""`vdesk mcp`'s pure parts: its options are checked before anything starts, a screenshot scaled
by one side keeps the aspect ratio, the bearer token is compared whole, a session's bookkeeping
survives its requests ending after it, and bad tool arguments are refused in one line (by the
real server, in memory, before any desktop is reached)."""

from __future__ import annotations

import anyio
import pytest

from mcp import Client

from vdesk.errors import InvalidArgument
from vdesk.mcp.http import SessionWatch, _StaticToken
from vdesk.mcp.pool import ServerOptions
from vdesk.mcp.tools import _scaled, build_server


@pytest.mark.parametrize("fields, named", [({"max_desktops": 0}, "--max-desktops"),
                                           ({"idle_timeout": 0}, "--idle-timeout"),
                                           ({"idle_timeout": float("inf")}, "--idle-timeout")])
def test_bad_options_name_themselves(fields, named):
    with pytest.raises(InvalidArgument, match=named):
        ServerOptions(**fields)


def test_one_side_given_keeps_the_aspect_ratio():
    assert _scaled((1280, 800), None, None) is None
    assert _scaled((1280, 800), 640, None) == (640, 400)
    assert _scaled((1280, 800), None, 200) == (320, 200)
    assert _scaled((1280, 800), 100, 100) == (100, 100)


def test_only_the_whole_token_passes():
    verifier = _StaticToken("s" * 32)
    assert anyio.run(verifier.verify_token, "s" * 32) is not None
    for wrong in ("", "s" * 31, "s" * 33, "t" * 32):
        assert anyio.run(verifier.verify_token, wrong) is None


def test_a_request_that_ends_after_its_session_ended_counts_nothing():
    released = []
    watch = SessionWatch(lambda app_scope, receive, send: None, released.append, idle_timeout=60.0)  # type: ignore[arg-type,return-value]
    try:
        watch._enter("s")
        watch._enter("s")
        watch._leave("s")
        watch._end("s")  # the DELETE, while the other request (the GET stream) is still open
        watch._leave("s")  # that request ends after: nothing to count, nothing raised
        assert released == ["s"] and "s" not in watch._in_flight and "s" not in watch._last_seen
    finally:
        watch.stop()


def _argument_error(tool: str, arguments: dict) -> str:
    async def call() -> str:
        async with Client(build_server(ServerOptions()).mcp) as client:
            result = await client.call_tool(tool, arguments)
        assert result.is_error
        return result.content[0].text

    return anyio.run(call)


@pytest.mark.parametrize("tool, arguments, expected", [
    ("click", {"x": "abc", "y": 1},
     "Error executing tool click: argument x: Input should be a valid number, unable to parse string as a number (got 'abc')"),
    ("key", {}, "Error executing tool key: argument key: required"),
    ("scroll", {"x": 1, "y": 2, "direction": "sideways", "amount": 0},
     "Error executing tool scroll: argument direction: Input should be 'up', 'down', 'left' or 'right' (got 'sideways'); "
     "argument amount: Input should be greater than or equal to 1 (got 0)"),
    ("click", {"x": 1, "y": 2, "buton": "right"},
     "Error executing tool click: argument buton: unknown (the arguments are x, y, button)"),
])
def test_a_bad_argument_is_one_line_naming_it_and_what_is_wrong(tool, arguments, expected):
    # Refused before any desktop is reached (the server here has none and starts none).
    assert _argument_error(tool, arguments) == expected


def test_the_key_tool_publishes_key_and_still_reads_keys():
    async def schema() -> dict:
        async with Client(build_server(ServerOptions()).mcp) as client:
            return next(t.input_schema for t in (await client.list_tools()).tools if t.name == "key")

    published = anyio.run(schema)
    assert published["required"] == ["key"] and set(published["properties"]) == {"key"}
    assert _argument_error("key", {"keys": ""}) == "Error executing tool key: argument keys: String should have at least 1 character (got '')"

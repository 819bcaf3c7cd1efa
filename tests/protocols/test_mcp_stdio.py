"""`vdesk mcp` over stdio, driven by the MCP SDK's client: the tools a model sees, screenshots,
typing into a real program, clicks that arrive as X events, bad arguments, and the desktop's
lifetime tied to the server's."""

from __future__ import annotations

import base64
import io
import json
import os
import signal
import sys

import anyio
import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from mcp import Client
from PIL import Image

from tests.desktop.probe import EventProbe, buttons
from tests.protocols.conftest import container_exists, stdio, structured, wait_gone
from vdesk.desktop import Desktop

TOOLS = {"screenshot", "screen_size", "cursor_position", "wait", "click", "double_click", "right_click", "move",
         "drag", "scroll", "type", "key", "execute", "read_file", "write_file", "clipboard", "find_text"}
TREE_TOOLS = {"accessibility_tree", "marks", "click_element"}  # desktops with an accessibility tree only


def run(main):  # type: ignore[no-untyped-def]
    return anyio.run(main)


def test_the_tools_have_schemas_and_descriptions_and_run_command_needs_allow_commands():
    async def main():
        async with Client(stdio()) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        async with Client(stdio("--allow-commands")) as client:
            allowed = {tool.name for tool in (await client.list_tools()).tools}
        return listed, allowed

    listed, allowed = run(main)
    assert set(listed) == TOOLS and allowed == TOOLS | {"run_command"}
    for tool in listed.values():
        assert tool.description and tool.input_schema["type"] == "object"
        assert tool.input_schema["additionalProperties"] is False, tool.name
    click = listed["click"].input_schema
    assert set(click["required"]) == {"x", "y"} and click["properties"]["button"]["enum"] == ["left", "right", "middle"]
    assert "pixels of the last screenshot" in click["properties"]["x"]["description"]


def test_the_tree_tools_are_listed_only_for_desktops_whose_image_has_an_accessibility_tree():
    """The lean image has no accessibility bus: its server lists no tool that needs one. The
    image decides, for the desktops a server starts and for one it attaches to alike."""
    with Desktop.up(size=(640, 480)) as lean:
        async def main():
            listed = {}
            for args in [(), ("--apps",), ("--attach", lean.name)]:
                async with Client(stdio(*args)) as client:
                    listed[args] = {tool.name for tool in (await client.list_tools()).tools}
            return listed

        listed = run(main)
    assert listed[()] == TOOLS and listed[("--attach", lean.name)] == TOOLS  # find_text reads frames (OCR): any image
    assert listed[("--apps",)] == TOOLS | TREE_TOOLS


def test_every_tool_refuses_an_argument_it_does_not_have_naming_it_before_anything_runs():
    async def main():
        async with Client(stdio("--apps", "--allow-commands")) as client:  # refused before a desktop starts
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            return listed, {name: await client.call_tool(name, {"nonsense": 1}) for name in listed}

    listed, answers = run(main)
    assert set(answers) == TOOLS | TREE_TOOLS | {"run_command"}
    for name, result in answers.items():
        assert result.is_error, name
        text = result.content[0].text
        assert text.startswith(f"Error executing tool {name}: ") and "argument nonsense: unknown (" in text, text
        assert all(known in text for known in listed[name].input_schema["properties"]), text
    assert "argument nonsense: unknown (the arguments are argv, wait, timeout)" in answers["run_command"].content[0].text
    assert "argument nonsense: unknown (the tool takes none)" in answers["screen_size"].content[0].text


def test_run_command_with_an_unknown_argument_runs_nothing():
    async def main():
        async with Client(stdio("--size", "640x480", "--allow-commands")) as client:
            refused = await client.call_tool("run_command", {"argv": ["touch", "/tmp/ran"], "background": True})
            ran = await client.call_tool("run_command", {"argv": ["test", "-e", "/tmp/ran"]})
            return refused, structured(ran)

    refused, ran = run(main)
    assert refused.is_error and "argument background: unknown" in refused.content[0].text, refused.content
    assert ran["exit_code"] == 1  # the command never ran


def test_run_command_with_wait_false_starts_a_program_that_keeps_running():
    async def main():
        async with Client(stdio("--size", "640x480", "--allow-commands")) as client:
            started = await client.call_tool("run_command", {"argv": ["xterm", "-title", "Kept"], "wait": False})
            shown = await client.call_tool("run_command", {"argv": ["xdotool", "search", "--sync", "--onlyvisible",
                                                                    "--name", "^Kept$"], "timeout": 120})
            still = await client.call_tool("run_command", {"argv": ["pgrep", "-x", "xterm"]})
            both = await client.call_tool("run_command", {"argv": ["xterm"], "wait": False, "timeout": 5})
            return started, structured(shown), structured(still), both

    started, shown, still, both = run(main)
    assert structured(started) == {"running": True, "exit_code": None, "stdout": "", "stderr": "",
                                   "stdout_bytes": 0, "stderr_bytes": 0, "truncated": False}
    assert shown["exit_code"] == 0 and shown["running"] is False  # its window came up after the call returned
    assert still["exit_code"] == 0  # and it runs on
    assert both.is_error and "timeout: only with wait true" in both.content[0].text


def test_a_waited_program_that_outlives_its_timeout_is_killed_and_the_error_says_how_to_keep_one():
    async def main():
        async with Client(stdio("--size", "640x480", "--allow-commands")) as client:
            waited = await client.call_tool("run_command", {"argv": ["xterm", "-title", "Waited"], "timeout": 3})
            left = await client.call_tool("run_command", {"argv": ["pgrep", "-x", "xterm"]})
            return waited, structured(left)

    waited, left = run(main)
    assert waited.is_error and "did not finish within 3 s (it was killed)" in waited.content[0].text
    assert "is started with wait false" in waited.content[0].text, waited.content
    assert left["exit_code"] == 1


def test_a_screenshot_decodes_at_the_size_asked_and_clicks_map_back_from_it():
    with Desktop.up(size=(800, 600)) as desktop, EventProbe(desktop) as probe:
        async def main():
            async with Client(stdio("--attach", desktop.name)) as client:
                full = await client.call_tool("screenshot", {})
                small = await client.call_tool("screenshot", {"width": 400, "format": "jpeg"})
                clicked = await client.call_tool("click", {"x": 100, "y": 50})  # in the 400x300 image
                size = structured(await client.call_tool("screen_size", {}))
                return full, small, clicked, size

        full, small, clicked, size = run(main)
        events = probe.events()
        alive = desktop.is_alive()  # an attached desktop is left running
    image = full.content[0]
    assert image.type == "image" and image.mime_type == "image/png"
    assert Image.open(io.BytesIO(base64.b64decode(image.data))).size == (800, 600)
    assert small.content[0].mime_type == "image/jpeg"
    assert Image.open(io.BytesIO(base64.b64decode(small.content[0].data))).size == (400, 300)
    assert not clicked.is_error
    # pixel (100, 50) of the half-size image is the centre of its 2x2 cell on the screen
    assert buttons(events) == [("button_press", 1, 201, 101), ("button_release", 1, 201, 101)]
    assert size == {"width": 800, "height": 600, "screenshot_width": 400, "screenshot_height": 300,
                    "desktop": desktop.name}
    assert alive


def test_text_typed_into_xterm_is_what_the_program_wrote():
    text = "héllo <wörld> & 'quotes' 日本"

    async def main():
        async with Client(stdio("--size", "800x600", "--allow-commands")) as client:
            await client.call_tool("run_command", {"argv": ["sh", "-c", "xterm -geometry 80x24+0+0 -title T "
                                                            "-e sh -c 'cat > ~/typed.txt' &"]})
            shown = await client.call_tool("run_command", {"argv": ["xdotool", "search", "--sync", "--onlyvisible",
                                                                    "--name", "^T$"], "timeout": 120})
            assert structured(shown)["exit_code"] == 0
            assert not (await client.call_tool("click", {"x": 100, "y": 100})).is_error  # as an agent would: focus it
            assert not (await client.call_tool("type", {"text": text + "\n"})).is_error
            assert not (await client.call_tool("key", {"key": "ctrl+d"})).is_error
            for _ in range(300):  # the program writes it when the line ends
                read = await client.call_tool("read_file", {"path": "~/typed.txt"})
                if not read.is_error and read.structured_content["content"]:
                    return read.structured_content["content"]
                await anyio.sleep(0.2)

    assert run(main) == text + "\n"


@pytest.mark.parametrize("method", ["keys", "paste"])
def test_the_type_tools_newline_arrives_as_the_return_key(method):
    """A typed "\\n" submits: it must be Return (0xff0d), which every toolkit takes as Enter."""
    with Desktop.up(size=(800, 600)) as desktop, EventProbe(desktop) as probe:
        async def main():
            async with Client(stdio("--attach", desktop.name)) as client:
                return await client.call_tool("type", {"text": "ab\tc\n" if method == "keys" else "ab\n",
                                                       "method": method})

        typed = run(main)
        presses = [event.keysym for event in probe.events() if event.kind == "key_press"]
    assert not typed.is_error, typed.content
    assert presses == (["a", "b", "Tab", "c", "Return"] if method == "keys" else ["Shift_L", "Insert", "Return"])


def test_files_and_clipboard_round_trip():
    async def main():
        async with Client(stdio("--size", "640x480")) as client:
            await client.call_tool("write_file", {"path": "~/a.bin", "content": base64.b64encode(b"\0\xff").decode(),
                                                  "encoding": "base64"})
            read = structured(await client.call_tool("read_file", {"path": "~/a.bin", "encoding": "base64"}))
            as_text = await client.call_tool("read_file", {"path": "~/a.bin"})
            structured(await client.call_tool("clipboard", {"text": "copied ✓"}))
            clip = structured(await client.call_tool("clipboard", {}))
            return read, as_text, clip

    read, as_text, clip = run(main)
    assert base64.b64decode(read["content"]) == b"\0\xff" and read["size"] == 2
    assert as_text.is_error and "base64" in as_text.content[0].text
    assert clip == {"text": "copied ✓"}


def test_execute_runs_a_base_action_batch_and_refuses_a_bad_one_whole():
    with Desktop.up(size=(640, 480)) as desktop, EventProbe(desktop) as probe:
        async def main():
            async with Client(stdio("--attach", desktop.name)) as client:
                good = await client.call_tool("execute", {"actions": [
                    {"type": "click", "inputs": {"point": {"raw": {"x": 10, "y": 20}}}},
                    {"type": "right_click", "inputs": {"point": [30, 40]}}]})
                bad = await client.call_tool("execute", {"actions": [
                    {"type": "click", "inputs": {"point": [10, 20]}},
                    {"type": "click", "inputs": {"point": [5000, 20]}}]})
                return good, bad

        good, bad = run(main)
        events = probe.events()
    assert structured(good)["executed"] == 2
    assert bad.is_error and "action 1" in bad.content[0].text
    assert buttons(events) == [("button_press", 1, 10, 20), ("button_release", 1, 10, 20),
                               ("button_press", 3, 30, 40), ("button_release", 3, 30, 40)]


ARGUMENT = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=True),
                     st.text(max_size=20), st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(), max_size=2))
FIELDS = ["x", "y", "button", "text", "key", "keys", "seconds", "width", "height", "format", "direction", "amount",
          "path", "content", "encoding", "actions", "start_x", "end_y", "selection", "method"]


def test_fuzzed_arguments_come_back_as_tool_errors_and_the_server_keeps_serving(tmp_path):
    with Desktop.up(size=(640, 480)) as desktop:
        async def main():
            async with Client(stdio("--attach", desktop.name)) as client:
                listed = {t.name: t for t in (await client.list_tools()).tools if t.name != "wait"}
                tools = sorted(listed)
                outcomes = []

                @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
                @given(tool=st.sampled_from(tools), arguments=st.dictionaries(st.sampled_from(FIELDS), ARGUMENT, max_size=4))
                def collect(tool, arguments):
                    outcomes.append((tool, arguments))

                collect()
                answers = []
                for tool, arguments in outcomes:
                    answers.append((tool, arguments, await client.call_tool(tool, arguments)))
                alive = await client.call_tool("screen_size", {})
                return answers, alive, listed

        answers, alive, listed = run(main)
    assert not alive.is_error
    errors = [result for _, _, result in answers if result.is_error]
    assert errors and len(errors) < len(answers), "the fuzz reached both outcomes"
    for tool, arguments, result in answers:
        if result.is_error:  # an error is one line that names what was wrong, never a crash's dump
            text = result.content[0].text
            assert text.startswith(f"Error executing tool {tool}: ") and len(text) > len(f"Error executing tool {tool}: "), (tool, arguments, text)
            assert "Traceback" not in text and "\n" not in text.strip() and "errors.pydantic.dev" not in text, (tool, arguments, text)
        else:  # a success is what the tool says it returns
            schema = listed[tool].output_schema
            if schema is not None:
                assert result.structured_content is not None, (tool, arguments, result)
                jsonschema.validate(result.structured_content, schema)
            assert result.content, (tool, arguments, result)


def test_a_desktop_that_died_is_an_error_saying_so_and_the_next_call_starts_a_fresh_one():
    async def main():
        async with Client(stdio("--size", "640x480")) as client:
            first = structured(await client.call_tool("screen_size", {}))["desktop"]
            Desktop.attach(first).down()
            died = await client.call_tool("screenshot", {})
            second = structured(await client.call_tool("screen_size", {}))["desktop"]
            return first, died, second

    first, died, second = run(main)
    assert died.is_error and "gone" in died.content[0].text and "fresh desktop" in died.content[0].text
    assert second != first and not container_exists(first)


@pytest.mark.parametrize("ending", ["client closes", "client killed", "server killed"])
def test_the_desktop_goes_when_the_session_ends(ending):
    import subprocess
    import sys
    import textwrap

    # A client process of its own, so that it can die by SIGKILL.
    script = textwrap.dedent(f"""
        import anyio, json, sys, time
        from mcp import Client
        from tests.protocols.conftest import stdio
        async def main():
            async with Client(stdio("--size", "640x480")) as client:
                result = await client.call_tool("screen_size", {{}})
                print(json.dumps({{"desktop": result.structured_content["desktop"]}}), flush=True)
                if {ending != "client closes"!r}:
                    await anyio.sleep(600)
        anyio.run(main)
    """)
    client = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                              cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    try:
        name = json.loads(client.stdout.readline())["desktop"]  # type: ignore[union-attr]
        assert container_exists(name)
        if ending == "client killed":
            client.kill()
        elif ending == "server killed":
            children = open(f"/proc/{client.pid}/task/{client.pid}/children").read().split()
            server = next(int(pid) for pid in children if b"mcp" in open(f"/proc/{pid}/cmdline", "rb").read())
            os.kill(server, signal.SIGKILL)
        assert wait_gone(name), f"{name} outlived the session ({ending})"
    finally:
        client.kill()
        client.wait()


def test_the_documented_client_configuration_starts_a_server_the_client_can_use():
    import re
    from pathlib import Path

    from mcp import StdioServerParameters

    page = (Path(__file__).resolve().parents[2] / "docs" / "protocols.md").read_text()
    configs = [json.loads(body) for body in re.findall(r"^```json\n(.*?)^```", page, re.M | re.S) if "mcpServers" in body]
    local = next(c["mcpServers"]["vdesk"] for c in configs if "command" in c["mcpServers"]["vdesk"])
    remote = next(c["mcpServers"]["vdesk"] for c in configs if "url" in c["mcpServers"]["vdesk"])
    assert remote["url"].startswith("http://127.0.0.1:") and remote["headers"]["Authorization"].startswith("Bearer ")
    command = str(Path(sys.executable).with_name(local["command"]))

    async def main():
        async with Client(StdioServerParameters(command=command, args=local["args"], env=dict(os.environ))) as client:
            return structured(await client.call_tool("screen_size", {}))

    assert run(main)["width"] == 1280

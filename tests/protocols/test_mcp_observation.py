"""`vdesk mcp`'s observation tools on a real apps desktop, through the SDK's client: the
accessibility tree names what is on screen, click_element acts on an element found by role and
name, find_text reads typed text back from the screen, marks number the elements on a screenshot."""

from __future__ import annotations

import base64
import io
import time

import anyio
from mcp import Client
from PIL import Image

from tests.protocols.conftest import stdio, structured
from vdesk.desktop import Desktop


async def until(client, tool, arguments, done, timeout: float = 30.0):  # type: ignore[no-untyped-def]
    """Call ``tool`` until ``done(result)`` or the deadline; the last result either way."""
    deadline = time.monotonic() + timeout
    while not done(result := await client.call_tool(tool, arguments)) and time.monotonic() < deadline:
        await anyio.sleep(0.2)
    return result


def test_the_tree_an_element_click_text_on_screen_and_marks_of_a_real_program():
    with Desktop.up(size=(1280, 800), image="apps", timeout=120) as desktop:
        desktop.programs.run(["mousepad"])
        desktop.windows.wait_for("Mousepad", timeout=60)
        deadline = time.monotonic() + 60  # mousepad joins the accessibility bus after its window shows
        while not any(app.name == "mousepad" for app in desktop.elements.tree().applications):
            assert time.monotonic() < deadline, "mousepad never joined the accessibility bus"
            time.sleep(0.5)

        async def main():
            async with Client(stdio("--attach", desktop.name)) as client:
                table = structured(await client.call_tool("accessibility_tree", {}))
                xml = structured(await client.call_tool("accessibility_tree", {"format": "xml"}))
                await client.call_tool("type", {"text": "Invoice 4711 paid"})
                # an action returns once the X server has it; the program draws it a moment later
                found = await until(client, "find_text", {"pattern": "Invoice 4711"},
                                    lambda r: not r.is_error and r.structured_content["result"])
                missing = await client.call_tool("click_element", {"role": "push button", "name": "No such button"})
                clicked = await client.call_tool("click_element", {"role": "menu", "name": "File"})
                after = structured(await until(client, "accessibility_tree", {},
                                               lambda r: "Save As" in structured(r)["text"]))
                marks = await client.call_tool("marks", {})
                bad = await client.call_tool("find_text", {"pattern": "(", "regex": True})
                return table, xml, found, missing, clicked, after, marks, bad

        table, xml, found, missing, clicked, after, marks, bad = anyio.run(main)
    assert table["format"] == "table" and "menu\tFile" in table["text"], table["text"][:2000]
    assert xml["text"].startswith("<desktop-frame") and "mousepad" in xml["text"]
    boxes = found.structured_content["result"]
    assert not found.is_error and [box["text"] for box in boxes] == ["Invoice 4711"], boxes
    assert missing.is_error and "No such button" in missing.content[0].text
    assert not clicked.is_error, clicked.content
    assert "Save As" in after["text"], "the File menu did not open: " + after["text"][:2000]
    image, listed = marks.content
    assert image.type == "image" and Image.open(io.BytesIO(base64.b64decode(image.data))).size == (1280, 800)
    assert listed.type == "text" and listed.text.startswith("index\ttag\tname")
    assert bad.is_error and "pattern" in bad.content[0].text

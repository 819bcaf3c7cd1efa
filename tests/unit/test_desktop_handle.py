"""The desktop is a thin handle over its parts: each thing is done one way, on its part.

A Desktop over nothing (no engine, no container) is built here: making one opens no connection,
so its shape can be read without Docker.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from vdesk.coords import Screen
from vdesk.desktop import Desktop
from vdesk.elements import DesktopElements
from vdesk.errors import DesktopGone
from vdesk.input import DesktopInput
from vdesk.programs import DesktopPrograms
from vdesk.screen import DesktopScreen
from vdesk.text import DesktopText
from vdesk.vnc import DesktopVnc

HANDLE = {"up", "attach", "checkpoint", "fork", "restore", "remove_checkpoint", "close", "down", "browser", "info", "is_alive"}
ATTRIBUTES = {"client", "container", "name", "id", "channel", "clock", "screen", "input", "text", "elements",
              "programs", "files", "clipboard", "windows", "vnc"}
# What the handle offered before it was made of parts, and where each one is now.
MOVED = {"screenshot": "screen.shot", "wait_until_settled": "screen.settle", "settle": "screen.settle",
         "wait_for_change": "screen.wait_for_change", "record": "screen.record", "to_image": "screen.to_image",
         "frames": "screen.frames", "execute": "input.execute", "receipt": "input.receipt",
         "read_text": "text.read", "find_text": "text.find", "wait_for_text": "text.wait_for",
         "accessibility_tree": "elements.tree", "find": "elements.find", "wait_for_element": "elements.wait_for",
         "marks": "elements.marks", "run": "programs.run", "wait_for_window_manager": "programs.wait_for_window_manager",
         "upload": "files.upload", "download": "files.download", "read_file": "files.read_file",
         "write_file": "files.write_file", "vnc_password": "vnc.password", "vnc_view_password": "vnc.view_password",
         "vnc_address": "vnc.address", "forward_vnc": "vnc.forward", "keymap": "input.keymap"}


def unconnected() -> Desktop:
    container = SimpleNamespace(name="unconnected", id="0" * 12, labels={})
    return Desktop(SimpleNamespace(api=None), container, Screen(1024, 768), owned=False)  # type: ignore[arg-type]


def test_the_handle_offers_its_lifecycle_and_its_parts_and_nothing_else() -> None:
    desktop = unconnected()
    public = {name for name in dir(desktop) if not name.startswith("_")}
    assert public == HANDLE | ATTRIBUTES


@pytest.mark.parametrize("old", sorted(MOVED))
def test_each_thing_is_done_on_its_part_only(old: str) -> None:
    desktop = unconnected()
    assert not hasattr(Desktop, old)
    part, name = MOVED[old].split(".")
    assert hasattr(type(getattr(desktop, part)), name) or name in vars(getattr(desktop, part))


def test_the_parts_are_of_their_kinds_and_share_the_screen_geometry() -> None:
    desktop = unconnected()
    kinds = {"screen": DesktopScreen, "input": DesktopInput, "text": DesktopText, "elements": DesktopElements,
             "programs": DesktopPrograms, "vnc": DesktopVnc}
    for part, kind in kinds.items():
        assert isinstance(getattr(desktop, part), kind), part
    assert desktop.screen.size == (1024, 768) and desktop.screen.geometry == Screen(1024, 768)


def test_a_closed_desktop_refuses_through_every_part_alike() -> None:
    desktop = unconnected()
    desktop.close()
    for call in (lambda: desktop.screen.shot(), lambda: desktop.files.read_file("x"),
                 lambda: desktop.clipboard.get(), lambda: desktop.programs.run(["true"], wait=True),
                 lambda: desktop.text.read(), lambda: desktop.browser, lambda: desktop.checkpoint()):
        with pytest.raises(DesktopGone, match="desktop unconnected is closed"):
            call()

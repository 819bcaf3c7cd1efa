"""Frames show what X draws: for every program of the apps image, the held connection's frame
and a new connection's frame equal the X server's own pixels (XGetImage on the root window),
after the program started and after typing into it. A frame that missed a drawing (a black
strip under a toolbar) fails this. Desktops started other ways, menus, dialogs and tooltips:
test_frames_every_start.py."""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest

from tests.apps.screens import assert_frames_show_what_x_holds
from vdesk.desktop import Desktop

pytestmark = pytest.mark.desktop


@dataclass(frozen=True)
class Program:
    argv: tuple[str, ...]
    title: str  # a part of its main window's title


PAGE = "data:text/html,<title>vdesk page</title><h1>A page</h1><input autofocus placeholder=here>"
PROGRAMS = {
    "calc": Program(("libreoffice", "--calc"), "LibreOffice Calc"),
    "writer": Program(("libreoffice", "--writer"), "LibreOffice Writer"),
    "impress": Program(("libreoffice", "--impress"), "LibreOffice Impress"),
    "chromium": Program(("chromium", PAGE), "vdesk page"),
    "gimp": Program(("gimp",), "GNU Image Manipulation Program"),
    "pcmanfm": Program(("pcmanfm",), "desk"),
    "mousepad": Program(("mousepad",), "Mousepad"),
    "evince": Program(("evince",), "Recent Documents"),
    "ristretto": Program(("ristretto",), "Image Viewer"),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_the_frame_equals_the_x_servers_pixels_after_start_and_after_typing(name):
    program = PROGRAMS[name]
    with Desktop.up(image="apps", timeout=120) as desktop:
        desktop.programs.run(list(program.argv))
        desktop.windows.wait_for(program.title, timeout=90)
        # The program starts as people expect: its window and nothing else (no tip of the day,
        # first-run wizard, keyring or recovery dialog).
        # A window the program shows while it starts (LibreOffice's "LibreOffice" frame) may
        # linger a moment; a dialog would stay.
        deadline = time.monotonic() + 20
        while True:
            titles = [w.title for w in desktop.windows.list() if w.title != "tint2"]
            if all(program.title in title for title in titles) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert all(program.title in title for title in titles), titles
        assert_frames_show_what_x_holds(desktop, f"{name} started")
        desktop.input.execute([{"type": "type", "inputs": {"content": "Hello 123 çé"}}])
        assert_frames_show_what_x_holds(desktop, f"{name} after typing")

"""Frames show what X draws on desktops started every way: by the command line (`vdesk up
--apps`, a separate process, so every connection to it opens later), by the API (`Desktop.up`,
whose connection opens at the start) and by compose. At each point — while Chromium starts and
after, its tooltip and context menu, while Writer starts and after, its File menu, its Save
dialog and the screen once that dialog is gone — the held connection's frame and a frame from
a connection opened just then equal the X server's pixels (XGetImage of the root) exactly.

A new connection is where frames went wrong: its first update paints the whole screen, and the
server sends single-colour areas first, wherever they are; a canvas made from the first
rectangle showed a black box where it belonged (:mod:`vdesk.frames`). `Desktop.up`'s own
connection meets a one-colour screen at the start, so tests that only held that one never saw it.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import docker
import pytest
from Xlib import X

from tests.apps.screens import assert_frames_show_what_x_holds
from vdesk import images
from vdesk.desktop import Desktop
from vdesk.xconn import open_display

pytestmark = pytest.mark.desktop

ROOT = Path(__file__).resolve().parents[2]
VDESK = str(Path(sys.executable).parent / "vdesk")
# A page whose whole viewport is one button with a tooltip: wherever the pointer rests on the
# page, the tooltip comes; a right click there opens the page's context menu.
PAGE = ("data:text/html,<title>vdesk page</title>"
        "<button title='a tooltip' style='position:fixed;inset:0;font-size:40px'>hover me</button>")
WRITER = "LibreOffice Writer"


# -- desktops, started three ways --------------------------------------------------------------
@contextmanager
def api_desktop(tmp_path: Path) -> Iterator[Desktop]:
    with Desktop.up(image="apps", timeout=120) as desktop:
        yield desktop


@contextmanager
def cli_desktop(tmp_path: Path) -> Iterator[Desktop]:
    name = f"vdesk-frames-{secrets.token_hex(3)}"
    subprocess.run([VDESK, "up", "--apps", "--name", name, "--ttl", "1800"], check=True, capture_output=True,
                   timeout=180)
    try:
        with Desktop.attach(name) as desktop:
            yield desktop
    finally:
        subprocess.run([VDESK, "down", name], capture_output=True, timeout=60)


@contextmanager
def compose_desktop(tmp_path: Path) -> Iterator[Desktop]:
    """compose.yaml's desktop, from the apps image (an override file names it)."""
    images.ensure(docker.from_env(), "apps")
    override = tmp_path / "apps.yaml"
    override.write_text(f"services:\n  desktop:\n    image: {images.resolve('apps')}\n")
    project = f"vdeskframes{secrets.token_hex(3)}"
    with socket.socket() as probe:  # compose publishes VNC on a port of its own
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "VDESK_VNC_PASSWORD": secrets.token_hex(4), "VDESK_VNC_PORT": str(port)}
    compose = ["docker-compose", "-p", project, "-f", str(ROOT / "compose.yaml"), "-f", str(override)]
    subprocess.run([*compose, "up", "-d", "--no-build"], env=env, check=True, capture_output=True, timeout=180)
    try:
        with Desktop.attach(f"{project}_desktop_1", timeout=60) as desktop:
            desktop.windows.wait_for("tint2", timeout=60)  # the session is up: the taskbar shows
            yield desktop
    finally:
        subprocess.run([*compose, "down", "-t", "2"], env=env, capture_output=True, timeout=120)


STARTS: dict[str, Callable[[Path], AbstractContextManager[Desktop]]] = {
    "cli": cli_desktop, "api": api_desktop, "compose": compose_desktop}


# -- what X has, and the comparison -------------------------------------------------------------
def popups(desktop: Desktop) -> set[int]:
    """The override-redirect windows on screen (menus, tooltips): the window manager lists none."""
    display, tunnel = open_display(desktop.client.api, desktop.id)
    try:
        shown = set()
        for child in display.screen().root.query_tree().children:
            attributes = child.get_attributes()
            if attributes.override_redirect and attributes.map_state == X.IsViewable:
                shown.add(child.id)
        return shown
    finally:
        display.close()
        tunnel.close()


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen within {timeout:g} s")
        time.sleep(0.2)


def act(desktop: Desktop, *actions: dict) -> None:
    result = desktop.input.execute(list(actions))
    assert result.status == "success", result.error_message


def with_a_new_popup(desktop: Desktop, action: dict, what: str) -> set[int]:
    """Do ``action`` and wait until a menu or tooltip window it opened is on screen: its ids."""
    before = popups(desktop)
    act(desktop, action)
    wait_for(lambda: bool(popups(desktop) - before), what)
    return popups(desktop) - before


# -- the test -------------------------------------------------------------------------------------
@pytest.mark.parametrize("start", list(STARTS))
def test_frames_equal_x_over_windows_menus_dialogs_and_tooltips(start, tmp_path):
    with STARTS[start](tmp_path) as desktop:
        assert_frames_show_what_x_holds(desktop, f"{start}: the desktop up")

        desktop.programs.run(["chromium", PAGE])
        browser = desktop.windows.wait_for("vdesk page", timeout=90)
        assert_frames_show_what_x_holds(desktop, f"{start}: chromium starting", quiet=0.1)
        assert_frames_show_what_x_holds(desktop, f"{start}: chromium started")
        middle = {"raw": {"x": browser.x + browser.width // 2, "y": browser.y + browser.height // 2}}
        with_a_new_popup(desktop, {"type": "mouse_move", "inputs": {"point": middle}}, "chromium's tooltip")
        assert_frames_show_what_x_holds(desktop, f"{start}: chromium's tooltip")
        with_a_new_popup(desktop, {"type": "right_click", "inputs": {"point": middle}}, "chromium's context menu")
        assert_frames_show_what_x_holds(desktop, f"{start}: chromium's context menu")
        act(desktop, {"type": "hotkey", "inputs": {"key": "escape"}})

        desktop.programs.run(["libreoffice", "--writer"])
        desktop.windows.wait_for(WRITER, timeout=120)
        assert_frames_show_what_x_holds(desktop, f"{start}: writer starting", quiet=0.1)
        assert_frames_show_what_x_holds(desktop, f"{start}: writer started")
        menu = with_a_new_popup(desktop, {"type": "hotkey", "inputs": {"key": "alt+f"}}, "writer's File menu")
        assert_frames_show_what_x_holds(desktop, f"{start}: writer's File menu")
        act(desktop, {"type": "hotkey", "inputs": {"key": "escape"}})
        wait_for(lambda: not popups(desktop) & menu, "the File menu closing")

        act(desktop, {"type": "hotkey", "inputs": {"key": "ctrl+shift+s"}})
        dialog = desktop.windows.wait_for("Save", timeout=60)
        assert WRITER not in dialog.title
        assert_frames_show_what_x_holds(desktop, f"{start}: writer's Save dialog")
        act(desktop, {"type": "hotkey", "inputs": {"key": "escape"}})
        wait_for(lambda: desktop.windows.find("Save") is None, "the Save dialog closing")
        assert_frames_show_what_x_holds(desktop, f"{start}: writer once the Save dialog closed")

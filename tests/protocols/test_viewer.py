"""One-time viewer links: the token opens the page once, expires, and the password never leaves
the server; the bridge authenticates to the VNC server itself, view-only unless asked."""

from __future__ import annotations

import http.client
import struct
import time
from urllib.parse import urlsplit

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.desktop.probe import EventProbe, buttons
from vdesk.desktop import Desktop
from vdesk.viewer import COOKIE, Viewer


@pytest.fixture(scope="module")
def desktop():
    with Desktop.up(size=(640, 480)) as desktop:
        yield desktop


def get(url: str, cookie: str | None = None) -> http.client.HTTPResponse:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    connection.request("GET", parts.path + (f"?{parts.query}" if parts.query else ""),
                       headers={"Cookie": f"{COOKIE}={cookie}"} if cookie else {})
    response = connection.getresponse()
    response.read()
    return response


def session_cookie(response: http.client.HTTPResponse) -> str:
    header = response.headers["Set-Cookie"]
    assert "HttpOnly" in header and "SameSite=strict" in header.replace("Strict", "strict")
    return header.split(";")[0].split("=", 1)[1]


class Received:
    """What the server sent over a WebSocket, read message by message as RFB frames it."""

    def __init__(self, socket) -> None:  # type: ignore[no-untyped-def]
        self.socket = socket
        self.data = b""

    def exactly(self, count: int) -> bytes:
        while len(self.data) < count:
            self.data += self.socket.recv(timeout=30)
        taken, self.data = self.data[:count], self.data[count:]
        return taken


def server_init(received: Received) -> tuple[tuple[int, int], int]:
    """The framebuffer size and bytes per pixel from ServerInit, read whole."""
    width, height, bits = struct.unpack(">HHB", received.exactly(5))
    received.exactly(15)  # the rest of the pixel format
    (name_length,) = struct.unpack(">I", received.exactly(4))
    received.exactly(name_length)
    return (width, height), bits // 8


def answered_update_request(received: Received, pixel_bytes: int) -> None:
    """Ask for one pixel of the screen and read the server's messages up to its answer. The
    server reads its client's messages in order, and the X server it also is applies input as
    it reads it: once the answer comes, every event sent before the request was taken or dropped."""
    received.socket.send(struct.pack(">BBHHHH", 3, 0, 0, 0, 1, 1))  # FramebufferUpdateRequest
    while True:
        kind = received.exactly(1)[0]
        if kind == 0:  # FramebufferUpdate: raw rectangles (no encodings were set)
            (count,) = struct.unpack(">xH", received.exactly(3))
            for _ in range(count):
                _, _, width, height, encoding = struct.unpack(">HHHHi", received.exactly(12))
                assert encoding == 0, encoding
                received.exactly(width * height * pixel_bytes)
            return
        if kind == 1:  # SetColourMapEntries
            (colours,) = struct.unpack(">xxxH", received.exactly(5))
            received.exactly(6 * colours)
        elif kind == 3:  # ServerCutText
            (length,) = struct.unpack(">xxxI", received.exactly(7))
            received.exactly(length)
        else:
            assert kind == 2, f"unknown server message {kind}"  # Bell: nothing follows


def open_rfb(viewer: Viewer, cookie: str):  # type: ignore[no-untyped-def]
    """A WebSocket to the bridge as noVNC opens it, through the handshake; returns it and the
    framebuffer size from ServerInit."""
    socket, received, (size, _) = open_session(viewer, cookie)
    return socket, size


def open_session(viewer: Viewer, cookie: str):  # type: ignore[no-untyped-def]
    """A WebSocket to the bridge through the handshake and the whole of ServerInit; returns it,
    its reader, the framebuffer size and the bytes per pixel."""
    socket = connect(f"ws://127.0.0.1:{viewer.port}/view/websocket", subprotocols=["binary"],
                     additional_headers={"Cookie": f"{COOKIE}={cookie}", "Origin": viewer.base_url},
                     open_timeout=30)
    assert socket.recv(timeout=30) == b"RFB 003.008\n"
    socket.send(b"RFB 003.008\n")
    assert socket.recv(timeout=30) == b"\x01\x01"  # one security type: None; the password stays here
    socket.send(b"\x01")
    assert socket.recv(timeout=30) == b"\0\0\0\0"
    socket.send(b"\x01")  # ClientInit, shared
    received = Received(socket)
    return socket, received, server_init(received)


def test_a_link_opens_the_page_once_and_carries_no_password(desktop):
    with Viewer.serve() as viewer:
        link = viewer.link(desktop, expires_in=60)
        assert link.url.startswith(f"http://127.0.0.1:{viewer.port}/view/") and link.read_only
        assert desktop.vnc.password not in link.url and desktop.vnc.view_password not in link.url
        first = get(link.url)
        assert first.status == 303 and "view_only=1" in first.headers["Location"]
        cookie = session_cookie(first)
        assert get(link.url).status == 403  # the second visit
        page = get(f"{viewer.base_url}{first.headers['Location']}", cookie)
        assert page.status == 200
        assert get(f"{viewer.base_url}{first.headers['Location']}").status == 403  # no cookie, no page
        socket, size = open_rfb(viewer, cookie)
        with socket:
            assert size == (640, 480)
        with pytest.raises(InvalidStatus, match="403"):  # one session, one WebSocket
            open_rfb(viewer, cookie)


def test_an_expired_link_is_refused(desktop):
    with Viewer.serve() as viewer:
        link = viewer.link(desktop, expires_in=1)
        time.sleep(1.5)
        assert get(link.url).status == 403


@pytest.mark.parametrize("read_only", [True, False])
def test_a_read_only_link_drops_input_and_a_control_link_lets_it_through(desktop, read_only):
    with Viewer.serve() as viewer, EventProbe(desktop) as probe:
        cookie = session_cookie(get(viewer.link(desktop, read_only=read_only, expires_in=60).url))
        socket, received, (_, pixel_bytes) = open_session(viewer, cookie)
        with socket:
            for mask in (1, 0):  # PointerEvent: press, then release, the left button at (20, 30)
                socket.send(struct.pack(">BBHH", 5, mask, 20, 30))
            # A request that must be answered, on the same path after them: once its answer is
            # here, the events were taken or dropped, and the probe's marker then sees all that came.
            answered_update_request(received, pixel_bytes)
            events = probe.events()
    got = buttons(events)
    if read_only:
        assert got == []
    else:
        assert got == [("button_press", 1, 20, 30), ("button_release", 1, 20, 30)]


def test_novnc_in_a_real_browser_connects_through_the_link_without_asking_for_a_password(desktop, tmp_path):
    import shutil

    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "chromium is not installed (make engine installs it)"  # never a silent skip
    with Viewer.serve() as viewer, sync_playwright() as playwright:
        link = viewer.link(desktop, expires_in=60)
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"], headless=True)
        try:
            page = browser.new_page()
            page.goto(link.url, timeout=60_000)
            # noVNC draws the desktop into a canvas of its size once the RFB session is up.
            page.wait_for_function("() => { const c = document.querySelector('#noVNC_container canvas');"
                                   " return c && c.width === 640 && c.height === 480; }", timeout=60_000)
            assert not page.is_visible("#noVNC_credentials_dlg.noVNC_open")  # no password was asked for
            assert desktop.vnc.view_password not in page.content()
            second = browser.new_page()
            assert second.goto(link.url, timeout=60_000).status == 403
        finally:
            browser.close()

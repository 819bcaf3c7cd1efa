"""`vdesk view`: noVNC through websockify on 127.0.0.1, reaching the desktop's VNC server,
which still asks for the password."""

from __future__ import annotations

import base64
import os
import shutil
import socket
import struct
import urllib.request

import pytest

from vdesk.desktop import Desktop
from vdesk.cli.view import start_viewer

pytestmark = [pytest.mark.desktop, pytest.mark.usefixtures("no_desktop_left")]


def websocket(port: int) -> socket.socket:
    """A WebSocket to websockify, as noVNC opens it (binary subprotocol)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET /websockify HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                  f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                  "Sec-WebSocket-Protocol: binary\r\n\r\n").encode())
    response = b""
    while b"\r\n\r\n" not in response:
        response += sock.recv(1)
    assert response.startswith(b"HTTP/1.1 101"), response
    return sock


def receive(sock: socket.socket) -> bytes:
    """One server frame's payload (servers do not mask)."""
    header = _exactly(sock, 2)
    length = header[1] & 0x7F
    if length == 126:
        length = struct.unpack(">H", _exactly(sock, 2))[0]
    return _exactly(sock, length)


def send(sock: socket.socket, payload: bytes) -> None:
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    sock.sendall(bytes([0x82, 0x80 | len(payload)]) + mask + masked)


def _exactly(sock: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        assert chunk, "connection closed"
        data += chunk
    return data


def listening_addresses(port: int) -> set[str]:
    """Local addresses listening on ``port``, from /proc/net/tcp (hex, little-endian IPv4)."""
    found = set()
    for line in open("/proc/net/tcp").read().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, hex_port = local.split(":")
        if int(hex_port, 16) == port and state == "0A":
            found.add(socket.inet_ntoa(bytes.fromhex(address)[::-1]))
    return found


def test_the_viewer_serves_novnc_on_loopback_and_the_vnc_server_wants_the_password():
    # Not skipped when missing: `make engine` installs it, and a run without it tested nothing.
    assert shutil.which("websockify"), "websockify is not installed (make engine installs websockify and novnc)"
    with Desktop.up(size=(640, 480)) as desktop, start_viewer(desktop) as viewer:
        assert viewer.url.startswith(f"http://127.0.0.1:{viewer.port}/vnc.html?")
        assert listening_addresses(viewer.port) == {"127.0.0.1"}
        page = urllib.request.urlopen(viewer.url, timeout=10).read().decode()
        assert "noVNC" in page
        sock = websocket(viewer.port)
        with sock:
            assert receive(sock) == b"RFB 003.008\n"
            send(sock, b"RFB 003.008\n")
            security = receive(sock)
            assert security[0] >= 1 and 2 in security[1:] and 1 not in security[1:]  # VNC auth, never "none"
        # View-only by default: the desktop's view-only password, not the full one.
        assert viewer.password == desktop.vnc_view_password != desktop.vnc_password and len(viewer.password) == 8

"""The held VNC connection's first frame, against a scripted VNC server: an answer that holds no
pixels (only a new cursor shape, as Xvnc sends while openbox starts) is not taken for the frame,
and a first update whose first rectangle is not at the top-left (Xvnc sends single-colour areas
first) is painted where each rectangle belongs."""

from __future__ import annotations

import socket
import struct
import threading
from pathlib import Path

from vdesk.frames import LiveFramebuffer

WIDTH, HEIGHT = 4, 2
COLOUR = (0x3B, 0x6E, 0x8F)
CURSOR_ENCODING = -239
RAW_ENCODING = 0


def _exactly(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def _requests(conn: socket.socket):  # type: ignore[no-untyped-def]
    """Each FramebufferUpdateRequest's incremental flag, reading past the client's other messages."""
    while True:
        kind = _exactly(conn, 1)[0]
        if kind == 0:  # SetPixelFormat
            _exactly(conn, 19)
        elif kind == 2:  # SetEncodings
            count = struct.unpack("!xH", _exactly(conn, 3))[0]
            _exactly(conn, 4 * count)
        elif kind == 3:  # FramebufferUpdateRequest
            yield _exactly(conn, 9)[0]
        else:
            raise AssertionError(f"unexpected client message {kind}")


def _serve(listener: socket.socket, asked: list[int]) -> None:
    conn, _ = listener.accept()
    conn.sendall(b"RFB 003.008\n")
    _exactly(conn, 12)
    conn.sendall(bytes([1, 1]))  # one security type: none
    _exactly(conn, 1)
    conn.sendall(struct.pack("!I", 0))
    _exactly(conn, 1)  # ClientInit
    pixel_format = struct.pack("!BBBBHHHBBBxxx", 32, 24, 0, 1, 255, 255, 255, 16, 8, 0)
    conn.sendall(struct.pack("!HH", WIDTH, HEIGHT) + pixel_format + struct.pack("!I", 4) + b"test")
    try:
        for incremental in _requests(conn):
            asked.append(incremental)
            if len(asked) == 1:  # a cursor shape of 0x0 pixels, and nothing else
                conn.sendall(struct.pack("!BxH", 0, 1) + struct.pack("!HHHHi", 0, 0, 0, 0, CURSOR_ENCODING))
            else:  # the client's format: 32 bits, blue in the lowest byte
                pixels = bytes([*reversed(COLOUR), 0]) * (WIDTH * HEIGHT)
                conn.sendall(struct.pack("!BxH", 0, 1) + struct.pack("!HHHHi", 0, 0, WIDTH, HEIGHT, RAW_ENCODING) + pixels)
    except (EOFError, OSError):
        pass
    finally:
        conn.close()


def test_a_first_answer_without_pixels_is_followed_by_a_request_for_the_screen(tmp_path: Path) -> None:
    path = str(tmp_path / "vnc")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(1)
    asked: list[int] = []
    threading.Thread(target=_serve, args=(listener, asked), daemon=True).start()
    frames = LiveFramebuffer(path, "password", "scripted", max_size=(WIDTH, HEIGHT))
    try:
        frames.connect(timeout=10)
        assert frames.latest().image.getpixel((0, 0)) == COLOUR
        assert asked[:2] == [0, 0]  # the whole screen, asked for twice
    finally:
        frames.close()
        listener.close()


LEFT, RIGHT = (0xF0, 0xF0, 0xF0), COLOUR


def _pixels(colour: tuple[int, int, int], count: int) -> bytes:
    return bytes([*reversed(colour), 0]) * count  # the client's format, as above


def _serve_right_half_first(listener: socket.socket) -> None:
    """Answer each request for the screen as Xvnc answers a client that takes LastRect: its
    single-colour area first, wherever it is (the right half), then the rest (the left half)."""
    conn, _ = listener.accept()
    conn.sendall(b"RFB 003.008\n")
    _exactly(conn, 12)
    conn.sendall(bytes([1, 1]))
    _exactly(conn, 1)
    conn.sendall(struct.pack("!I", 0))
    _exactly(conn, 1)
    pixel_format = struct.pack("!BBBBHHHBBBxxx", 32, 24, 0, 1, 255, 255, 255, 16, 8, 0)
    conn.sendall(struct.pack("!HH", WIDTH, HEIGHT) + pixel_format + struct.pack("!I", 4) + b"test")
    half = WIDTH // 2
    try:
        for _ in _requests(conn):
            conn.sendall(struct.pack("!BxH", 0, 2)
                         + struct.pack("!HHHHi", half, 0, half, HEIGHT, RAW_ENCODING) + _pixels(RIGHT, half * HEIGHT)
                         + struct.pack("!HHHHi", 0, 0, half, HEIGHT, RAW_ENCODING) + _pixels(LEFT, half * HEIGHT))
    except (EOFError, OSError):
        pass
    finally:
        conn.close()


def test_a_first_update_that_starts_away_from_the_top_left_is_painted_where_it_belongs(tmp_path: Path) -> None:
    """A first rectangle at (2, 0) stays at (2, 0): it is not taken for the screen at (0, 0),
    leaving its own place black (the box a new connection showed beside Chromium's window)."""
    path = str(tmp_path / "vnc")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(1)
    threading.Thread(target=_serve_right_half_first, args=(listener,), daemon=True).start()
    frames = LiveFramebuffer(path, "password", "scripted", max_size=(WIDTH, HEIGHT))
    try:
        frames.connect(timeout=10)
        image = frames.latest().image
        assert image.size == (WIDTH, HEIGHT)
        assert [image.getpixel((x, y)) for y in range(HEIGHT) for x in range(WIDTH)] == [LEFT, LEFT, RIGHT, RIGHT] * HEIGHT
    finally:
        frames.close()
        listener.close()

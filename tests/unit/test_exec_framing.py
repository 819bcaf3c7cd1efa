"""The frames connection reads an exec's output itself: the engine's 8-byte stream headers are
taken off however the bytes arrive (a header split across reads, many pieces in one read)."""

from __future__ import annotations

import socket

import pytest
from hypothesis import given, strategies as st

from vdesk.errors import VdeskError
from vdesk.execstream import FRAME_HEADER, ExecSocket
from vdesk.frames import LiveFramebuffer, _ExecFraming

STDOUT = 1


class _Parser:
    def __init__(self) -> None:
        self.received = bytearray()
        self.calls = 0

    def dataReceived(self, data: bytes) -> None:
        self.received += data
        self.calls += 1


class _Framed(_ExecFraming, _Parser):
    pass


def _framed(pieces: list[bytes]) -> bytes:
    return b"".join(FRAME_HEADER.pack(STDOUT, len(piece)) + piece for piece in pieces)


def _cut(data: bytes, sizes: list[int]) -> list[bytes]:
    chunks, at = [], 0
    for size in sizes:
        if at >= len(data):
            break
        chunks.append(data[at:at + size])
        at += size
    return [*chunks, data[at:]] if at < len(data) else chunks


@given(pieces=st.lists(st.binary(min_size=0, max_size=300), max_size=12),
       sizes=st.lists(st.integers(min_value=1, max_value=40), max_size=200))
def test_the_payload_comes_out_whole_and_in_order_however_it_is_cut(pieces: list[bytes], sizes: list[int]) -> None:
    client = _Framed()
    for chunk in _cut(_framed(pieces), sizes):
        client.dataReceived(chunk)
    assert bytes(client.received) == b"".join(pieces)


def test_a_read_of_headers_alone_hands_the_parser_nothing() -> None:
    client = _Framed()
    framed = _framed([b"", b"RFB 003.008\n"])
    client.dataReceived(framed[:11])  # the empty piece's header and part of the next one's
    assert client.calls == 0
    client.dataReceived(framed[11:])
    assert bytes(client.received) == b"RFB 003.008\n" and client.calls == 1


def test_many_pieces_in_one_read_reach_the_parser_in_one_call() -> None:
    client = _Framed()
    client.dataReceived(_framed([b"a" * 5, b"b" * 7, b"c"]))
    assert bytes(client.received) == b"aaaaabbbbbbbc" and client.calls == 1


def test_an_exec_socket_the_event_loop_cannot_take_is_refused_by_name() -> None:
    class Wrapped(socket.socket):  # what a TLS connection is: a socket whose bytes are not the stream's
        pass

    ours, theirs = socket.socketpair()
    wrapped = Wrapped(fileno=ours.detach())
    frames = LiveFramebuffer(lambda: ExecSocket("exec", wrapped, wrapped), "password", "over-tls")
    with pytest.raises(VdeskError, match="over-tls: the engine's exec connection \\(Wrapped\\) cannot be read"):
        frames.connect(timeout=5)
    assert wrapped.fileno() == -1  # closed, not left open
    theirs.close()

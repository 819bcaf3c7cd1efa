"""An exec's output comes in pieces behind the engine's 8-byte headers: they are taken off however
the bytes arrive (a header split across reads, many pieces in one read), by the exec streams'
reader and by the frames connection, which reads an exec's socket in its event loop."""

from __future__ import annotations

import socket

import pytest
from hypothesis import given, strategies as st

from vdesk.errors import VdeskError
from vdesk.execstream import FRAME_HEADER, STDERR, ExecSocket, FrameReader
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


def _framed(pieces: list[bytes], stream: int = STDOUT) -> bytes:
    return b"".join(FRAME_HEADER.pack(stream, len(piece)) + piece for piece in pieces)


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


@given(pieces=st.lists(st.tuples(st.sampled_from([STDOUT, STDERR]), st.binary(max_size=100)), max_size=12),
       sizes=st.lists(st.integers(min_value=1, max_value=30), max_size=200))
def test_each_stream_gets_its_own_bytes_in_order(pieces: list[tuple[int, bytes]], sizes: list[int]) -> None:
    frames = FrameReader()
    received = {STDOUT: b"", STDERR: b""}
    for chunk in _cut(b"".join(_framed([piece], stream) for stream, piece in pieces), sizes):
        for stream, piece in frames.feed(chunk):
            received[stream] += piece
    for stream in (STDOUT, STDERR):
        assert received[stream] == b"".join(piece for s, piece in pieces if s == stream)


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

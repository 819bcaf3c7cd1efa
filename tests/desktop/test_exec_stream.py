"""An exec's first output is never lost, however slowly this process reads the engine's answer;
a prelude runs first in the same exec and reads only its own input.

The engine writes the upgrade's headers, then starts the program: when this process is slow to
read them (a busy machine, or a thread holding the interpreter lock), the program's first bytes
arrive in the same read and land in the HTTP client's buffer. Here another thread holds the
lock for 50 ms at a time, which made most short outputs vanish before they were taken back."""

from __future__ import annotations

import functools
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from vdesk.container import VNC_TARGET
from vdesk.desktop import Desktop
from vdesk.execstream import FrameReader, Prelude, start_exec
from vdesk.frames import LiveFramebuffer
from tests.desktop.helpers import separate_exec

RUNS = 10


@contextmanager
def slow_to_read() -> Iterator[None]:
    """Another thread keeps the interpreter busy, handing over the lock every 50 ms."""
    interval, stop = sys.getswitchinterval(), threading.Event()

    def spin() -> None:
        while not stop.is_set():
            pass

    sys.setswitchinterval(0.05)
    spinner = threading.Thread(target=spin, daemon=True)
    spinner.start()
    try:
        yield
    finally:
        stop.set()
        spinner.join()
        sys.setswitchinterval(interval)


def test_a_short_output_comes_whole_while_this_process_is_slow_to_read(shared_desktop: Desktop) -> None:
    with slow_to_read():
        outputs = [separate_exec(shared_desktop, ["printf", "line %s\\n", str(run)]).output for run in range(RUNS)]
    assert outputs == [f"line {run}\n".encode() for run in range(RUNS)]


def test_files_and_the_vnc_handshake_come_whole_while_this_process_is_slow_to_read(shared_desktop: Desktop) -> None:
    shared_desktop.files.write_file("/tmp/read-ahead.txt", b"all of it\n")
    open_vnc = functools.partial(start_exec, shared_desktop.client.api, shared_desktop.id, ["socat", "STDIO", VNC_TARGET])
    with slow_to_read():
        copies = [shared_desktop.files.read_file("/tmp/read-ahead.txt") for _ in range(3)]
        for _ in range(2):  # the server speaks first: a lost version string would stall the handshake
            frames = LiveFramebuffer(open_vnc, shared_desktop.vnc.password, "slow-reader")
            try:
                frames.connect(timeout=20)
                assert frames.latest().image.size == shared_desktop.screen.physical_size
            finally:
                frames.close()
    assert copies == [b"all of it\n"] * 3


def test_a_prelude_reads_its_own_line_and_the_program_gets_the_rest(shared_desktop: Desktop) -> None:
    """What a fork's relay relies on: the shell's ``read`` takes its line and no byte more, so
    the program it becomes (``cat`` here, the VNC relay there) gets the rest of stdin."""
    prelude = Prelude(("sh", "-c", 'IFS= read -r first; printf "%s|" "$first"; exec "$@"', "prelude"), b"secret line\n")
    assert "secret" not in repr(prelude)
    stream = start_exec(shared_desktop.client.api, shared_desktop.id, ["cat"], prelude=prelude)
    try:
        stream.sock.sendall(b"the program's input\n")
        stream.sock.shutdown(socket.SHUT_WR)
        stream.sock.settimeout(30)
        received = [stream.early]
        while chunk := stream.sock.recv(4096):
            received.append(chunk)
    finally:
        stream.close()
    output = b"".join(piece for _, piece in FrameReader().feed(b"".join(received)))
    assert output == b"secret line|the program's input\n"

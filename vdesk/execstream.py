"""A ``docker exec`` session with a raw, two-way byte stream.

The Docker API hands back the exec's connection as a socket: what we write is the program's
stdin, what we read is its stdout framed with 8-byte headers (no TTY, so binary data passes
untouched). Channels, tunnels and the lease are all built on this one primitive; the frames
connection takes the bare socket (:func:`start_exec`) into its own event loop.

The engine writes the upgrade's HTTP headers and then starts the program, so on a busy machine
the program's first output can arrive before the client has read the headers; the HTTP client
reads ahead into its buffer, and docker-py hands back the socket beneath it, where those bytes
no longer are. :attr:`ExecSocket.early` takes them back out of that buffer (without them, a
loaded machine lost most short outputs: an empty ``tar`` from a file that exists, a VNC
handshake that never began).
"""

from __future__ import annotations

import io
import socket
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import docker.errors

from vdesk.errors import DesktopGone

DESKTOP_USER = "desk"
STDERR = 2  # the stream number of stderr frames
# What precedes each piece of output: its stream number, three bytes of padding, its length.
FRAME_HEADER = struct.Struct(">BxxxL")
READ_SIZE = 65536  # bytes asked of the socket at a time


class FrameReader:
    """Takes the headers off an exec's output, however its bytes arrive (a header split
    between reads, many pieces in one read): :meth:`feed` gives each piece's stream number and
    bytes."""

    def __init__(self) -> None:
        self._header = b""  # a header not yet complete
        self._stream = 1
        self._left = 0  # bytes of the current piece still to come

    def feed(self, data: bytes) -> list[tuple[int, bytes]]:
        pieces: list[tuple[int, bytes]] = []
        view = memoryview(data)
        while view:
            if self._left:
                piece = view[:self._left]
                pieces.append((self._stream, bytes(piece)))
                self._left -= len(piece)
                view = view[len(piece):]
                continue
            missing = FRAME_HEADER.size - len(self._header)
            self._header += view[:missing]
            view = view[missing:]
            if len(self._header) == FRAME_HEADER.size:
                self._stream, self._left = FRAME_HEADER.unpack(self._header)
                self._header = b""
        return pieces


@dataclass
class ExecSocket:
    """A started exec's connection: write its stdin to ``sock``, read its output framed by
    :data:`FRAME_HEADER` from ``early`` and then from ``sock``. ``raw`` is what docker-py handed
    back (it holds the HTTP response that must stay alive)."""

    exec_id: str
    raw: Any
    sock: socket.socket
    early: bytes = b""  # the output read ahead with the HTTP headers (see the module's docstring)

    @property
    def plain(self) -> bool:
        """Whether ``sock`` is an ordinary stream socket (a local engine's, or plain TCP's) that
        another event loop can take over; TLS and ssh connections are not."""
        return type(self.sock) is socket.socket and self.sock.family in (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6)

    def close(self) -> None:
        for release in (self.sock.close, self.raw.close):
            try:
                release()
            except OSError:
                pass


def plain_sockets(api: docker.APIClient) -> bool:
    """Whether this engine hands back ordinary sockets (a local one's or plain TCP's, see
    :attr:`ExecSocket.plain`), known from its address before any exec starts."""
    return api.base_url == "http+docker://localhost" or api.base_url.startswith("http://")


@dataclass(frozen=True)
class Prelude:
    """A shell command an exec runs before its program, in the same process: ``argv`` ends in
    ``exec "$@"`` and the program's argv is appended to it; ``stdin`` is what it reads first,
    before the program's own input. One exec where two would take turns (each ~0.1 s)."""

    argv: tuple[str, ...]
    stdin: bytes = field(repr=False)  # may hold secrets (a fork's new password)


def start_exec(api: docker.APIClient, container_id: str, argv: list[str], *, user: str = DESKTOP_USER,
               label: str | None = None, stdin: bool = True, stderr: bool = False,
               prelude: Prelude | None = None) -> ExecSocket:
    """Run ``argv`` (after ``prelude``) in the container and hand back its connection;
    DesktopGone when it cannot run."""
    label = label or container_id[:12]
    if prelude is not None:
        argv = [*prelude.argv, *argv]
    try:
        exec_id = api.exec_create(container_id, argv, stdin=stdin, stdout=True, stderr=stderr, tty=False,
                                  user=user)["Id"]
        raw = api.exec_start(exec_id, socket=True)
    except docker.errors.NotFound as error:
        raise DesktopGone(f"desktop {label} is gone (its container was removed)") from error
    except docker.errors.APIError as error:
        raise DesktopGone(f"desktop {label} cannot run {argv[0]}: {error.explanation}") from error
    sock = _underlying_socket(raw)
    early = _read_ahead(raw, sock)
    sock.settimeout(None)  # the API's timeout is for requests: a stream may be quiet for hours
    stream = ExecSocket(exec_id, raw, sock, early)
    if prelude is not None:
        try:
            sock.sendall(prelude.stdin)
        except OSError as error:
            stream.close()
            raise DesktopGone(f"desktop {label}: the exec of {argv[0]} broke: {error}") from error
    return stream


def _read_ahead(raw: Any, sock: socket.socket) -> bytes:
    """The bytes the HTTP client's buffer holds past the upgrade's headers (often none)."""
    response = getattr(getattr(raw, "_response", None), "raw", None)  # requests' response, then urllib3's
    buffered = getattr(getattr(response, "_fp", None), "fp", None)  # http.client's reader
    if not isinstance(buffered, io.BufferedReader):
        return b""
    timeout = sock.gettimeout()
    sock.settimeout(0)  # peek() reads the socket only when nothing is buffered: never wait there
    try:
        held = buffered.peek()
    except OSError:
        held = b""
    finally:
        sock.settimeout(timeout)
    return buffered.read(len(held)) if held else b""


class ExecStream:
    """Runs ``argv`` in a container and connects to its stdin and stdout.

    Bytes from stdout are handed to ``on_data`` from a reader thread; ``on_close`` is called
    once when the stream ends (the program exited, the container went away, or :meth:`close`).
    A program that reads nothing gets ``stdin=False``.
    """

    def __init__(
        self,
        api: docker.APIClient,
        container_id: str,
        argv: list[str],
        on_data: Callable[[bytes], None],
        on_close: Callable[[], None] = lambda: None,
        user: str = DESKTOP_USER,
        label: str | None = None,
        on_stderr: Callable[[bytes], None] | None = None,
        stdin: bool = True,
    ) -> None:
        self.argv = argv
        self._api = api
        self._on_data = on_data
        self._on_stderr = on_stderr
        self._on_close = on_close
        self._closed = threading.Event()
        self._write_lock = threading.Lock()
        self._exec = start_exec(api, container_id, argv, user=user, label=label, stdin=stdin,
                                stderr=on_stderr is not None)
        self.exec_id: str = self._exec.exec_id
        self._sock: socket.socket = self._exec.sock
        self._reader = threading.Thread(target=self._read, name=f"exec-{argv[0]}", daemon=True)
        self._reader.start()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def send(self, data: bytes) -> None:
        """Write ``data`` to the program's stdin; raises :class:`DesktopGone` if it is closed."""
        if self.closed:
            raise DesktopGone(f"the exec session of {self.argv[0]} is closed")
        try:
            with self._write_lock:
                self._sock.sendall(data)
        except OSError as error:
            self.close()
            raise DesktopGone(f"the exec session of {self.argv[0]} broke: {error}") from error

    def finish_input(self) -> None:
        """Close the program's stdin (it sees end-of-file) and keep reading its output."""
        try:
            self._sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def exit_code(self) -> int | None:
        """The program's exit code once it ended (None while it runs or if unknown)."""
        try:
            code = self._api.exec_inspect(self.exec_id).get("ExitCode")
        except docker.errors.APIError:
            return None
        return code if isinstance(code, int) else None

    def close(self) -> None:
        """End the session: the program sees end-of-file on stdin.

        Only shuts the socket down; the reader thread closes it on its way out, so it never
        waits on a descriptor number that a new socket has already reused.
        """
        if self._closed.is_set():
            return
        self._closed.set()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _read(self) -> None:
        frames, data = FrameReader(), self._exec.early
        try:
            while True:
                for stream, piece in frames.feed(data):
                    if stream == STDERR and self._on_stderr is not None:
                        self._on_stderr(piece)
                    else:
                        self._on_data(piece)
                if not (data := self._sock.recv(READ_SIZE)):
                    break
        except OSError:
            pass  # the socket was closed under us: that is the end of the stream
        finally:
            self.close()
            self._exec.close()
            self._on_close()


def _underlying_socket(raw: Any) -> socket.socket:
    # docker-py returns a SocketIO for unix sockets and the socket itself for TCP/TLS.
    return getattr(raw, "_sock", raw)

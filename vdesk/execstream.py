"""A ``docker exec`` session with a raw, two-way byte stream.

The Docker API hands back the exec's connection as a socket: what we write is the program's
stdin, what we read is its stdout framed with 8-byte headers (no TTY, so binary data passes
untouched). Channels, tunnels and the lease are all built on this one primitive; the frames
connection takes the bare socket (:func:`start_exec`) into its own event loop.
"""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import docker.errors
from docker.utils.socket import frames_iter

from vdesk.errors import DesktopGone

DESKTOP_USER = "desk"
STDERR = 2  # the stream number of stderr frames
# What precedes each piece of output: its stream number, three bytes of padding, its length.
FRAME_HEADER = struct.Struct(">BxxxL")


@dataclass
class ExecSocket:
    """A started exec's connection: write its stdin, read its output framed by
    :data:`FRAME_HEADER`. ``raw`` is what docker-py handed back (it holds the HTTP response
    that must stay alive), ``sock`` the socket under it."""

    exec_id: str
    raw: Any
    sock: socket.socket

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


def start_exec(api: docker.APIClient, container_id: str, argv: list[str], *, user: str = DESKTOP_USER,
               label: str | None = None, stdin: bool = True, stderr: bool = False) -> ExecSocket:
    """Run ``argv`` in the container and hand back its connection; DesktopGone when it cannot run."""
    label = label or container_id[:12]
    try:
        exec_id = api.exec_create(container_id, argv, stdin=stdin, stdout=True, stderr=stderr, tty=False,
                                  user=user)["Id"]
        raw = api.exec_start(exec_id, socket=True)
    except docker.errors.NotFound as error:
        raise DesktopGone(f"desktop {label} is gone (its container was removed)") from error
    except docker.errors.APIError as error:
        raise DesktopGone(f"desktop {label} cannot run {argv[0]}: {error.explanation}") from error
    return ExecSocket(exec_id, raw, _underlying_socket(raw))


class ExecStream:
    """Runs ``argv`` in a container and connects to its stdin and stdout.

    Bytes from stdout are handed to ``on_data`` from a reader thread; ``on_close`` is called
    once when the stream ends (the program exited, the container went away, or :meth:`close`).
    A program that reads nothing gets ``stdin=False``: half-closing an attached stdin can end
    the engine's side of the stream before the program's output was copied (its output is then
    lost, seen under load as an empty ``tar`` from a file that exists).
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
        try:
            for stream, data in frames_iter(self._exec.raw, tty=False):
                if stream == STDERR and self._on_stderr is not None:
                    self._on_stderr(data)
                else:
                    self._on_data(data)
        except (OSError, ValueError):
            pass  # the socket was closed under us: that is the end of the stream
        finally:
            self.close()
            self._exec.close()
            self._on_close()


def _underlying_socket(raw: Any) -> socket.socket:
    # docker-py returns a SocketIO for unix sockets and the socket itself for TCP/TLS.
    return getattr(raw, "_sock", raw)

"""A ``docker exec`` session with a raw, two-way byte stream.

The Docker API hands back the exec's connection as a socket: what we write is the program's
stdin, what we read is its stdout framed with 8-byte headers (no TTY, so binary data passes
untouched). Channels, tunnels and the lease are all built on this one primitive.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from typing import Any

import docker.errors
from docker.utils.socket import frames_iter

from vdesk.errors import DesktopGone

DESKTOP_USER = "desk"
STDERR = 2  # the stream number of stderr frames


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
        label = label or container_id[:12]
        self._api = api
        self._on_data = on_data
        self._on_stderr = on_stderr
        self._on_close = on_close
        self._closed = threading.Event()
        self._write_lock = threading.Lock()
        try:
            exec_id = api.exec_create(container_id, argv, stdin=stdin, stdout=True,
                                      stderr=on_stderr is not None, tty=False, user=user)["Id"]
            raw = api.exec_start(exec_id, socket=True)
        except docker.errors.NotFound as error:
            raise DesktopGone(f"desktop {label} is gone (its container was removed)") from error
        except docker.errors.APIError as error:
            raise DesktopGone(f"desktop {label} cannot run {argv[0]}: {error.explanation}") from error
        self.exec_id: str = exec_id
        self._raw = raw
        self._sock: socket.socket = _underlying_socket(raw)
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
            for stream, data in frames_iter(self._raw, tty=False):
                if stream == STDERR and self._on_stderr is not None:
                    self._on_stderr(data)
                else:
                    self._on_data(data)
        except (OSError, ValueError):
            pass  # the socket was closed under us: that is the end of the stream
        finally:
            self.close()
            for release in (self._sock.close, self._raw.close):
                try:
                    release()
                except OSError:
                    pass
            self._on_close()


def _underlying_socket(raw: Any) -> socket.socket:
    # docker-py returns a SocketIO for unix sockets and the socket itself for TCP/TLS.
    return getattr(raw, "_sock", raw)

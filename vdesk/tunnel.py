"""Port forwarding into a desktop through ``docker exec``.

Desktops run with no network by default, so nothing can be published. Instead the host
controller listens on a private local socket and carries each connection through an exec'd
``socat`` to a socket inside the container: the VNC server, or the X server itself. This works
the same for a local engine, a remote one, and any network mode.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import tempfile
import threading
from pathlib import Path

import docker

from vdesk.errors import DesktopGone, InvalidArgument
from vdesk.execstream import ExecStream


class Tunnel:
    """Forwards connections made to a local address to ``target`` inside a container.

    ``target`` is a socat address inside the container, e.g. ``TCP:127.0.0.1:5900`` or
    ``UNIX-CONNECT:/tmp/.X11-unix/X0``. The local end is a Unix socket in a private (0700)
    folder, or a TCP port on ``tcp_host`` (a loopback address, 127.0.0.1 unless given) when
    ``tcp_port`` is given (0 picks a free one).
    """

    def __init__(self, api: docker.APIClient, container_id: str, target: str,
                 tcp_port: int | None = None, tcp_host: str = "127.0.0.1") -> None:
        if not ipaddress.ip_address(tcp_host).is_loopback:
            raise InvalidArgument(f"a tunnel listens on a loopback address only, not {tcp_host}")
        self._api = api
        self._container_id = container_id
        self._target = target
        self._folder: Path | None = None
        if tcp_port is None:
            self._folder = Path(tempfile.mkdtemp(prefix="vdesk-tunnel-"))
            os.chmod(self._folder, 0o700)
            self.address: str = str(self._folder / "socket")
            self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._listener.bind(self.address)
        else:
            self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                self._listener.bind((tcp_host, tcp_port))
            except OSError:
                self._listener.close()
                raise
            self.address = f"{tcp_host}:{self._listener.getsockname()[1]}"
        self._listener.listen(8)
        self._closed = False
        self._streams: set[ExecStream] = set()
        self._lock = threading.Lock()
        threading.Thread(target=self._accept_loop, name="tunnel-accept", daemon=True).start()

    @property
    def port(self) -> int:
        """The local TCP port (TCP tunnels only)."""
        return int(self.address.rsplit(":", 1)[1])

    def close(self) -> None:
        """Stop listening and end every forwarded connection."""
        self._closed = True
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()
        with self._lock:
            streams, self._streams = list(self._streams), set()
        for stream in streams:
            stream.close()
        if self._folder is not None:
            Path(self.address).unlink(missing_ok=True)
            self._folder.rmdir()

    def _accept_loop(self) -> None:
        while not self._closed:
            try:
                local, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._forward, args=(local,), name="tunnel-conn", daemon=True).start()

    def _forward(self, local: socket.socket) -> None:
        if local.family == socket.AF_INET:
            local.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            stream = ExecStream(self._api, self._container_id, ["socat", "STDIO", self._target],
                                on_data=local.sendall, on_close=lambda: _shut(local))
        except DesktopGone:
            local.close()
            return
        with self._lock:
            self._streams.add(stream)
        try:
            while data := local.recv(262144):
                stream.send(data)
        except (OSError, DesktopGone):
            pass
        finally:
            stream.close()
            local.close()
            with self._lock:
                self._streams.discard(stream)


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass

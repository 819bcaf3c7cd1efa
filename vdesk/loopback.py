"""Serving HTTP on this machine's loopback: the one listener of the viewer (``vdesk view``), the
MCP HTTP transport (``vdesk mcp --transport http``) and OSWorld's server (``vdesk osworld-serve``).

:func:`listen` binds a port (0: a free one) of a loopback address and says in one line why it
could not, closing the socket it made; :class:`BackgroundServer` runs uvicorn on such a socket in
a thread of its own until closed. Binding first, then serving on the bound socket, is what lets a
caller announce the address before a request can come, and keeps the port a caller chose or got.
"""

from __future__ import annotations

import secrets
import socket
import threading
import time
from typing import Any

from vdesk.errors import DesktopTimeout, InvalidArgument

START_TIMEOUT = 20.0
BACKLOG = 128  # connections made once the address is announced wait for the server


def listen(host: str = "127.0.0.1", port: int = 0, *, what: str = "port",
           ports: tuple[int, int] | None = None) -> socket.socket:
    """A listening TCP socket on ``host``:``port``. A port that cannot be had is an
    InvalidArgument naming ``what`` (an option's name, say) and the system's reason.

    With ``port`` 0 the system picks a free port, or, given ``ports`` (low, high), a random free
    one in ``low..high-1``: the system's picks follow each other, so a server that nothing on this
    machine should find (OSWorld's, whose clients send no credentials) takes a random one."""
    if port or ports is None:
        return _bound(host, port, what)
    low, high = ports
    for _ in range(64):
        try:
            return _bound(host, low + secrets.randbelow(high - low), what)
        except InvalidArgument:
            continue  # taken: another
    raise InvalidArgument(f"{what}: no free port on {host}")


def _bound(host: str, port: int, what: str) -> socket.socket:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as error:
        listener.close()
        raise InvalidArgument(f"{what} {port}: cannot listen on {host}: {error.strerror}") from None
    listener.listen(BACKLOG)
    return listener


def uvicorn_config(app: Any, **options: Any) -> Any:
    """uvicorn's settings for vdesk's servers: warnings only, no access log."""
    import uvicorn  # loaded by the commands that serve, not by every import of vdesk

    return uvicorn.Config(app, log_level="warning", access_log=False, **options)


class BackgroundServer:
    """uvicorn serving ``app`` on ``listener`` in a thread named ``name``, started when this
    returns (or a DesktopTimeout after :data:`START_TIMEOUT`); :meth:`close` stops it."""

    def __init__(self, app: Any, listener: socket.socket, name: str, **options: Any) -> None:
        import uvicorn

        self._server = uvicorn.Server(uvicorn_config(app, lifespan="off", **options))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [listener]},
                                        name=name, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                self.close()
                raise DesktopTimeout(f"{name} did not start within {START_TIMEOUT:g} s")
            time.sleep(0.02)

    def close(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)

"""A desktop's VNC server as a viewer reaches it: its passwords and its address.

``desktop.vnc.password`` lets a viewer drive; ``desktop.vnc.view_password`` only lets it watch
(the VNC server drops its keys and clicks). ``desktop.vnc.address`` is where a viewer on this
machine connects: a published port on a bridge network, else a tunnel this process holds
through the engine (a desktop without a network publishes nothing). vdesk's own frames come over
the same tunnel (:mod:`vdesk.screen`).
"""

from __future__ import annotations

from collections.abc import Callable

import docker
from docker.models.containers import Container

from vdesk.container import VNC_TARGET, published_port
from vdesk.guard import Guard
from vdesk.tunnel import Tunnel

READ_TIMEOUT = 5.0  # reading a password file in the desktop


class DesktopVnc:
    """The VNC server of one desktop: passwords, address, tunnels to it."""

    def __init__(self, api: docker.APIClient, container: Container, guard: Guard,
                 read: Callable[[str], str], password: str | None = None,
                 view_password: str | None = None) -> None:
        self._api = api
        self._container = container
        self._guard = guard
        self._read = read  # a file of the desktop, as text
        self._password = password
        self._view_password = view_password
        self._tunnel: Tunnel | None = None

    @property
    def password(self) -> str:
        """The desktop's VNC password (random per desktop; read from it when attached)."""
        if self._password is None:
            self._password = self._guard(lambda: self._read("/tmp/vdesk/vnc-password"))
        return self._password

    @property
    def view_password(self) -> str:
        """A second VNC password of the desktop: a viewer that gives it only watches."""
        if self._view_password is None:
            self._view_password = self._guard(lambda: self._read("/tmp/vdesk/vnc-view-password"))
        return self._view_password

    @property
    def address(self) -> str:
        """Where a VNC viewer reaches this desktop from this machine: a published
        ``127.0.0.1::PORT`` (bridge network) or this process's private tunnel socket."""
        published = published_port(self._container)
        if not published and self._container.attrs.get("HostConfig", {}).get("PortBindings"):
            self._container.reload()  # ports are assigned on start, after `run` read the attributes
            published = published_port(self._container)
        if published:
            return f"127.0.0.1::{published}"
        return self.private_tunnel().address

    def private_tunnel(self) -> Tunnel:
        """This process's tunnel to the VNC server (a Unix socket), opened on first use."""
        if self._tunnel is None:
            self._tunnel = Tunnel(self._api, self._container.id, VNC_TARGET)
        return self._tunnel

    def forward(self, port: int = 0) -> Tunnel:
        """A tunnel from ``127.0.0.1:port`` on this machine (0: a free port) to the desktop's
        VNC server, for a viewer; the server still asks for :attr:`password`. Close it."""
        return Tunnel(self._api, self._container.id, VNC_TARGET, tcp_port=port)

    def close(self) -> None:
        """Close the private tunnel (it opens again on next use)."""
        if self._tunnel is not None:
            self._tunnel.close()
            self._tunnel = None

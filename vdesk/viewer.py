"""Watching a desktop live in a browser, through one-time links that carry no password.

    with Viewer.serve() as viewer:
        link = viewer.link(desktop, read_only=True, expires_in=300)
        print(link.url)           # http://127.0.0.1:PORT/view/<token>: works once, for 5 minutes

A link's token opens the page once: the first visit trades it for a session cookie (HttpOnly,
SameSite=Strict) and the token is gone; a second visit, or one after it expired, is refused.
The page is noVNC; its WebSocket reaches this server, which speaks RFB to the desktop's VNC
server itself: it answers the VNC password challenge there and offers the browser a connection
that needs none. So the password never leaves this process: not in a URL, a page, a log or a
transcript. One session serves one WebSocket; when it closes, the session ends.

Read-only links are read-only twice over: the page sends no input (noVNC's ``view_only``) and
this server authenticates with the desktop's view-only password, so the VNC server drops input.

The pages are served by Starlette under :attr:`Viewer.path` (``/view``): on a port of its own
(:meth:`Viewer.serve`, for ``vdesk view``) or mounted in another app (``vdesk mcp`` over HTTP).
noVNC comes from the Debian package ``novnc``.
"""

from __future__ import annotations

import hashlib
import secrets
import struct
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
from anyio.streams.buffered import BufferedByteReceiveStream
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from vdesk.container import VNC_TARGET
from vdesk.desktop import Desktop
from vdesk.errors import (InvalidArgument, PasswordRefused, VNCUnavailable, VdeskError, ViewerRefused,
                         ViewerUnavailable)
from vdesk.loopback import BackgroundServer, listen
from vdesk.tunnel import Tunnel
from vdesk.vncauth import vnc_auth_response

NOVNC_DIRS = (Path("/usr/share/novnc"), Path("/usr/share/webapps/novnc"))
COOKIE = "vdesk-viewer"
MAX_LINK_SECONDS = 3600
HANDSHAKE_TIMEOUT = 15.0
REFUSED = "this viewer link is unknown, already used or expired: ask for a new one"


@dataclass(frozen=True)
class Link:
    """A one-time viewer link."""

    url: str
    expires_at: float  # time.time()
    read_only: bool


@dataclass
class _Grant:
    """What a link or a session lets its holder watch."""

    api: Any  # docker.APIClient
    container_id: str
    desktop: str
    password: str
    read_only: bool
    expires_at: float  # monotonic; a session's: when it must have opened its WebSocket
    websocket_used: bool = False


def novnc_dir() -> Path:
    """noVNC's web files; :class:`ViewerUnavailable` says which package brings them."""
    for folder in NOVNC_DIRS:
        if (folder / "vnc.html").is_file():
            return folder
    raise ViewerUnavailable("noVNC is not installed: install the Debian package `novnc`")


class Viewer:
    """Hands out one-time links and serves them (noVNC pages and the RFB bridge)."""

    path = "/view"

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")
        self._web = novnc_dir()
        self._links: dict[str, _Grant] = {}  # by the token's SHA-256: the token itself is kept nowhere
        self._sessions: dict[str, _Grant] = {}
        self._lock = threading.Lock()
        self._server: BackgroundServer | None = None
        self.app = Starlette(routes=[
            WebSocketRoute("/websocket", self._websocket),
            Mount("/novnc", app=self._guarded(StaticFiles(directory=self._web))),
            Route("/{token}", self._open, methods=["GET"]),
        ])

    # -- handing out ----------------------------------------------------------------------------
    def link(self, desktop: Desktop, *, read_only: bool = True, expires_in: float = 300) -> Link:
        """A link that opens a live view of ``desktop`` once, within ``expires_in`` seconds."""
        if not 1 <= expires_in <= MAX_LINK_SECONDS:
            raise InvalidArgument(f"a viewer link expires within 1..{MAX_LINK_SECONDS} s, got {expires_in:g}")
        password = desktop.vnc.view_password if read_only else desktop.vnc.password
        token = secrets.token_urlsafe(32)
        grant = _Grant(desktop.client.api, desktop.id, desktop.name, password, read_only,
                       time.monotonic() + expires_in)
        with self._lock:
            self._drop_expired()
            self._links[_digest(token)] = grant
        return Link(f"{self.base_url}{self.path}/{token}", time.time() + expires_in, read_only)

    # -- a server of its own (vdesk view) ----------------------------------------------------------
    @classmethod
    def serve(cls, port: int = 0) -> Viewer:
        """A viewer on its own port of 127.0.0.1 (0: a free one); close it to stop serving."""
        listener = listen("127.0.0.1", port)
        viewer = cls(f"http://127.0.0.1:{listener.getsockname()[1]}")
        app = Starlette(routes=[Mount(cls.path, app=viewer.app)])
        viewer._server = BackgroundServer(app, listener, "the viewer", ws="websockets-sansio")
        return viewer

    @property
    def port(self) -> int:
        return int(urlsplit(self.base_url).port or 80)

    def close(self) -> None:
        """Stop serving (a viewer of its own) and forget every link and session."""
        with self._lock:
            self._links.clear()
            self._sessions.clear()
        if self._server is not None:
            self._server.close()

    def __enter__(self) -> Viewer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- serving -----------------------------------------------------------------------------------
    async def _open(self, request: Request) -> Response:
        """The link: good once, then a session cookie instead."""
        token = request.path_params["token"]
        with self._lock:
            self._drop_expired()
            grant = self._links.pop(_digest(token), None)
            if grant is None:
                return PlainTextResponse(REFUSED, status_code=403)
            session = secrets.token_urlsafe(32)
            grant.expires_at = time.monotonic() + 60  # the page opens its WebSocket at once
            self._sessions[session] = grant
        root = request.scope.get("root_path", "")
        query = (f"autoconnect=1&resize=scale&reconnect=0&view_only={int(grant.read_only)}"
                 f"&path={root.lstrip('/')}/websocket")
        response = RedirectResponse(f"{root}/novnc/vnc.html?{query}", status_code=303)
        response.set_cookie(COOKIE, session, httponly=True, samesite="strict", path=root or "/")
        response.headers["Cache-Control"] = "no-store"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response

    def _guarded(self, files: StaticFiles) -> Any:
        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            if self._session(Request(scope).cookies.get(COOKIE)) is None:
                await PlainTextResponse(REFUSED, status_code=403)(scope, receive, send)
                return
            await files(scope, receive, send)

        return app

    def _session(self, key: str | None) -> _Grant | None:
        with self._lock:
            grant = self._sessions.get(key or "")
            if grant is None or (not grant.websocket_used and time.monotonic() > grant.expires_at):
                return None
            return grant

    async def _websocket(self, websocket: WebSocket) -> None:
        key = websocket.cookies.get(COOKIE, "")
        with self._lock:
            grant = self._sessions.get(key)
            fresh = grant is not None and not grant.websocket_used and time.monotonic() <= grant.expires_at
            if fresh:
                assert grant is not None
                grant.websocket_used = True
        if not fresh or not _same_origin(websocket):
            await websocket.close(code=1008)
            return
        assert grant is not None
        requested = websocket.scope.get("subprotocols", [])
        await websocket.accept(subprotocol="binary" if "binary" in requested else None)
        try:
            await _bridge(websocket, grant)
        finally:
            with self._lock:
                self._sessions.pop(key, None)  # one session, one WebSocket

    def _drop_expired(self) -> None:
        now = time.monotonic()
        for digest in [d for d, grant in self._links.items() if now > grant.expires_at]:
            del self._links[digest]


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _same_origin(websocket: WebSocket) -> bool:
    """A browser sends Origin: refuse pages of another site (a cookie is not enough alone)."""
    origin = websocket.headers.get("origin")
    return origin is None or urlsplit(origin).netloc == websocket.headers.get("host")


class _Frames:
    """Bytes out of a WebSocket, read exactly."""

    def __init__(self, websocket: WebSocket) -> None:
        self._websocket = websocket
        self.buffer = b""

    async def exactly(self, count: int) -> bytes:
        while len(self.buffer) < count:
            self.buffer += await _receive_bytes(self._websocket)
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data


async def _receive_bytes(websocket: WebSocket) -> bytes:
    message = await websocket.receive()
    if message["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(message.get("code", 1000))
    return message.get("bytes") or (message.get("text") or "").encode()


async def _bridge(websocket: WebSocket, grant: _Grant) -> None:
    """Authenticate to the desktop's VNC server, offer the browser no authentication, then
    carry bytes both ways until either side closes."""
    tunnel = await anyio.to_thread.run_sync(lambda: Tunnel(grant.api, grant.container_id, VNC_TARGET))
    try:
        async with await anyio.connect_unix(tunnel.address) as vnc:
            server = BufferedByteReceiveStream(vnc)
            browser = _Frames(websocket)
            try:
                with anyio.fail_after(HANDSHAKE_TIMEOUT):
                    await _authenticate(vnc, server, grant.password)
                    await _offer_none(websocket, browser)
            except (VdeskError, TimeoutError, anyio.IncompleteRead, WebSocketDisconnect):
                await websocket.close(code=1011)
                return
            async with anyio.create_task_group() as group:
                async def upstream() -> None:
                    try:
                        if browser.buffer:
                            await vnc.send(browser.buffer)
                        while True:
                            await vnc.send(await _receive_bytes(websocket))
                    except (WebSocketDisconnect, anyio.BrokenResourceError, anyio.ClosedResourceError):
                        pass
                    group.cancel_scope.cancel()

                async def downstream() -> None:
                    try:
                        while True:
                            await websocket.send_bytes(await server.receive())
                    except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, RuntimeError):
                        pass
                    group.cancel_scope.cancel()

                group.start_soon(upstream)
                group.start_soon(downstream)
        with anyio.CancelScope(shield=True):
            try:
                await websocket.close()
            except RuntimeError:
                pass  # already closed by the browser
    finally:
        await anyio.to_thread.run_sync(tunnel.close)


async def _authenticate(vnc: Any, server: BufferedByteReceiveStream, password: str) -> None:
    version = await server.receive_exactly(12)
    if not version.startswith(b"RFB 003."):
        raise VNCUnavailable(f"not a VNC server: {version!r}")
    await vnc.send(b"RFB 003.008\n")
    count = (await server.receive_exactly(1))[0]
    if count == 0:
        length = struct.unpack(">I", await server.receive_exactly(4))[0]
        raise VNCUnavailable(f"the VNC server refused: {(await server.receive_exactly(length)).decode(errors='replace')}")
    if 2 not in await server.receive_exactly(count):
        raise VNCUnavailable("the VNC server does not offer VNC authentication")
    await vnc.send(b"\x02")
    await vnc.send(vnc_auth_response(password, await server.receive_exactly(16)))
    if struct.unpack(">I", await server.receive_exactly(4))[0] != 0:
        raise PasswordRefused("the VNC server refused the password")


async def _offer_none(websocket: WebSocket, browser: _Frames) -> None:
    await websocket.send_bytes(b"RFB 003.008\n")
    if not (await browser.exactly(12)).startswith(b"RFB 003."):
        raise ViewerRefused("the browser does not speak RFB")
    await websocket.send_bytes(b"\x01\x01")  # one security type: None
    if await browser.exactly(1) != b"\x01":
        raise ViewerRefused("the browser chose a security type that was not offered")
    await websocket.send_bytes(struct.pack(">I", 0))

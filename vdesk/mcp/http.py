"""``vdesk mcp --transport http``: streamable HTTP on the one loopback listener
(:mod:`vdesk.loopback`), as the viewer and OSWorld's server are served.

Each MCP session has its own desktop (``share=True``: one for all), removed when the client ends
the session (its DELETE) or after the session has been idle for ``idle_timeout`` seconds. The MCP
endpoint wants ``Authorization: Bearer TOKEN`` (401 without it), and the ``viewer_link`` tool
hands out one-time links to watch the desktop (:mod:`vdesk.viewer`), served beside it.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import METHOD_NOT_FOUND
from starlette.routing import Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from vdesk.errors import InvalidArgument
from vdesk.loopback import listen, uvicorn_config
from vdesk.mcp.pool import SHARED_KEY, ServerOptions
from vdesk.mcp.tools import Server, build_server, viewer_tool
from vdesk.viewer import Viewer

SESSION_HEADER = "mcp-session-id"


def serve_http(options: ServerOptions, *, port: int = 0, token: str | None = None,
               announce: Callable[[str, str, bool], None] | None = None) -> None:
    """Serve streamable HTTP on 127.0.0.1:``port`` until interrupted. ``announce(url, token,
    generated)`` runs once it listens."""
    import uvicorn

    if token is not None and len(token) < 16:
        raise InvalidArgument("--token must be at least 16 characters")
    generated = token is None
    token = token or secrets.token_urlsafe(32)
    listener = listen("127.0.0.1", port, what="--port")
    base = f"http://127.0.0.1:{listener.getsockname()[1]}"
    with Viewer(base) as viewer:
        server = build_http_server(options, token, base)
        server.viewer = viewer
        viewer_tool(server)
        # The SDK ends an idle session a little before this server removes its desktop, so no
        # call can reach a session whose desktop is on its way out.
        app = server.mcp.streamable_http_app(session_idle_timeout=max(1.0, options.idle_timeout - 1.0), host="127.0.0.1")
        app.router.routes.append(Mount(viewer.path, app=viewer.app))
        watched = SessionWatch(app, server.desktops.release, options.idle_timeout)
        config = uvicorn_config(watched, lifespan="on", ws="websockets-sansio")
        try:
            if announce is not None:
                announce(f"{base}/mcp", token, generated)
            uvicorn.Server(config).run(sockets=[listener])
        finally:
            watched.stop()
            server.desktops.close()
            listener.close()


def build_http_server(options: ServerOptions, token: str, url: str) -> Server:
    """The server with every tool, for callers with ``token`` at ``url``: a desktop per MCP
    session (with ``share``, one for all)."""
    auth = AuthSettings(issuer_url=url, resource_server_url=None)
    if options.share:
        return build_server(options, key=lambda ctx: SHARED_KEY, token_verifier=_StaticToken(token), auth=auth)
    return build_server(options, key=_session_key, middleware=[_handshake_only], token_verifier=_StaticToken(token),
                        auth=auth)


def _session_key(ctx: Context) -> str:
    session = (ctx.headers or {}).get(SESSION_HEADER)
    if not session:
        raise ToolError("no MCP session: this server keeps a desktop per session, which the initialize "
                        "handshake opens (or start it with --share)")
    return session


async def _handshake_only(ctx: Any, call_next: Any) -> Any:
    """A desktop belongs to an MCP session, which only the initialize handshake opens: a client
    probing for the sessionless protocol (``server/discover``) hears it is not served here, and
    falls back to the handshake."""
    if ctx.method == "server/discover":
        raise MCPError(code=METHOD_NOT_FOUND, message="Method not found: this server keeps a desktop per "
                       "session; use the initialize handshake", data=ctx.method)
    return await call_next(ctx)


class _StaticToken:
    """The bearer token printed at start; compared in constant time."""

    def __init__(self, token: str) -> None:
        self._token = token

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode(), self._token.encode()):
            return AccessToken(token=token, client_id="vdesk-mcp", scopes=[])
        return None


class SessionWatch:
    """ASGI middleware that sees every MCP session's requests: a session the client ended
    (DELETE) or that has had no request in flight for ``idle_timeout`` seconds loses its desktop."""

    def __init__(self, app: ASGIApp, release: Callable[[str], None], idle_timeout: float) -> None:
        self._app = app
        self._release = release
        self._idle_timeout = idle_timeout
        self._lock = threading.Lock()
        self._in_flight: dict[str, int] = {}
        self._last_seen: dict[str, float] = {}
        self._stopped = threading.Event()
        threading.Thread(target=self._reap, name="mcp-session-reaper", daemon=True).start()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        session = _header(scope, SESSION_HEADER) if scope["type"] == "http" else None
        if session is None:
            await self._app(scope, receive, send)
            return
        status = 0

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        self._enter(session)
        try:
            await self._app(scope, receive, watch)
        finally:
            self._leave(session)
        if scope.get("method") == "DELETE" and status < 400:
            await _in_thread(lambda: self._end(session))

    def stop(self) -> None:
        self._stopped.set()

    def _enter(self, session: str) -> None:
        with self._lock:
            self._in_flight[session] = self._in_flight.get(session, 0) + 1

    def _leave(self, session: str) -> None:
        with self._lock:
            if session not in self._in_flight:  # ended (DELETE, idle, shutdown) while this request ran
                return
            self._in_flight[session] -= 1
            self._last_seen[session] = time.monotonic()

    def _end(self, session: str) -> None:
        with self._lock:
            self._in_flight.pop(session, None)
            self._last_seen.pop(session, None)
        self._release(session)

    def _reap(self) -> None:
        while not self._stopped.wait(min(1.0, self._idle_timeout / 4)):
            now = time.monotonic()
            with self._lock:
                idle = [s for s, seen in self._last_seen.items()
                        if not self._in_flight.get(s) and now - seen >= self._idle_timeout]
            for session in idle:
                self._end(session)


async def _in_thread(call: Callable[[], None]) -> None:
    import anyio.to_thread

    await anyio.to_thread.run_sync(call)


def _header(scope: Scope, name: str) -> str | None:
    wanted = name.encode()
    for key, value in scope.get("headers", ()):
        if key.lower() == wanted:
            return bytes(value).decode("latin-1")
    return None


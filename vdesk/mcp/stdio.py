"""``vdesk mcp`` over stdio: the connection is the process, so the client closing its end ends
both, and the one desktop goes with them."""

from __future__ import annotations

from vdesk.mcp.pool import ServerOptions
from vdesk.mcp.tools import build_server


def serve_stdio(options: ServerOptions) -> None:
    """Serve on stdin/stdout until the client closes them; the desktop goes with the server."""
    server = build_server(options)
    try:
        server.mcp.run("stdio")
    finally:
        server.desktops.close()

"""`vdesk mcp`: a Model Context Protocol server that lets any MCP client drive a desktop.

Its parts: :mod:`vdesk.mcp.pool` (a desktop per connection, started on its first tool call and
leased to this process), :mod:`vdesk.mcp.tools` (the tool catalogue, typed, on the official
``mcp`` SDK), and the transports :mod:`vdesk.mcp.stdio` and :mod:`vdesk.mcp.http` (streamable
HTTP on the loopback, a desktop per MCP session, a bearer token, viewer links).

The names below are re-exported, each imported on first use: importing a part first (or this
package, for ``--help``) loads neither the SDK nor a desktop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vdesk.lazy import lazy_face

if TYPE_CHECKING:
    from vdesk.mcp.http import SessionWatch, build_http_server, serve_http
    from vdesk.mcp.pool import Desktops, ServerOptions, Slot
    from vdesk.spec import DesktopSpec
    from vdesk.mcp.stdio import serve_stdio
    from vdesk.mcp.tools import Server, argument_problems, build_server

__all__ = ["DesktopSpec", "ServerOptions", "Desktops", "Slot", "Server", "build_server", "argument_problems",
           "serve_stdio", "serve_http", "build_http_server", "SessionWatch"]

_HOMES = {
    "DesktopSpec": "vdesk.spec", "ServerOptions": "vdesk.mcp.pool", "Desktops": "vdesk.mcp.pool",
    "Slot": "vdesk.mcp.pool", "Server": "vdesk.mcp.tools", "build_server": "vdesk.mcp.tools",
    "argument_problems": "vdesk.mcp.tools", "serve_stdio": "vdesk.mcp.stdio", "serve_http": "vdesk.mcp.http",
    "build_http_server": "vdesk.mcp.http", "SessionWatch": "vdesk.mcp.http",
}


__getattr__, __dir__ = lazy_face(globals(), _HOMES, __all__)

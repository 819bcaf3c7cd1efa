"""Commands that let other programs drive desktops: the MCP server."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from vdesk.cli.options import OPTIONS, note
from vdesk.errors import InvalidArgument


def mcp(
    transport: Annotated[str, typer.Option(metavar="stdio|http", help=(
        "stdio (default): the MCP client starts this command and speaks on its stdin/stdout. "
        "http: streamable HTTP on 127.0.0.1, for clients that connect to a URL."))] = "stdio",
    port: Annotated[int, typer.Option(metavar="PORT", help="HTTP port on 127.0.0.1 (0: any free one).")] = 8765,
    token: Annotated[Optional[str], typer.Option(envvar="VDESK_MCP_TOKEN", metavar="TOKEN", help=(
        "The bearer token HTTP clients must send (default: a new random one, printed on stderr)."))] = None,
    attach: Annotated[Optional[str], typer.Option(metavar="NAME", help=(
        "Drive this existing desktop (see `vdesk ls`) instead of starting one; it is left running."))] = None,
    size: Annotated[str, typer.Option(metavar="WxH", help="Screen size of the desktops it starts.")] = "1280x800",
    apps: Annotated[bool, typer.Option("--apps", help="Start apps desktops (a browser, an office suite, ...).")] = False,
    share: Annotated[bool, typer.Option("--share", help="HTTP: every session drives one desktop (default: one each).")] = False,
    max_desktops: Annotated[int, typer.Option(metavar="N", help="HTTP: at most N desktops at once.")] = 4,
    idle_timeout: Annotated[float, typer.Option(metavar="SECONDS", help=(
        "HTTP: a session idle this long ends, and its desktop goes.") )] = 1800.0,
    allow_commands: Annotated[bool, typer.Option("--allow-commands", help=(
        "Also offer the run_command tool (runs programs in the desktop)."))] = False,
) -> None:
    """Serve a desktop to MCP clients (Model Context Protocol): screenshot, click, type, key,
    files, clipboard and more, as tools.

    \b
    Transports:
      stdio  the default; an MCP client runs `vdesk mcp` and talks on its stdin/stdout.
      http   streamable HTTP at http://127.0.0.1:PORT/mcp. Every request must carry
             `Authorization: Bearer TOKEN` (401 without it); the token is --token, or a
             random one printed on stderr at start. The viewer_link tool hands out
             one-time links to watch the desktop in a browser (no password in them).

    \b
    Desktop lifetime: a desktop starts on the first tool call and is leased to this server:
    it goes when the server ends, however it ends (the client closing stdio, Ctrl-C,
    SIGTERM, SIGKILL). Over HTTP each MCP session has its own desktop (--share: one for
    all), removed when the session ends (the client closes it, or it is idle for
    --idle-timeout), at most --max-desktops at once. A desktop that dies is reported as a
    tool error; the next call starts a fresh one. --attach NAME drives an existing desktop
    and never removes it.
    """
    from vdesk.container import parse_size
    from vdesk.mcp import DesktopSpec, ServerOptions, serve_http, serve_stdio

    if transport not in ("stdio", "http"):
        raise InvalidArgument(f"--transport must be stdio or http, got {transport!r}")
    if not 0 <= port <= 65535:
        raise InvalidArgument(f"--port must be 0..65535, got {port}")
    spec = DesktopSpec(size=parse_size(size), image="apps" if apps else "lean", attach=attach, engine=OPTIONS.engine)
    options = ServerOptions(desktop=spec, share=share, max_desktops=max_desktops, allow_commands=allow_commands,
                            idle_timeout=idle_timeout)
    if transport == "stdio":
        serve_stdio(options)  # stdout is the protocol's: nothing else may be printed there
        return

    def announce(url: str, token: str, generated: bool) -> None:
        note(f"vdesk mcp: serving MCP at {url}")
        note(f"vdesk mcp: bearer token: {token}" if generated else "vdesk mcp: bearer token: as given by --token")

    serve_http(options, port=port, token=token, announce=announce)


COMMANDS = {"mcp": mcp}

"""Commands that let other programs drive desktops: the MCP server, OSWorld's machine server."""

from __future__ import annotations

import threading
from typing import Annotated, Optional

import typer

from vdesk.cli.options import OPTIONS, note, say
from vdesk.errors import InvalidArgument


def mcp(
    ctx: typer.Context,
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
        "Also offer the run_command tool (runs programs in the desktop; with wait false one keeps "
        "running)."))] = False,
) -> None:
    """Serve a desktop to MCP clients (Model Context Protocol): screenshot, click, type, key,
    files, clipboard and more, as tools.

    \b
    Transports:
      stdio  the default; an MCP client runs `vdesk mcp` and talks on its stdin/stdout.
      http   streamable HTTP at http://127.0.0.1:PORT/mcp. Every request must carry
             `Authorization: Bearer TOKEN` (401 without it); the token is --token (or
             VDESK_MCP_TOKEN), or a random one printed on stderr at start. The
             viewer_link tool hands out one-time links to watch the desktop in a
             browser (no password in them).

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
    from vdesk.mcp.http import serve_http
    from vdesk.mcp.pool import ServerOptions
    from vdesk.spec import DesktopSpec
    from vdesk.mcp.stdio import serve_stdio

    if transport not in ("stdio", "http"):
        raise InvalidArgument(f"--transport must be stdio or http, got {transport!r}")
    if not 0 <= port <= 65535:
        raise InvalidArgument(f"--port must be 0..65535, got {port}")
    spec = DesktopSpec(size=parse_size(size), image="apps" if apps else None)
    options = ServerOptions(desktop=spec, attach=attach, engine=OPTIONS.engine, share=share, max_desktops=max_desktops, allow_commands=allow_commands,
                            idle_timeout=idle_timeout)
    if transport == "stdio":
        serve_stdio(options)  # stdout is the protocol's: nothing else may be printed there
        return

    source = ctx.get_parameter_source("token")  # typer does not export the enum: compared by name
    given = "VDESK_MCP_TOKEN" if source is not None and source.name == "ENVIRONMENT" else "--token"

    def announce(url: str, token: str, generated: bool) -> None:
        note(f"vdesk mcp: serving MCP at {url}")
        note(f"vdesk mcp: bearer token: {token}" if generated else f"vdesk mcp: bearer token: as given by {given}")

    serve_http(options, port=port, token=token, announce=announce)


def osworld_serve(
    size: Annotated[str, typer.Option(metavar="WxH", help="Screen size of the desktop it starts.")] = "1920x1080",
    attach: Annotated[Optional[str], typer.Option(metavar="NAME", help=(
        "Serve this existing desktop (see `vdesk ls`) instead of starting one; it is left running."))] = None,
    name: Annotated[Optional[str], typer.Option(metavar="NAME", help="Name of the desktop it starts.")] = None,
    image: Annotated[str, typer.Option(metavar="IMAGE", help=(
        "Image of the desktop it starts (osworld: GNOME, as OSWorld's agents see their machine; osworld-openbox: "
        "the same machine on openbox, faster; apps or a Docker image)."))] = "osworld",
    host: Annotated[Optional[str], typer.Option(metavar="ADDRESS", help=(
        "Loopback address to listen on (default: a random one in 127.0.0.0/8)."))] = None,
    port: Annotated[int, typer.Option(metavar="PORT", help="The server's port (0: a random free one).")] = 0,
    token: Annotated[Optional[str], typer.Option(envvar="VDESK_OSWORLD_TOKEN", metavar="TOKEN", help=(
        "Require `Authorization: Bearer TOKEN` on every request (at least 16 characters)."))] = None,
    auth: Annotated[bool, typer.Option("--auth", help="Require a bearer token: a new random one, printed in the line.")] = False,
    watch_stdin: Annotated[bool, typer.Option("--watch-stdin/--no-watch-stdin", help=(
        "Stop when stdin closes (default), for a parent process that holds the pipe."))] = True,
) -> None:
    """Serve one desktop with OSWorld's machine protocol (what desktop_env's controllers call)
    on this machine's loopback, with its Chromium debugging port, VNC and VLC tunnelled beside.

    \b
    When ready it prints ONE JSON line on stdout:
      {"name": ..., "host": "127.a.b.c", "server_port": N, "chromium_port": N,
       "vnc_port": N, "vlc_port": N, "token": null|"...", "vnc_password": "..."}
    and serves until stdin closes (--no-watch-stdin: not), SIGTERM or Ctrl-C, then removes the
    desktop it started (leased: even when this process is killed). --attach NAME serves an
    existing desktop and leaves it running.

    \b
    Safety: desktop_env's clients send no credentials, so by default the server listens on a
    random loopback address and random ports that nothing here can guess; local processes can
    still list sockets: --auth or --token makes every request carry a bearer token (401 without).
    """
    import secrets
    import signal
    import sys

    from vdesk.container import parse_size
    from vdesk.desktop import Desktop
    from vdesk.errors import DesktopGone
    from vdesk.osworld.server import check_loopback, serve

    if token is not None and len(token) < 16:
        raise InvalidArgument("--token must be at least 16 characters")
    if not 0 <= port <= 65535:
        raise InvalidArgument(f"--port must be 0..65535, got {port}")
    if attach and name:
        raise InvalidArgument("--attach and --name: give one (--name names a desktop it starts)")
    if host is not None:
        check_loopback(host)  # before any desktop starts
    token = token or (secrets.token_urlsafe(32) if auth else None)
    stop = threading.Event()
    if attach:
        desktop = Desktop.attach(attach, engine=OPTIONS.engine)
    else:
        note(f"vdesk osworld-serve: starting a {size} {image} desktop")
        desktop = Desktop.up(parse_size(size), image=image, name=name, engine=OPTIONS.engine)
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        with desktop, serve(desktop, host=host, port=port, token=token) as served:
            say(served.model_dump_json())
            if watch_stdin:
                threading.Thread(target=_until_eof, args=(sys.stdin.fileno(), stop), name="stdin-watch", daemon=True).start()
            while not stop.wait(1.0):
                if not desktop.is_alive():
                    raise DesktopGone(f"desktop {desktop.name} stopped")
    finally:
        signal.signal(signal.SIGTERM, previous)


def _until_eof(fd: int, stop: threading.Event) -> None:
    # The descriptor, not sys.stdin: a daemon thread blocked in a buffered read aborts the
    # interpreter's shutdown ("could not acquire lock for <stdin>").
    import os

    try:
        while os.read(fd, 65536):
            pass
    except (OSError, ValueError):
        pass
    stop.set()


COMMANDS = {"mcp": mcp, "osworld-serve": osworld_serve}

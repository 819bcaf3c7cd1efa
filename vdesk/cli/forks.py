"""Commands over checkpoints: checkpoint a desktop, fork a desktop or a checkpoint (see :mod:`vdesk.forks`)."""

from __future__ import annotations

import json
from typing import Annotated, Optional

import typer

from vdesk.cli.desktops import DEFAULT_TTL
from vdesk.cli.options import OPTIONS, say


def checkpoint(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The desktop to checkpoint (it keeps running).")],
    as_name: Annotated[Optional[str], typer.Option("--as", metavar="CHECKPOINT", help=(
        "The checkpoint's name (default: the desktop's and a random suffix)."))] = None,
) -> None:
    """Save a running desktop (screen, programs, files) as a checkpoint to fork from."""
    from vdesk.desktop import Desktop

    desktop = Desktop.attach(name, engine=OPTIONS.engine)
    try:
        taken = desktop.checkpoint(as_name)
    finally:
        desktop.close()
    say(f"{taken.name}  {taken.size / 2**20:.0f} MiB  of {taken.source}")


def fork(
    source: Annotated[str, typer.Argument(metavar="NAME|CHECKPOINT", help=(
        "A desktop (checkpointed first) or a checkpoint."))],
    n: Annotated[int, typer.Option("-n", metavar="N", help="How many forks to start at once.")] = 1,
    ttl: Annotated[float, typer.Option(metavar="SECONDS", help="Seconds until each fork stops itself (0: never).")] = DEFAULT_TTL,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON, one object per fork.")] = False,
) -> None:
    """Start N new desktops from a desktop's present state or from a checkpoint, each with its own password."""
    from vdesk import engine as engines, forks as checkpoints
    from vdesk.desktop import Desktop
    from vdesk.errors import DesktopNotFound
    from vdesk.inventory import find_desktop

    client = engines.connect(OPTIONS.engine)
    try:
        find_desktop(client, source)
        desktop = Desktop.attach(source, engine=OPTIONS.engine)
        try:
            made = desktop.fork(n, lease=False, ttl=ttl or None)
        finally:
            desktop.close()
    except DesktopNotFound:
        try:
            checkpoints.load(client, source)
        except DesktopNotFound:
            raise DesktopNotFound(f"no desktop or checkpoint named {source!r} (see `vdesk ls`)") from None
        made = Desktop.fork(source, n, lease=False, ttl=ttl or None, engine=OPTIONS.engine)
    for forked in made:
        vnc = f"vdesk vnc {forked.name}"
        if as_json:
            say(json.dumps({"name": forked.name, "vnc": vnc, "password": forked.vnc.password,
                            "checkpoint": forked.container.labels.get("vdesk.checkpoint")}))
        else:
            say(f"{forked.name}  VNC: {vnc}  password: {forked.vnc.password}")
        forked.close()


COMMANDS = {"checkpoint": checkpoint, "fork": fork}

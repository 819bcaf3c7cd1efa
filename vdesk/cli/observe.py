"""Commands that show what is on a desktop's screen beyond pixels: tree."""

from __future__ import annotations

import json
from typing import Annotated, Optional

import typer

from vdesk.cli.options import OPTIONS, say
from vdesk.errors import InvalidArgument

NAME = typer.Argument(metavar="NAME", help="The desktop's name (see `vdesk ls`).", show_default=False)
TREE_FORMATS = ("json", "xml", "table")


def tree(
    name: Annotated[str, NAME],
    format: Annotated[str, typer.Option(metavar="FORMAT", help=(
        "json (the typed tree), xml (OSWorld's, with attributes and actions) or table (the "
        "linearized one for prompts)."))] = "json",
    app: Annotated[Optional[list[str]], typer.Option("--app", metavar="NAME", help=(
        "Read only this application (repeatable), e.g. soffice, Chromium."))] = None,
    hidden: Annotated[bool, typer.Option("--hidden", help="Also read what is not showing (closed menus).")] = False,
    timeout: Annotated[float, typer.Option(metavar="SECONDS", help="Time for the whole read.")] = 5.0,
    max_chars: Annotated[int, typer.Option(metavar="N", help="Bound on the table's length.")] = 40_000,
) -> None:
    """Print the accessibility tree of a desktop (apps image); exit 1 if an application hung."""
    if format not in TREE_FORMATS:
        raise InvalidArgument(f"--format {format!r}: choose one of {', '.join(TREE_FORMATS)}")
    from vdesk.accessibility.osworld_xml import linearize, to_xml
    from vdesk.accessibility.tree import Limits
    from vdesk.desktop import Desktop

    limits = Limits(timeout=timeout, hidden=hidden, details=format == "xml")
    with Desktop.attach(name, engine=OPTIONS.engine) as desktop:
        read = desktop.accessibility_tree(limits, apps=tuple(app or ()))
    if format == "json":
        say(json.dumps(read.to_json(), ensure_ascii=False, indent=1))
    elif format == "xml":
        say(to_xml(read))
    else:
        say(linearize(read, max_chars=max_chars))
    for error in read.errors():
        typer.echo(f"vdesk: {error}", err=True)
    if read.errors():
        raise typer.Exit(1)


COMMANDS = {"tree": tree}

"""Commands that show what is on a desktop's screen beyond pixels: tree."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from vdesk.cli.options import OPTIONS, note, say
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
    indent: Annotated[Optional[int], typer.Option(metavar="N", help=(
        "json: spread every field over lines, indented N spaces (default: one line per node)."))] = None,
) -> None:
    """Print the accessibility tree of a desktop (apps image); exit 1 if an application hung."""
    if format not in TREE_FORMATS:
        raise InvalidArgument(f"--format {format!r}: choose one of {', '.join(TREE_FORMATS)}")
    if indent is not None and (format != "json" or not 0 <= indent <= 16):
        raise InvalidArgument(f"--indent {indent}: it is for --format json, 0..16 spaces")
    from vdesk.accessibility.osworld_xml import linearize, to_xml
    from vdesk.accessibility.tree import TreeLimits, json_text
    from vdesk.desktop import Desktop

    limits = TreeLimits(timeout=timeout, hidden=hidden, details=format == "xml")
    with Desktop.attach(name, engine=OPTIONS.engine) as desktop:
        read = desktop.elements.tree(limits, apps=tuple(app or ()), strict=True)
    if format == "json":
        say(json_text(read, indent))
    elif format == "xml":
        say(to_xml(read))
    else:
        say(linearize(read, max_chars=max_chars))
    if not any(len(app.root.children) for app in read.applications):
        silent = ", ".join(f"{w.title!r} ({w.wm_class})" if w.wm_class else repr(w.title) for w in read.silent)
        note(f"vdesk: no accessible objects on desktop {name}" + (
            f": {silent} expose{'s' if len(read.silent) == 1 else ''} none (not on the accessibility bus)" if silent else ""))
    for error in read.errors():
        typer.echo(f"vdesk: {error}", err=True)
    if read.errors():
        raise typer.Exit(1)


COMMANDS = {"tree": tree}

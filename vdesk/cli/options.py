"""What every command shares: the global options, and printing that never cuts or wraps.

Tables are plain aligned columns, like ``docker ps``: a name, a URL or a count is printed
whole at any terminal width or in a pipe (a line longer than the terminal wraps there, never
mid-cell here), so what a user must copy is always there to copy.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass
class Options:
    """Options that apply to every command (set by the app's callback)."""

    engine: str | None = None


OPTIONS = Options()


def say(line: str) -> None:
    """One line on stdout, as it is: names and URLs are never cut or wrapped."""
    print(line, flush=True)


def note(line: str) -> None:
    """One line on stderr (progress, hints), as it is: one write with its line break, so a
    Ctrl-C cannot land between the two (print writes them apart; a quiet whole run saw the
    boundary's "vdesk: interrupted" end up on `vdesk record`'s progress line)."""
    sys.stderr.write(f"{line}\n")
    sys.stderr.flush()


def columns(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """``rows`` under ``headers``, each column as wide as its widest cell, nothing cut."""
    table = [list(headers), *([str(cell) for cell in row] for row in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in table)

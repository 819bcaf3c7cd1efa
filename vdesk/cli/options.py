"""What every command shares: the global options, and printing that never cuts or wraps.

Tables are plain aligned columns, like ``docker ps``: a name, a URL or a count is printed
whole at any terminal width or in a pipe, never cut, so what a user must copy is always there
to copy. A table given a width (:func:`width`: the terminal's, or ``COLUMNS``) fits it by
folding whole columns onto indented lines under their row; in a pipe or a file each row is one
line, however long.
"""

from __future__ import annotations

import os
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


def width() -> int | None:
    """The width tables must fit: ``COLUMNS`` when set, else the terminal's when stdout is one;
    None in a pipe or a file, where a row stays on one line for the reader to grep."""
    given = os.environ.get("COLUMNS", "")
    if given.isdigit() and int(given) > 0:
        return int(given)
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns if sys.stdout.isatty() else None
    except (OSError, ValueError):  # no file number (a captured stdout), or no size to tell
        return None


FOLD = "  "  # what a row's folded lines start with
UNBOUNDED = 1 << 16  # the width of a table drawn for a pipe or a file: no line is that long


def columns(headers: Sequence[str], rows: Sequence[Sequence[str]], fit: int | None = None) -> str:
    """``rows`` under ``headers``, each column as wide as its widest cell, nothing cut. Within
    ``fit`` columns of text, the columns past it go onto lines of their own under each row
    (indented), so every line fits but one whose single cell is wider."""
    table = [list(headers), *([str(cell) for cell in row] for row in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    lines, folds = [], _folds(widths, fit)
    for row in table:
        for number, group in enumerate(folds):
            cells = "  ".join(row[i].ljust(widths[i]) for i in group)
            lines.append(((FOLD if number else "") + cells).rstrip())
    return "\n".join(lines)


def _folds(widths: Sequence[int], fit: int | None) -> list[list[int]]:
    """The columns on each line of a row: all on one, or as many as fit ``fit`` on each."""
    folds: list[list[int]] = [[]]
    used = 0  # characters on the line so far
    for index, cell in enumerate(widths):
        if folds[-1] and fit is not None and used + 2 + cell > fit:
            folds.append([])
            used = len(FOLD)
        used += (2 if folds[-1] else 0) + cell
        folds[-1].append(index)
    return folds

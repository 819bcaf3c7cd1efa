"""OSWorld's metrics on plain files out of the desktop: CSV records, an SQLite database queried
by the task, a Python file's text, VS Code's keybindings and HTML pages (parsed by BeautifulSoup
over lxml, as the reference parses them, so both walk the same tree).

The files are untrusted: each is read bounded (:mod:`vdesk.osworld.metrics.inputs`), a database
is opened read-only and immutable with its schema distrusted, and no file's content is run.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vdesk.errors import DocumentError
from vdesk.osworld.metrics.inputs import FILE_LIMIT, read_bytes
from vdesk.osworld.metrics.registry import metric

SQL_STEPS = 50_000_000  # sqlite VM steps a task's query may take before it is abandoned (scores 0)


def _utf8(path: Any) -> str | None:
    """A file's text as the reference reads it (UTF-8, universal newlines), or None when it is
    missing, too large or not UTF-8 (the reference then fails, scoring 0)."""
    try:
        text = read_bytes(path).decode("utf-8")
    except (DocumentError, UnicodeDecodeError):
        return None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _matches(pattern: Mapping[str, Any], record: Mapping[str, Any]) -> bool:
    return all(key in record and record[key] == value for key, value in pattern.items())


@metric("check_csv")
def check_csv(result: Any, expected: Any) -> float:
    """Some CSV record matches each ``expect`` pattern (column → value) and none matches any
    ``unexpect`` pattern."""
    if result is None or (text := _utf8(result)) is None:
        return 0.0
    if not isinstance(expected, Mapping):
        return 0.0
    rules = expected
    expect, unexpect = list(rules.get("expect", [])), list(rules.get("unexpect", []))
    found, clean = [False] * len(expect), True
    try:
        for record in csv.DictReader(io.StringIO(text, newline="")):
            found = [seen or _matches(pattern, record) for seen, pattern in zip(found, expect)]
            clean = clean and not any(_matches(pattern, record) for pattern in unexpect)
    except csv.Error:
        return 0.0
    return float(all(found) and clean)


@metric("run_sqlite3")
def run_sqlite3(result: Any, expected: Any) -> float:
    """The first column of the first row of the task's ``sql`` query on the database, as a
    number (none or empty: 0). The database is opened read-only and immutable (nothing is
    written next to it), its schema untrusted (no functions run from views or triggers), and the
    query bounded in steps."""
    if result is None or not isinstance(expected, Mapping) or not isinstance(expected.get("sql"), str):
        return 0.0
    path = Path(str(result))
    try:
        if not path.is_file() or path.stat().st_size > FILE_LIMIT:
            return 0.0
    except OSError:
        return 0.0
    uri = path.resolve().as_uri() + "?mode=ro&immutable=1"
    try:
        connection = sqlite3.connect(uri, uri=True)
    except sqlite3.Error:
        return 0.0
    try:
        connection.execute("PRAGMA trusted_schema = OFF")
        steps = [0]

        def budget() -> int:  # called every 1000 steps; non-zero aborts the query
            steps[0] += 1000
            return int(steps[0] > SQL_STEPS)

        connection.set_progress_handler(budget, 1000)
        row = connection.execute(expected["sql"]).fetchone()
        return float(row[0] or 0)
    except (sqlite3.Error, TypeError, ValueError, IndexError):
        return 0.0
    finally:
        connection.close()


_METADATA = ("#!", "# -*- coding:", "# coding:", "# coding=")


def _python_lines(text: str) -> list[str]:
    """A Python file's non-blank lines, tabs as four columns, trailing blanks dropped, after a
    shebang or coding line among its first three lines."""
    lines = text.splitlines()
    start = 0
    while start < min(len(lines), 3) and lines[start].strip().startswith(_METADATA):
        start += 1
    return [line.expandtabs(4).rstrip() for line in lines[start:] if line.strip()]


@metric("compare_python_pure_text")
def compare_python_pure_text(result: Any, expected: Any) -> float:
    """Two Python files hold the same text, but for blank lines, trailing blanks, tabs and a
    leading shebang or coding line. Anything else (a markdown fence) makes them differ."""
    if not result or not expected:
        return 0.0
    got, want = _utf8(result), _utf8(expected)
    if got is None or want is None:
        return 0.0
    return float(_python_lines(got) == _python_lines(want))


@metric("check_json_keybindings")
def check_json_keybindings(result: Any, expected: Any) -> float:
    """VS Code's keybindings file (a JSON list, maybe after a first comment line) holds the
    expected binding."""
    if result is None or (text := _utf8(result)) is None:
        return 0.0
    if not isinstance(expected, Mapping) or "expected" not in expected:
        return 0.0
    for candidate in (text, text.split("\n", 1)[1] if "\n" in text else ""):
        try:
            data = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        if isinstance(data, list):
            return float(expected["expected"] in data)
    return 0.0


@metric("compare_htmls", options=("ignore_sdnum",))
def compare_htmls(result: Any, expected: Any, ignore_sdnum: bool = False) -> float:
    """Two HTML files have the same tree: walked side by side, node by node, each pair of text
    nodes equal and each pair of elements alike in name, stripped text and attributes
    (``ignore_sdnum``: LibreOffice's ``sdnum`` number-format attribute left out). As in the
    reference, the walk stops at the shorter tree (a page with more after the expected one's end
    matches), and the attributes decide an element alone when ``ignore_sdnum`` is set."""
    from bs4 import BeautifulSoup, Tag

    texts = [_utf8(path) if path is not None else None for path in (result, expected)]
    if texts[0] is None or texts[1] is None:
        return 0.0
    one, two = (BeautifulSoup(text, "lxml") for text in texts)

    def alike(first: Any, second: Any) -> bool:
        if not (isinstance(first, Tag) and isinstance(second, Tag)):
            return bool(first == second)
        if first.name != second.name or first.text.strip() != second.text.strip():
            return False
        if first.attrs != second.attrs:
            if ignore_sdnum:
                return {k: v for k, v in first.attrs.items() if k != "sdnum"} == \
                    {k: v for k, v in second.attrs.items() if k != "sdnum"}
            return False
        return True

    return float(all(alike(a, b) for a, b in zip(one.descendants, two.descendants)))

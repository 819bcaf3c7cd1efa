"""vdesk's getters that turn a desktop's file into a value give what OSWorld's own getters give:
``content_from_vm_file`` (a spreadsheet's last row as text, which the reference reads with pandas)
is run by the reference's getter in its virtualenv, over a stand-in machine that serves the same
workbook, and by vdesk's reader; the answers must be equal."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.osworld.reference import REPO, reference_python

# Runs in .venv-osworld: the reference's getter over an env whose controller serves host files.
_CHILD = r"""
import json, sys, logging, types
logging.disable(logging.CRITICAL)
from desktop_env.evaluators.getters.file import get_content_from_vm_file
cache, paths = sys.argv[1], json.loads(sys.argv[2])
env = types.SimpleNamespace(cache_dir=cache, controller=types.SimpleNamespace(get_file=lambda p: open(p, "rb").read()))
out = []
for path in paths:
    try:
        out.append(get_content_from_vm_file(env, {"path": path, "file_type": "xlsx", "file_content": "last_row"}))
    except Exception as error:
        out.append({"error": type(error).__name__})
print(json.dumps(out))
"""

SHEETS: dict[str, list[list[Any]]] = {
    "ints": [["Name", "Citations", "h"], ["Ann", 345074, 147], ["Bob", 12, 3]],
    "all numbers": [["a", "b"], [1, 2], [3, 4.5]],
    "all whole numbers": [["a", "b"], [1, 2], [3, 4]],
    "decimals column": [["Name", "Score"], ["Ann", 1.5], ["Bob", 2]],
    "missing in a number column": [["Name", "Score", "Rank"], ["Ann", 1, 2], ["Bob", None, 3]],
    "missing last cell": [["Name", "Score", "Note"], ["Ann", 1, "x"], ["Bob", 2]],
    "numbers as text": [["Name", "Year"], ["Ann", "2021"], ["Bob", "2022"]],
    "text meaning missing": [["Name", "Note"], ["Ann", "ok"], ["Bob", "N/A"]],
    "mixed text and numbers": [["Name", "Value"], ["Ann", "high"], ["Bob", 7]],
    "booleans": [["Name", "Done"], ["Ann", True], ["Bob", False]],
    "leading and trailing blank rows": [[], ["Name", "Value"], ["Ann", 1], ["Bob", 2], [], []],
    "header shorter": [["Name"], ["Ann", 1], ["Bob", 2, "z"]],
    "a link": [["Name", "Link"], ["Ann", "https://example.org/a"], ["Bob", "https://hal.science/hal-04206682/document"]],
    "header only": [["Name", "Value"]],
}


def _workbook(path: Path, rows: list[list[Any]]) -> str:
    import openpyxl

    book = openpyxl.Workbook()
    for index, row in enumerate(rows, start=1):
        for column, value in enumerate(row, start=1):
            book.active.cell(row=index, column=column, value=value)
    book.save(path)
    return str(path)


def test_content_from_vm_file_last_row(tmp_path: Path) -> None:
    from vdesk.documents import last_row_text
    from vdesk.errors import DocumentError

    paths = [_workbook(tmp_path / f"{i}.xlsx", rows) for i, rows in enumerate(SHEETS.values())]
    cache = tmp_path / "cache"
    cache.mkdir()
    done = subprocess.run([str(reference_python()), "-c", _CHILD, str(cache), json.dumps(paths)],
                          capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    ours: list[Any] = []
    for path in paths:
        try:
            ours.append(last_row_text(Path(path).read_bytes()))
        except DocumentError:
            ours.append({"error": "IndexError"})
    differ = [f"{label}: vdesk {a!r}, reference {b!r}" for label, a, b in zip(SHEETS, ours, theirs) if a != b]
    assert not differ, "\n".join(differ)

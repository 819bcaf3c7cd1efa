"""OSWorld's desktop-state metrics: time zone, favourite apps, moved files, clipboard, desktop
shortcuts and browser history.

Their inputs are what command and listing getters returned (strings, dicts, lists), never files,
so nothing here reads the disk. A value of the wrong shape scores 0, as the reference's raising
does in its runner.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from vdesk.osworld.metrics.registry import metric


def _same_members(got: Any, want: Any) -> float:
    """The reference's test for listed names: as many of them, and the same set."""
    try:
        return float(len(got) == len(want) and set(got) == set(want))
    except TypeError:  # not sized, or unhashable members
        return 0.0


@metric("is_utc_0")
def is_utc_0(result: Any, expected: Any = None) -> float:
    """``timedatectl``'s fourth line (the time zone) ends in ``+0000)``."""
    if not isinstance(result, str):
        return 0.0
    lines = result.split("\n")
    return float(len(lines) > 3 and lines[3].endswith("+0000)"))


@metric("check_gnome_favorite_apps")
def check_gnome_favorite_apps(result: Any, expected: Any) -> float:
    """gsettings' favourite-apps list (a Python-literal list) holds exactly the expected apps.
    Read as a literal, never evaluated: the text comes from the desktop."""
    if not isinstance(result, str) or not isinstance(expected, Mapping):
        return 0.0
    try:
        apps = ast.literal_eval(result)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return 0.0
    return _same_members(apps, expected.get("expected"))


@metric("check_moved_jpgs")
def check_moved_jpgs(result: Any, expected: Any) -> float:
    """A directory listing's children are exactly the expected file names."""
    try:
        names = [node["name"] for node in result["children"]]
    except (TypeError, KeyError):
        return 0.0
    return _same_members(names, expected.get("expected") if isinstance(expected, Mapping) else None)


@metric("is_in_vm_clickboard")
def is_in_vm_clickboard(result: Any, expected: Any) -> float:
    """The clipboard's text (``expected``, a command's output) contains the rule's ``expected``
    text, or every one of a list of them. The arguments come in this order in the reference:
    the rule first, the command's output second."""
    if not isinstance(result, Mapping) or not isinstance(expected, str) or "expected" not in result:
        return 0.0
    wanted = result["expected"]
    try:
        if isinstance(wanted, list):
            return float(all(text in expected for text in wanted))
        return float(wanted in expected)
    except TypeError:  # a non-string piece
        return 0.0


def _shortcut_field(shortcuts: Mapping[str, Any], key: str, want: str, ignore_case: bool) -> bool:
    """One desktop file has ``key=want`` as a whole line, or a ``key=`` line that contains or is
    contained in ``want`` (ignoring case for names, as the reference does)."""
    for content in shortcuts.values():
        if not isinstance(content, str):
            continue
        if f"{key}={want}\n" in content:
            return True
        for line in content.split("\n"):
            if not line.startswith(f"{key}="):
                continue
            got = line[len(key) + 1:]
            one, two = (got.lower(), want.lower()) if ignore_case else (got, want)
            if got == want or two in one or one in two:
                return True
    return False


@metric("is_shortcut_on_desktop")
def is_shortcut_on_desktop(result: Any, expected: Any) -> float:
    """A desktop file (``result``: path → content) launches what the rule names, by ``Name=``
    (``{"type": "name", "name": ...}``) or ``Exec=`` (``{"type": "exec", "exec": ...}``). The
    reference implements no other rule type (``url``, ``id``): they score 0 there and here."""
    if not isinstance(result, Mapping) or not isinstance(expected, Mapping):
        return 0.0
    kind = expected.get("type")
    if kind == "name" and isinstance(expected.get("name"), str):
        return float(_shortcut_field(result, "Name", expected["name"], ignore_case=True))
    if kind == "exec" and isinstance(expected.get("exec"), str):
        return float(_shortcut_field(result, "Exec", expected["exec"], ignore_case=False))
    return 0.0


@metric("check_history_deleted")
def check_history_deleted(result: Any, expected: Any) -> float:
    """No history entry's URL (the first field of each row) contains any of the rule's
    ``keywords`` (``{"type": "keywords", "keywords": [...]}``, the only type the reference has)."""
    if not isinstance(expected, Mapping) or expected.get("type") != "keywords":
        return 0.0
    try:
        urls = [row[0] for row in result]
        return float(not any(keyword in url for keyword in expected["keywords"] for url in urls))
    except (TypeError, KeyError, IndexError):
        return 0.0

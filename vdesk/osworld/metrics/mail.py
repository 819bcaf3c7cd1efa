"""OSWorld's mail-client metrics: Thunderbird's preferences (``prefs.js``), its message filters
(``msgFilterRules.dat``) and folders exported as mbox text.

The files are untrusted and read bounded, as UTF-8 (the reference fails on anything else, which
scores 0); a preference's value is parsed as JSON, never evaluated.
"""

from __future__ import annotations

import functools
import json
import operator
import re
from collections.abc import Callable, Mapping
from typing import Any

from vdesk.errors import UnsupportedMetric
from vdesk.osworld.metrics.files import _matches, _utf8
from vdesk.osworld.metrics.registry import metric

_PREF = re.compile(r'^user_pref\("(?P<key>(?:[^"]|\\")+)", (?P<val>.+)\);$')
_ORDER: dict[str, Callable[[Any, Any], bool]] = {"t": operator.lt, "e": operator.le}


def _lines(text: str) -> list[str]:
    """The lines as a file iterates them: each with its newline, the last maybe without."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def pref_matches(value: Any, rule: Mapping[str, Any]) -> bool:
    """One ``{"method": ..., "ref": ...}`` check as the reference's preference rules make it:
    ``re[.FLAG...]`` (a search), eq/ne/lt/le/gt/ge, ``approx:<tolerance>``, ``range.XY``
    (X, Y: ``t`` strict, ``e`` inclusive), ``str_list_eq`` / ``str_set_eq`` (comma-split text)."""
    method, ref = str(rule.get("method", "")), rule.get("ref")
    try:
        if method.startswith("re"):
            flags = functools.reduce(operator.or_, (getattr(re, name) for name in method.split(".")[1:]), re.RegexFlag(0))
            return re.search(ref, value, flags) is not None
        if method in ("eq", "ne", "lt", "le", "gt", "ge"):
            return bool(getattr(operator, method)(value, ref))
        if method.startswith("approx"):
            tolerance = float(method.split(":")[1])
            try:
                number = float(value)
            except (TypeError, ValueError):
                return False
            return abs(number - ref) <= tolerance
        if method.startswith("range.") and len(method) >= 8 and method[6] in _ORDER and method[7] in _ORDER:
            return _ORDER[method[6]](ref[0], value) and _ORDER[method[7]](value, ref[1])
        if method in ("str_list_eq", "str_set_eq"):
            kind = list if method == "str_list_eq" else set
            return kind(value.strip("\"'").split(",")) == kind(ref)
    except (TypeError, ValueError, AttributeError, IndexError, KeyError, re.error) as error:
        raise ValueError(str(error)) from None  # the reference raises there: 0
    raise UnsupportedMetric(f"preference rule method {method!r} is not supported")


@metric("check_thunderbird_prefs")
def check_thunderbird_prefs(result: Any, expected: Any) -> float:
    """Each ``expect`` preference (name → rule) is set, its last value passing its rule, and no
    ``unexpect`` preference's value passes its rule."""
    if result is None or (text := _utf8(result)) is None or not isinstance(expected, Mapping):
        return 0.0
    expect, unexpect = dict(expected.get("expect", {})), dict(expected.get("unexpect", {}))
    passed = {key: False for key in expect}
    clean = True
    try:
        for line in _lines(text):
            found = _PREF.match(line.strip())
            if found is None:
                continue
            key, value = found.group("key"), json.loads(found.group("val"))
            if key in expect:
                passed[key] = pref_matches(value, expect[key])
            elif key in unexpect:
                clean = clean and not pref_matches(value, unexpect[key])
    except (ValueError, RecursionError):  # a value that is not JSON: 0, as there
        return 0.0
    return float(all(passed.values()) and clean)


# One condition of a filter: ``AND (subject,contains,"x")``, or ``ALL``.
_CONDITION = re.compile(r'\b(?:AND|OR) \([\w ]+,[\w \']+,(?:"[\s\S]+"|[^)]+)\)|\bALL\b')
_FIELDS = {"name=": "name", "enabled=": "enabled", "type=": "type", "action=": "action",
           "actionValue=": "actionValue"}


def _unquote(value: str) -> str:
    return value.replace('\\"', '"').replace("\\\\", "\\")


def read_filters(text: str) -> list[dict[str, Any]] | None:
    """The filters of a ``msgFilterRules.dat``: each from its ``name=`` line to its
    ``condition=`` line, values unquoted. None when a field comes before any ``name=``."""
    filters: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for line in _lines(text):
        if line.startswith("condition="):
            if current is None:
                return None
            current["condition"] = _CONDITION.findall(_unquote(line[11:-2]))
            filters.append(current)
            continue
        prefix = next((p for p in _FIELDS if line.startswith(p)), None)
        if prefix is None:
            continue
        if prefix == "name=":
            current = {}
        elif current is None:
            return None
        current[_FIELDS[prefix]] = _unquote(line[len(prefix) + 1:-2])
    return filters


@metric("check_thunderbird_filter")
def check_thunderbird_filter(result: Any, expected: Any) -> float:
    """Some filter matches each ``expect`` pattern (field → value; ``condition`` a list of
    conditions) and none matches any ``unexpect`` pattern."""
    if result is None or (text := _utf8(result)) is None or not isinstance(expected, Mapping):
        return 0.0
    if (filters := read_filters(text)) is None:
        return 0.0
    expect, unexpect = list(expected.get("expect", [])), list(expected.get("unexpect", []))
    found, clean = [False] * len(expect), True
    for one in filters:
        found = [seen or _matches(pattern, one) for seen, pattern in zip(found, expect)]
        clean = clean and not any(_matches(pattern, one) for pattern in unexpect)
    return float(all(found) and clean)


def _folder_digest(text: str, remove_duplicate: bool) -> str:
    """What the reference compares of an exported folder. Its reader keeps only the *blank*
    pieces between ``FROM - `` separators (its test of a piece is inverted), so two folders
    agree when they have as many blank pieces (or, deduplicated, both some or both none),
    whatever their messages say. vdesk gives that same verdict, the one OSWorld's scores
    were made with; the other options (status, keys, deleted messages) change nothing then."""
    blanks = ["FROM - " for piece in text.strip().split("FROM - ") if not piece.strip()]
    return "\n".join(sorted(set(blanks) if remove_duplicate else blanks))


@metric("check_thunderbird_folder", options=("ignore_status", "ignore_keys", "remove_deleted", "remove_duplicate"))
def check_thunderbird_folder(result: Any, expected: Any, ignore_status: bool = False, ignore_keys: bool = False,
                             remove_deleted: bool = True, remove_duplicate: bool = True) -> float:
    """Each exported folder (a path, or a list paired with the expected list) agrees with its
    expected one, as the reference compares them (see :func:`_folder_digest`)."""
    pairs = zip(result, expected) if isinstance(expected, list) else [(result, expected)]
    for got, want in pairs:
        if got is None or not isinstance(got, str) or not isinstance(want, str):
            return 0.0
        one, two = _utf8(got), _utf8(want)
        if one is None or two is None or _folder_digest(one, remove_duplicate) != _folder_digest(two, remove_duplicate):
            return 0.0
    return 1.0

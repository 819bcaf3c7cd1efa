"""OSWorld's metrics on what applications report: installed extensions (VS Code's list, the
browser's), the browser's active tab and search, and a program's printed result file."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse, urlunparse

from vdesk.errors import DocumentError
from vdesk.osworld.metrics.inputs import read_bytes
from vdesk.osworld.metrics.registry import metric

# Names the web store gave one extension over time: either counts as the other.
EXTENSION_ALIASES = ({"Zoom Chrome Extension", "Zoom for Google Chrome"},)


@metric("is_extension_installed")
def is_extension_installed(result: Any, expected: Any) -> float:
    """The extension list (a command's output) contains, or does not contain (``not_contain``),
    the rule's ``expected`` text."""
    if not isinstance(result, str) or not isinstance(expected, Mapping) or not isinstance(expected.get("expected"), str):
        return 0.0
    if expected.get("type") == "contain":
        return float(expected["expected"] in result)
    if expected.get("type") == "not_contain":
        return float(expected["expected"] not in result)
    return 0.0


def _canonical(name: Any) -> Any:
    for group in EXTENSION_ALIASES:
        if name in group:
            return sorted(group)[0]
    return name


@metric("is_expected_installed_extensions")
def is_expected_installed_extensions(result: Any, expected: Any) -> float:
    """Every expected extension name is among the installed ones (aliases counted as one)."""
    if not result or not isinstance(expected, Mapping) or "expected" not in expected:
        return 0.0
    try:
        return float({_canonical(n) for n in expected["expected"]} <= {_canonical(n) for n in result})
    except TypeError:
        return 0.0


def _tab_url(tab: Any) -> Any:
    return tab.get("url") if isinstance(tab, Mapping) else tab


@metric("is_expected_active_tab_approximate")
def is_expected_active_tab_approximate(result: Any, expected: Any) -> float:
    """The active tab shows the rule's ``url`` but for its query string (``{"type": "url"}``, the
    reference's only type)."""
    if not result or not isinstance(expected, Mapping) or expected.get("type") != "url":
        return 0.0
    got, want = _tab_url(result), expected.get("url")
    if not isinstance(got, str) or not isinstance(want, str):
        return 0.0
    try:
        strip = lambda url: urlunparse(urlparse(url)._replace(query=""))  # noqa: E731
        return float(strip(want) == strip(got))
    except ValueError:  # a malformed URL (bad IPv6 brackets)
        return 0.0


@metric("is_expected_search_query")
def is_expected_search_query(result: Any, expected: Any) -> float:
    """The active tab's URL matches the rule's ``expect.pattern`` (a regex search)."""
    if not result or not isinstance(result, Mapping) or not isinstance(result.get("url"), str):
        return 0.0
    try:
        pattern = expected["expect"]["pattern"]
        return float(re.search(pattern, result["url"]) is not None)
    except (TypeError, KeyError, re.error):
        return 0.0


def _stripped_text(path: Any) -> str | None:
    try:
        return read_bytes(path).decode("utf-8").strip()
    except (DocumentError, UnicodeDecodeError):
        return None


@metric("compare_result_files")
def compare_result_files(result: Any, expected: Any) -> float:
    """A program's output file says what the expected one says: when the expected text is a
    number, the output contains it or is a number within 1e-4 of it; else the same text
    (both stripped)."""
    if not result or not expected:
        return 0.0
    got, want = _stripped_text(result), _stripped_text(expected)
    if got is None or want is None:
        return 0.0
    try:
        wanted = float(want)
    except ValueError:
        return float(got == want)
    if want in got:
        return 1.0
    try:
        return float(abs(float(got) - wanted) < 1e-4)
    except ValueError:
        return float(got == want)

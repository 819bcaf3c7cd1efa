"""The browser's getters: tabs over CDP, and the profile's files (Preferences, Bookmarks,
the History and Cookies databases), and the desktop's shortcuts.

``active_url_from_accessTree`` reads the address bar from the accessibility tree and puts the
task's ``goto_prefix`` before it, as the reference does: the tab's address over CDP is not the
same when the desktop has no network (the error page's address) or the page is still loading.
The Chrome profile is ``~/.config/google-chrome`` or, on the apps image, ``~/.config/chromium``. Where the
reference's getter answers a fixed value when the profile's file is missing or unreadable
("Google", "false", None), these answer the same value: a task's score must not depend on
which of the two read a broken profile.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vdesk.errors import DocumentError
from vdesk.osworld import inside
from vdesk.osworld.getters.files import READ_LIMIT
from vdesk.osworld.getters.registry import getter
from vdesk.osworld.steps import Context, _cache_path

CHROME_PROFILES = ("~/.config/google-chrome", "~/.config/chromium")


def _profile_bytes(context: Context, name: str) -> bytes | None:
    for profile in CHROME_PROFILES:
        data = context.call(inside.file_bytes, context.expand(f"{profile}/Default/{name}"), READ_LIMIT, timeout=60)
        if data is not None:
            return data
    return None


# What reading a Preferences file the browser did not write as expected raises: no JSON, not
# UTF-8, no object, a value of another type than the browser writes, nesting too deep to parse.
_UNEXPECTED = (TypeError, ValueError, AttributeError, KeyError, RecursionError)


def _from_preferences(context: Context, read: Callable[[Any], Any], fallback: Any) -> Any:
    """``read(preferences)``, or ``fallback`` when the file is missing, is no JSON, or is not
    shaped as ``read`` expects (the reference answers its fixed value then). The bytes are
    parsed as JSON parses bytes (UTF-8, -16 or -32, a byte-order mark allowed), as the
    reference does: a file that is not valid UTF-8 is no JSON, not text with replaced bytes."""
    data = _profile_bytes(context, "Preferences")
    try:
        return read(json.loads(data)) if data is not None else fallback
    except _UNEXPECTED:
        return fallback


@getter("active_tab_info")
def active_tab_info(context: Context, settings: dict[str, Any]) -> dict[str, str]:
    return context.call(inside.active_tab, timeout=90)


@getter("open_tabs_info")
def open_tabs_info(context: Context, settings: dict[str, Any]) -> list[dict[str, str]]:
    return context.call(inside.tabs, timeout=90)


@getter("active_url_from_accessTree")
def active_url_from_access_tree(context: Context, settings: dict[str, Any]) -> str | None:
    return shown_address(context, settings)


def shown_address(context: Context, settings: dict[str, Any]) -> str | None:
    """The address bar's text after the task's ``goto_prefix`` (default ``https://``), as the
    reference builds the shown tab's address; None without a bar."""
    shown = context.call(inside.address_bar, timeout=90)
    return None if shown is None else f"{settings.get('goto_prefix', 'https://')}{shown}"


@getter("bookmarks")
def bookmarks(context: Context, settings: dict[str, Any]) -> Any:
    """The ``roots`` of the profile's Bookmarks; [] when the file is missing or empty. A file
    that is no JSON object fails the evaluation, as the reference's getter raises there."""
    data = _profile_bytes(context, "Bookmarks")
    if not data:
        return []
    try:
        roots = json.loads(data)
    except (ValueError, RecursionError) as error:
        raise DocumentError(f"the browser's Bookmarks file is no JSON: {error}") from error
    if not isinstance(roots, dict):
        raise DocumentError(f"the browser's Bookmarks file holds a JSON {type(roots).__name__}, not an object")
    return roots.get("roots", {})


# The Preferences readers take each value as the reference does: a missing key is its default,
# a value of another type is answered as is, and a container of the wrong type (a step of the
# path that is no object) gives the getter's fallback.
@getter("default_search_engine")
def default_search_engine(context: Context, settings: dict[str, Any]) -> Any:
    """The default search engine's short name ("Google" when none is set)."""
    return _from_preferences(context, lambda prefs: prefs.get("default_search_provider_data", {})
                             .get("template_url_data", {}).get("short_name", "Google"), "Google")


@getter("profile_name")
def profile_name(context: Context, settings: dict[str, Any]) -> Any:
    return _from_preferences(context, lambda prefs: prefs.get("profile", {}).get("name"), None)


_FONT_SIZES = {"default_fixed_font_size": 13, "default_font_size": 16, "minimum_font_size": 13}


@getter("chrome_font_size")
def chrome_font_size(context: Context, settings: dict[str, Any]) -> Any:
    """The profile's ``webkit.webprefs`` whole (the browser's defaults when it has none); for an
    unreadable profile the reference's fallback, which leaves out the minimum size."""
    return _from_preferences(context, lambda prefs: prefs.get("webkit", {}).get("webprefs", dict(_FONT_SIZES)),
                             {"default_fixed_font_size": 13, "default_font_size": 16})


@getter("enable_do_not_track")
def enable_do_not_track(context: Context, settings: dict[str, Any]) -> str:
    return _from_preferences(context, lambda prefs: "true" if prefs.get("enable_do_not_track") else "false", "false")


@getter("enable_enhanced_safety_browsing")
def enable_enhanced_safety_browsing(context: Context, settings: dict[str, Any]) -> str:
    return _from_preferences(
        context, lambda prefs: "true" if prefs.get("safebrowsing", {}).get("enhanced") else "false", "Google")


@getter("new_startup_page")
def new_startup_page(context: Context, settings: dict[str, Any]) -> str:
    """Whether the browser opens the new-tab page at start: "true" for a profile with no
    ``session`` entry (never given another choice) or ``session.restore_on_startup`` 5."""
    def read(prefs: Any) -> str:
        if "session" not in prefs.keys():
            return "true"
        return "true" if prefs["session"].get("restore_on_startup") == 5 else "false"
    return _from_preferences(context, read, "Google")


@getter("enable_safe_browsing")
def enable_safe_browsing(context: Context, settings: dict[str, Any]) -> str:
    """Safe browsing on, standard or enhanced: "true" / "false"."""
    def read(prefs: Any) -> str:
        safe = prefs.get("safebrowsing", {})
        return "true" if bool(safe.get("enhanced", False)) or bool(safe.get("enabled", False)) else "false"
    return _from_preferences(context, read, "false")


@getter("data_delete_automacally")
def data_delete_automatically(context: Context, settings: dict[str, Any]) -> str:
    """Whether any site setting was changed from its default (the profile then holds
    ``default_content_setting_values``), which is what the reference takes for "delete site
    data on exit" having been set: "true" / "false"."""
    return _from_preferences(
        context, lambda prefs: "false" if prefs["profile"].get("default_content_setting_values") is None else "true",
        "Google")


@getter("find_unpacked_extension_path")
def find_unpacked_extension_path(context: Context, settings: dict[str, Any]) -> Any:
    """The folder of every extension the profile knows (an unpacked one's is where it was loaded from)."""
    return _from_preferences(
        context, lambda prefs: [entry["path"] for entry in prefs.get("extensions", {}).get("settings", {}).values()],
        "Google")


@getter("find_installed_extension_name")
def find_installed_extension_name(context: Context, settings: dict[str, Any]) -> Any:
    """The manifest name of every extension the profile knows."""
    return _from_preferences(
        context,
        lambda prefs: [entry["manifest"]["name"] for entry in prefs.get("extensions", {}).get("settings", {}).values()],
        "Google")


_COLOR_SCHEMES = {"system": "system", "default": "system", "0": "system", "light": "light", "1": "light",
                  "dark": "dark", "2": "dark"}


@getter("chrome_appearance_mode_ui")
def chrome_appearance_mode_ui(context: Context, settings: dict[str, Any]) -> str:
    """The browser's colour mode, "light", "dark" or "system", as its settings page shows it.

    The reference reads the settings page's state and falls back to the profile's Preferences
    (``browser.theme.color_scheme2``, or ``color_scheme``; the classic theme chosen
    (``extensions.theme.system_theme`` 0) counts as light); the page shows those preferences,
    so vdesk reads them from the file. The pinned reference package has no such getter, so there
    is no differential test: the task's own values are checked instead."""
    def read(prefs: Any) -> str:
        theme = prefs.get("browser", {}).get("theme", {})
        raw = theme.get("color_scheme2", theme.get("color_scheme"))
        mode = None
        if isinstance(raw, str):
            mode = _COLOR_SCHEMES.get(raw.strip().lower())
        elif isinstance(raw, (int, float)):
            mode = {0: "system", 1: "light", 2: "dark"}.get(int(raw))
        if prefs.get("extensions", {}).get("theme", {}).get("system_theme") in (0, "0", False):
            return "light"
        return mode or "system"
    return _from_preferences(context, read, "system")


def _database_rows(context: Context, name: str, dest: str, query: str) -> list[tuple[Any, ...]] | None:
    """The rows of ``query`` over the profile's database ``name``, copied into the cache as
    ``dest``; None when it is missing or no database (the reference's answer then)."""
    data = _profile_bytes(context, name)
    if data is None:
        return None
    target = _cache_path(context, Path(dest).name)
    target.write_bytes(data)
    try:
        database = sqlite3.connect(target)
    except sqlite3.Error:
        return None
    try:
        return database.execute(query).fetchall()
    except sqlite3.Error:
        return None
    finally:
        database.close()


@getter("history")
def history(context: Context, settings: dict[str, Any]) -> list[tuple[Any, ...]] | None:
    """Every address in the browser's history: (url, title, last visit time)."""
    return _database_rows(context, "History", settings.get("dest", "History"), "SELECT url, title, last_visit_time FROM urls")


@getter("cookie_data")
def cookie_data(context: Context, settings: dict[str, Any]) -> list[tuple[Any, ...]] | None:
    """Every cookie the browser keeps, each row whole (the host is its second field)."""
    return _database_rows(context, "Cookies", settings.get("dest", "Cookies"), "SELECT * FROM cookies")


@getter("shortcuts_on_desktop")
def shortcuts_on_desktop(context: Context, settings: dict[str, Any]) -> dict[str, str]:
    """Each ``.desktop`` file in ``~/Desktop``: its name → its text."""
    folder = context.expand("~/Desktop")
    tree = context.call(inside.directory_tree, folder, timeout=90)
    found: dict[str, str] = {}
    for child in (tree or {}).get("children", []):
        if child["name"].endswith(".desktop"):
            data = context.call(inside.file_bytes, f"{folder}/{child['name']}", READ_LIMIT, timeout=60)
            if data is not None:
                found[child["name"]] = data.decode("utf-8", "replace")
    return found

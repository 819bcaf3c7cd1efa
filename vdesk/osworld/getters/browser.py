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


def _profile_file(context: Context, name: str) -> str | None:
    data = _profile_bytes(context, name)
    return None if data is None else data.decode("utf-8", "replace")


# What reading a Preferences file the browser did not write as expected raises.
_UNEXPECTED = (TypeError, ValueError, AttributeError, KeyError)


def _from_preferences(context: Context, read: Callable[[Any], Any], fallback: Any) -> Any:
    """``read(preferences)``, or ``fallback`` when the file is missing, is no JSON, or lacks
    what ``read`` looks for (the reference answers its fixed value then)."""
    text = _profile_file(context, "Preferences")
    try:
        return read(json.loads(text)) if text is not None else fallback
    except _UNEXPECTED:
        return fallback


def _preferences(context: Context) -> dict[str, Any]:
    text = _profile_file(context, "Preferences")
    try:
        value = json.loads(text) if text else {}
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _dig(data: Any, *keys: str, default: Any = None) -> Any:
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            return default
        data = data[key]
    return data


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
    text = _profile_file(context, "Bookmarks")
    try:
        return json.loads(text).get("roots", {}) if text else []
    except (json.JSONDecodeError, AttributeError):
        return []


@getter("default_search_engine")
def default_search_engine(context: Context, settings: dict[str, Any]) -> str:
    return str(_dig(_preferences(context), "default_search_provider_data", "template_url_data", "short_name",
                    default="Google"))


@getter("profile_name")
def profile_name(context: Context, settings: dict[str, Any]) -> Any:
    return _dig(_preferences(context), "profile", "name")


@getter("chrome_font_size")
def chrome_font_size(context: Context, settings: dict[str, Any]) -> dict[str, Any]:
    prefs = _dig(_preferences(context), "webkit", "webprefs", default={})
    return {"default_fixed_font_size": prefs.get("default_fixed_font_size", 13),
            "default_font_size": prefs.get("default_font_size", 16),
            "minimum_font_size": prefs.get("minimum_font_size", 13)}


@getter("enable_do_not_track")
def enable_do_not_track(context: Context, settings: dict[str, Any]) -> str:
    return "true" if _dig(_preferences(context), "enable_do_not_track", default=False) else "false"


@getter("enable_enhanced_safety_browsing")
def enable_enhanced_safety_browsing(context: Context, settings: dict[str, Any]) -> str:
    return "true" if _dig(_preferences(context), "safebrowsing", "enhanced", default=False) else "false"


@getter("new_startup_page")
def new_startup_page(context: Context, settings: dict[str, Any]) -> str:
    prefs = _preferences(context)
    return "true" if _dig(prefs, "session", "restore_on_startup") == 5 or not prefs else "false"


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

"""The browser's getters: tabs over CDP, and the profile's files (Preferences, Bookmarks).

``active_url_from_accessTree`` asks the browser for the shown tab's address over CDP (the
reference reads the address bar through AT-SPI): the value is the same. The Chrome profile is
``~/.config/google-chrome`` or, on the apps image, ``~/.config/chromium``.
"""

from __future__ import annotations

import json
from typing import Any

from vdesk.osworld import inside
from vdesk.osworld.getters.files import READ_LIMIT
from vdesk.osworld.getters.registry import getter
from vdesk.osworld.steps import Context

CHROME_PROFILES = ("~/.config/google-chrome", "~/.config/chromium")


def _profile_file(context: Context, name: str) -> str | None:
    for profile in CHROME_PROFILES:
        data = context.call(inside.file_bytes, context.expand(f"{profile}/Default/{name}"), READ_LIMIT, timeout=60)
        if data is not None:
            return data.decode("utf-8", "replace")
    return None


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
def active_url_from_access_tree(context: Context, settings: dict[str, Any]) -> str:
    return context.call(inside.active_url, timeout=90)


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

"""OSWorld's getters: what an evaluator's ``result`` and ``expected`` entries fetch, by type.

Files come to this machine, into the episode's cache folder, and the metric gets their path
(a list of paths for lists, None for a file that is not there, which scores 0). The others
return what the reference's return (strings, dicts, lists). Each getter is
``function(context, settings)``, ``settings`` being the entry's keys besides ``type``.

Where vdesk reads a thing differently from the reference, the value is the same:
``active_url_from_accessTree`` asks the browser for the shown tab's address over CDP (the
reference reads the address bar through AT-SPI); the Chrome profile is
``~/.config/google-chrome`` or, on the apps image, ``~/.config/chromium``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from vdesk.errors import CommandFailed, UnsupportedGetter
from vdesk.osworld import inside, relative_time
from vdesk.osworld.steps import COMMAND_TIMEOUT, Context, _cache_path

READ_LIMIT = 64 * 1024 * 1024       # bytes of one file brought out of a desktop
CHROME_PROFILES = ("~/.config/google-chrome", "~/.config/chromium")
Getter = Callable[[Context, dict[str, Any]], Any]


# -- files ------------------------------------------------------------------------------------
def _each(settings: dict[str, Any], one: Callable[[str, str], Any]) -> Any:
    """``path``/``dest`` as one value or parallel lists (``multi``)."""
    paths, dests = settings["path"], settings.get("dest", settings["path"])
    if isinstance(paths, list):
        dests = dests if isinstance(dests, list) else [Path(p).name for p in paths]
        return [one(path, dest) for path, dest in zip(paths, dests)]
    return one(paths, dests if isinstance(dests, str) else Path(paths).name)


def vm_file(context: Context, settings: dict[str, Any]) -> Any:
    def one(path: str, dest: str) -> str | None:
        data = context.call(inside.file_bytes, context.expand(path), READ_LIMIT, timeout=120)
        if data is None:
            return None
        target = _cache_path(context, Path(dest).name)
        target.write_bytes(data)
        return str(target)
    return _each(settings, one)


def cloud_file(context: Context, settings: dict[str, Any]) -> Any:
    def one(url: str, dest: str) -> str:
        local = context.files.cloud(url, dest)
        if local is None:  # found missing before the run; the folder changed since
            raise FileNotFoundError(f"{url} is not in the task-files folder ({context.files.where()})")
        target = _cache_path(context, f"expected-{Path(dest).name}")
        shutil.copyfile(local, target)
        return str(target)
    return _each(settings, one)


def cache_file(context: Context, settings: dict[str, Any]) -> Any:
    def one(path: str, dest: str) -> str | None:
        target = _cache_path(context, path)
        return str(target) if target.is_file() else None
    return _each(settings, one)


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


# -- commands ---------------------------------------------------------------------------------
def vm_command_line(context: Context, settings: dict[str, Any]) -> str:
    argv = context.argv(settings["command"], bool(settings.get("shell", False)))
    return context.call(inside.run, argv, COMMAND_TIMEOUT, timeout=COMMAND_TIMEOUT + 10).stdout


def vm_command_error(context: Context, settings: dict[str, Any]) -> str:
    argv = context.argv(settings["command"], bool(settings.get("shell", False)))
    return context.call(inside.run, argv, COMMAND_TIMEOUT, timeout=COMMAND_TIMEOUT + 10).stderr


# -- the task's own values ----------------------------------------------------------------------
def rule(context: Context, settings: dict[str, Any]) -> Any:
    return settings["rules"]


def rule_relative_time(context: Context, settings: dict[str, Any]) -> Any:
    """The rule with the dates its ``relativeTime`` phrases name written into ``expected``
    (see :mod:`vdesk.osworld.relative_time`), counted from the desktop's "now": its clock, as
    the programs in it see it, not this machine's."""
    stamp = context.call(inside.run, ["date", "+%Y-%m-%dT%H:%M:%S%:z"], 30).stdout.strip()
    try:
        now = datetime.fromisoformat(stamp)
    except ValueError:
        raise CommandFailed(f"rule_relativeTime: the desktop's date printed {stamp[:80]!r}, not a time") from None
    return relative_time.fill(settings["rules"], now)


def check_relative_time(settings: dict[str, Any]) -> None:
    """:class:`UnsupportedGetter` for a ``rule_relativeTime`` rule vdesk cannot fill."""
    relative_time.check(settings.get("rules"))


# -- the browser ------------------------------------------------------------------------------
def active_tab_info(context: Context, settings: dict[str, Any]) -> dict[str, str]:
    return context.call(inside.active_tab, timeout=90)


def open_tabs_info(context: Context, settings: dict[str, Any]) -> list[dict[str, str]]:
    return context.call(inside.tabs, timeout=90)


def active_url_from_access_tree(context: Context, settings: dict[str, Any]) -> str:
    return context.call(inside.active_url, timeout=90)


def bookmarks(context: Context, settings: dict[str, Any]) -> Any:
    text = _profile_file(context, "Bookmarks")
    try:
        return json.loads(text).get("roots", {}) if text else []
    except (json.JSONDecodeError, AttributeError):
        return []


def default_search_engine(context: Context, settings: dict[str, Any]) -> str:
    return str(_dig(_preferences(context), "default_search_provider_data", "template_url_data", "short_name",
                    default="Google"))


def profile_name(context: Context, settings: dict[str, Any]) -> Any:
    return _dig(_preferences(context), "profile", "name")


def chrome_font_size(context: Context, settings: dict[str, Any]) -> dict[str, Any]:
    prefs = _dig(_preferences(context), "webkit", "webprefs", default={})
    return {"default_fixed_font_size": prefs.get("default_fixed_font_size", 13),
            "default_font_size": prefs.get("default_font_size", 16),
            "minimum_font_size": prefs.get("minimum_font_size", 13)}


def enable_do_not_track(context: Context, settings: dict[str, Any]) -> str:
    return "true" if _dig(_preferences(context), "enable_do_not_track", default=False) else "false"


def enable_enhanced_safety_browsing(context: Context, settings: dict[str, Any]) -> str:
    return "true" if _dig(_preferences(context), "safebrowsing", "enhanced", default=False) else "false"


def new_startup_page(context: Context, settings: dict[str, Any]) -> str:
    prefs = _preferences(context)
    return "true" if _dig(prefs, "session", "restore_on_startup") == 5 or not prefs else "false"


# -- programs' settings ------------------------------------------------------------------------
def default_video_player(context: Context, settings: dict[str, Any]) -> str:
    return context.call(inside.run, ["xdg-mime", "query", "default", "video/mp4"], 30).stdout.strip()


def vlc_config(context: Context, settings: dict[str, Any]) -> str | None:
    return vm_file(context, {"path": "~/.config/vlc/vlcrc", "dest": settings.get("dest", "vlcrc")})


def gimp_config_file(context: Context, settings: dict[str, Any]) -> str | None:
    name = settings["file_name"]
    return vm_file(context, {"path": f"~/.config/GIMP/2.10/{name}", "dest": settings.get("dest", name)})


# -- the machine ------------------------------------------------------------------------------
def vm_screen_size(context: Context, settings: dict[str, Any]) -> dict[str, int]:
    return context.call(inside.screen_size)


def vm_window_size(context: Context, settings: dict[str, Any]) -> dict[str, int] | None:
    return context.call(inside.window_size, settings["app_class_name"])


def accessibility_tree(context: Context, settings: dict[str, Any]) -> str:
    """The screen's accessibility tree as the reference's ``/accessibility`` gives it: its XML."""
    return context.call(inside.accessibility_xml)


def list_directory(context: Context, settings: dict[str, Any]) -> dict[str, Any] | None:
    """The folder as the reference's ``/list_directory`` returns it (see :func:`inside.directory_tree`)."""
    return context.call(inside.directory_tree, context.expand(settings["path"]), timeout=90)


def vm_wallpaper(context: Context, settings: dict[str, Any]) -> str | None:
    uri = context.call(inside.run, ["gsettings", "get", "org.gnome.desktop.background", "picture-uri"], 30).stdout
    path = uri.strip().strip("'").removeprefix("file://")
    if not path:
        return None
    return vm_file(context, {"path": path, "dest": settings.get("dest", "wallpaper" + Path(path).suffix)})


GETTERS: dict[str, Getter] = {
    "vm_file": vm_file, "cloud_file": cloud_file, "cache_file": cache_file,
    "vm_command_line": vm_command_line, "vm_command_error": vm_command_error,
    "rule": rule, "rule_relativeTime": rule_relative_time,
    "active_tab_info": active_tab_info, "open_tabs_info": open_tabs_info,
    "active_url_from_accessTree": active_url_from_access_tree, "bookmarks": bookmarks,
    "default_search_engine": default_search_engine, "profile_name": profile_name,
    "chrome_font_size": chrome_font_size, "enable_do_not_track": enable_do_not_track,
    "enable_enhanced_safety_browsing": enable_enhanced_safety_browsing, "new_startup_page": new_startup_page,
    "default_video_player": default_video_player, "vlc_config": vlc_config, "gimp_config_file": gimp_config_file,
    "vm_screen_size": vm_screen_size, "vm_window_size": vm_window_size, "list_directory": list_directory,
    "vm_wallpaper": vm_wallpaper, "accessibility_tree": accessibility_tree,
}
# Getters that need what vdesk does not have yet: the reason a task using one is skipped.
NOT_YET = {
    # The reference reads GNOME Terminal's text through AT-SPI; the desktops' terminal is xterm,
    # which exposes no accessible text.
    "vm_terminal_output": "the vm_terminal_output getter needs GNOME Terminal's accessible text (vdesk's terminal is xterm)",
    "googledrive_file": "needs Google Drive (the googledrive_file getter)",
}


def getter(name: str) -> Getter:
    found = GETTERS.get(name)
    if found is None:
        raise UnsupportedGetter(NOT_YET.get(name, f"the {name} getter is not supported"))
    return found

"""Getters of programs' settings and of the machine: the video player, VLC's and GIMP's config,
the screen and window sizes, the accessibility tree, a folder's listing, the wallpaper."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vdesk.errors import DocumentError
from vdesk.osworld import inside
from vdesk.osworld.getters.files import vm_file
from vdesk.osworld.getters.registry import getter
from vdesk.osworld.steps import Context, _cache_path


@getter("default_video_player")
def default_video_player(context: Context, settings: dict[str, Any]) -> str:
    return context.call(inside.run, ["xdg-mime", "query", "default", "video/mp4"], 30).stdout.strip()


@getter("vlc_config")
def vlc_config(context: Context, settings: dict[str, Any]) -> str:
    """VLC's vlcrc; none (VLC never saved its settings) fails the evaluation, as the reference's
    getter raises there."""
    local = vm_file(context, {"path": "~/.config/vlc/vlcrc", "dest": settings.get("dest", "vlcrc")})
    if local is None:
        raise DocumentError("vlc_config: the desktop has no ~/.config/vlc/vlcrc (VLC has not saved its settings)")
    return str(local)


@getter("vlc_playing_info")
def vlc_playing_info(context: Context, settings: dict[str, Any]) -> str | None:
    """VLC's status.xml from its web interface, saved as ``dest``; None when VLC does not answer."""
    data = context.call(inside.vlc_status, timeout=30)
    if data is None:
        return None
    target = _cache_path(context, Path(settings.get("dest", "status.xml")).name)
    target.write_bytes(data)
    return str(target)


@getter("gimp_config_file")
def gimp_config_file(context: Context, settings: dict[str, Any]) -> str | None:
    """A file of GIMP's settings folder; None when it is missing or empty, as in the reference."""
    name = settings["file_name"]
    local = vm_file(context, {"path": f"~/.config/GIMP/2.10/{name}", "dest": settings.get("dest", name)})
    return None if local is None or Path(local).stat().st_size == 0 else str(local)


@getter("vm_screen_size")
def vm_screen_size(context: Context, settings: dict[str, Any]) -> dict[str, int]:
    return context.call(inside.screen_size)


@getter("vm_window_size")
def vm_window_size(context: Context, settings: dict[str, Any]) -> dict[str, int] | None:
    return context.call(inside.window_size, settings["app_class_name"])


@getter("accessibility_tree")
def accessibility_tree(context: Context, settings: dict[str, Any]) -> str:
    """The screen's accessibility tree as the reference's ``/accessibility`` gives it: its XML."""
    return context.call(inside.accessibility_xml)


@getter("list_directory")
def list_directory(context: Context, settings: dict[str, Any]) -> dict[str, Any] | None:
    """The folder as the reference's ``/list_directory`` returns it (see :func:`inside.directory_tree`)."""
    return context.call(inside.directory_tree, context.expand(settings["path"]), timeout=90)


@getter("vm_wallpaper")
def vm_wallpaper(context: Context, settings: dict[str, Any]) -> str | None:
    uri = context.call(inside.run, ["gsettings", "get", "org.gnome.desktop.background", "picture-uri"], 30).stdout
    path = uri.strip().strip("'").removeprefix("file://")
    if not path:
        return None
    return vm_file(context, {"path": path, "dest": settings.get("dest", "wallpaper" + Path(path).suffix)})

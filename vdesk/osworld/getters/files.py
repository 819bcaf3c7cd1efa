"""Getters that bring files to this machine: ``vm_file``, ``cloud_file``, ``cache_file``, and
``content_from_vm_file`` (a part of one: a spreadsheet's last row).

Files come into the episode's cache folder and the metric gets their path (with ``multi``, a list
of those ``gives`` picks; None for a file that is not there, which scores 0).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vdesk.errors import DocumentError, UnsupportedGetter
from vdesk.osworld import inside
from vdesk.osworld.getters.registry import getter
from vdesk.osworld.steps import Context, _cache_path

READ_LIMIT = 64 * 1024 * 1024       # bytes of one file brought out of a desktop


def _each(settings: dict[str, Any], one: Callable[[str, str], Any]) -> Any:
    """``one(path, dest)`` for ``path``/``dest``, or with ``multi`` for the pairs of their
    parallel lists whose index ``gives`` lists (default [0]), as the reference hands files on:
    one file as its value, several (or none) as a list."""
    if settings.get("multi", False):
        paths, dests = settings["path"], settings["dest"]
    else:
        paths, dests = [settings["path"]], [settings.get("dest", Path(settings["path"]).name)]
    gives = set(settings.get("gives", [0]))
    given = [one(path, dest) for index, (path, dest) in enumerate(zip(paths, dests)) if index in gives]
    return given[0] if len(given) == 1 else given


@getter("vm_file")
def vm_file(context: Context, settings: dict[str, Any]) -> Any:
    def one(path: str, dest: str) -> str | None:
        data = context.call(inside.file_bytes, context.expand(path), READ_LIMIT, timeout=120)
        if data is None:
            return None
        target = _cache_path(context, Path(dest).name)
        target.write_bytes(data)
        return str(target)
    return _each(settings, one)


@getter("cloud_file")
def cloud_file(context: Context, settings: dict[str, Any]) -> Any:
    def one(url: str, dest: str) -> str:
        local = context.files.cloud(url, dest)
        if local is None:  # found missing before the run; the folder changed since
            raise FileNotFoundError(f"{url} is not in the task-files folder ({context.files.where()})")
        target = _cache_path(context, f"expected-{Path(dest).name}")
        shutil.copyfile(local, target)
        return str(target)
    return _each(settings, one)


@getter("cache_file")
def cache_file(context: Context, settings: dict[str, Any]) -> str:
    """A file an earlier step saved in the cache (a command's output); one that is not there
    fails the evaluation, as the reference's getter asserts it is there."""
    target = _cache_path(context, settings["path"])
    if not target.is_file():
        raise DocumentError(f"cache_file: {settings['path']!r} is not in the episode's cache (no step saved it)")
    return str(target)


@getter("content_from_vm_file")
def content_from_vm_file(context: Context, settings: dict[str, Any]) -> list[str] | None:
    """A part of a file of the desktop: for ``file_type`` xlsx and ``file_content`` last_row,
    the first sheet's last row as text (:func:`vdesk.documents.last_row_text`); None when the
    file is not there."""
    kind, part = settings.get("file_type"), settings.get("file_content")
    if (kind, part) != ("xlsx", "last_row"):
        raise UnsupportedGetter(f"content_from_vm_file: file_type {kind!r} with file_content {part!r} is not supported "
                                "(supported: xlsx, last_row)")
    local = vm_file(context, {"path": settings["path"], "dest": Path(settings["path"]).name})
    if local is None:
        return None
    from vdesk.documents import last_row_text
    return last_row_text(Path(local).read_bytes())

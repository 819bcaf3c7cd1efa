"""Getters of what a deck on the desktop holds: ``audio_in_slide`` (a slide's sound) and
``background_image_in_slide`` (a slide's background picture).

The deck comes to this machine as ``vm_file`` brings it (into the cache, under its own name);
its XML is read here (defusedxml, the archive checked for zip bombs first). A file embedded in
the deck is unpacked into the cache under its path in the archive (``ppt/media/…``), as the
reference unpacks it; a linked one (``file://``) is fetched from the desktop as ``dest``. None
when the deck, the slide or the file is not there (the metric scores 0), where the reference
raises or returns None.
"""

from __future__ import annotations

import io
import posixpath
import zipfile
from pathlib import Path
from typing import Any

from vdesk.errors import DocumentError, InvalidArgument
from vdesk.osworld.getters.files import vm_file
from vdesk.osworld.getters.registry import getter
from vdesk.osworld.metrics.inputs import read_archive
from vdesk.osworld.steps import Context, _cache_path

A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
R_EMBED = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}embed"
RELATIONSHIP = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"

# Where a slide's media is: a member of the archive, or a file on the desktop.
Media = tuple[str, str]   # ("member", "ppt/media/media1.mp3") or ("file", "/home/user/song.mp3")


def _xml(archive: zipfile.ZipFile, member: str) -> Any | None:
    from defusedxml import ElementTree

    if member not in archive.namelist():
        return None
    return ElementTree.fromstring(archive.read(member))


def _target(archive: zipfile.ZipFile, slide: int, kind: str, wanted_id: str | None = None) -> Media | None:
    """The first relationship of slide ``slide`` (1-based) whose type names ``kind`` (and whose
    id is ``wanted_id``, if given): a member for a target relative to the slide (``../media/…``),
    a desktop path for a ``file://`` link; None for anything else."""
    rels = _xml(archive, f"ppt/slides/_rels/slide{slide}.xml.rels")
    if rels is None:
        return None
    for relation in rels.findall(RELATIONSHIP):
        if kind not in relation.get("Type", "") or (wanted_id is not None and relation.get("Id") != wanted_id):
            continue
        target = relation.get("Target", "")
        if target.startswith(".."):
            # Normalised before backslashes become slashes, as the reference does.
            return "member", posixpath.normpath(posixpath.join("ppt/slides", target)).replace("\\", "/")
        if target.startswith("file://"):
            return "file", target[len("file://"):]
        return None  # the reference asserts a link is a file:// one
    return None


def audio_of(data: bytes, slide_index: int) -> Media | None:
    """Where slide ``slide_index``'s (0-based) first sound is, in the deck's bytes."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return _target(archive, slide_index + 1, "audio")


def background_image_of(data: bytes, slide_index: int) -> Media | None:
    """Where slide ``slide_index``'s (0-based) background picture is: the first background
    (``p:bgPr``) whose first picture has an embedding id, that id looked up in the slide's
    relationships."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        slide = _xml(archive, f"ppt/slides/slide{slide_index + 1}.xml")
        if slide is None:
            return None
        image_id = None
        for background in slide.iter(f"{P}bgPr"):
            blip = next(background.iter(f"{A}blip"), None)
            image_id = blip.get(R_EMBED) if blip is not None else None
            if image_id is not None:
                break
        if image_id is None:
            return None
        return _target(archive, slide_index + 1, "image", image_id)


def _fetch(context: Context, settings: dict[str, Any], locate: Any) -> str | None:
    deck_path = settings["ppt_file_path"]
    local = vm_file(context, {"path": deck_path, "dest": Path(deck_path).name})
    if local is None:
        return None
    try:
        data = read_archive(local)
        where = locate(data, int(settings["slide_index"]))
        if where is None:
            return None
        kind, path = where
        if kind == "file":
            return vm_file(context, {"path": path, "dest": settings["dest"]})
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            if path not in archive.namelist():
                return None
            target = _cache_path(context, path)   # refuses a member path that leaves the cache
            target.write_bytes(archive.read(path))
        return str(target)
    except (DocumentError, InvalidArgument, zipfile.BadZipFile, ValueError):  # defusedxml's errors are ValueErrors
        return None


@getter("audio_in_slide")
def audio_in_slide(context: Context, settings: dict[str, Any]) -> str | None:
    """The sound in slide ``slide_index`` of the deck at ``ppt_file_path``, as a host path."""
    return _fetch(context, settings, audio_of)


@getter("background_image_in_slide")
def background_image_in_slide(context: Context, settings: dict[str, Any]) -> str | None:
    """The background picture of slide ``slide_index`` of the deck at ``ppt_file_path``, as a host path."""
    return _fetch(context, settings, background_image_of)

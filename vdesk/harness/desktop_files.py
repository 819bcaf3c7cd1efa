"""Files between the harness and a desktop: a task's folders packed here and unpacked there
(the ``upload`` and ``serve`` setup steps), and files read out for checks.

Packing happens on the controller, so a task's files reach a desktop on another machine as
bytes; the desktop's own :class:`vdesk.files.Files` moves them, with its bounds (what comes out
is untrusted: its size is bounded before anything is read).
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from vdesk.desktop import Desktop
from vdesk.errors import InvalidArgument
from vdesk.files import remote_path

READ_LIMIT = 32 * 1024 * 1024    # bytes a check reads out of a desktop
PACK_LIMIT = 16 * 1024 * 1024    # bytes of a task folder copied in


def read_file(desktop: Desktop, path: str, limit: int = READ_LIMIT, timeout: float = 60.0) -> bytes | None:
    """The bytes of the file at ``path`` (relative to the home), None when there is none;
    :class:`~vdesk.errors.TooLarge` past ``limit`` bytes."""
    if desktop.programs.run(["test", "-f", remote_path(path)], wait=True, timeout=timeout).returncode != 0:
        return None
    return desktop.files.read_file(path, limit=limit, timeout=timeout)


def pack(source: Path, limit: int = PACK_LIMIT) -> bytes:
    """A file or folder of this machine as a tar archive holding it under its own name (as
    ``cp -r`` would copy it): regular files and folders only, links left out."""
    if not (source.is_file() or source.is_dir()):
        raise InvalidArgument(f"{source}: no such file or folder")
    source = source.resolve()  # the one named may be a link; the links inside it are left out
    paths = [source] + (sorted(source.rglob("*")) if source.is_dir() else [])
    buffer = io.BytesIO()
    total = 0
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for path in paths:
            if path.is_symlink() or not (path.is_file() or path.is_dir()):
                continue
            total += path.stat().st_size if path.is_file() else 0
            if total > limit:
                raise InvalidArgument(f"{source}: over {limit} bytes, too much to copy into a desktop")
            archive.add(path, arcname=(Path(source.name) / path.relative_to(source)).as_posix(), recursive=False)
    return buffer.getvalue()


def unpack_into(desktop: Desktop, archive: bytes, destination: str, timeout: float = 60.0) -> None:
    """Unpack an archive made by :func:`pack` into ``destination`` (relative to the home)."""
    desktop.files.unpack(archive, destination, timeout=timeout)

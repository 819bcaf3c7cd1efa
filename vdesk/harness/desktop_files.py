"""Files between the harness and a desktop, over the desktop's command channel.

The harness needs two things: a task's folder copied in (the ``serve`` setup step) and a file
read out for a check. Both travel as base64 text through :meth:`Desktop.run`, so they work with
no network and on a remote engine. (When the desktop grows its own ``read_file``/``upload``,
these two functions become calls to it.) What comes out is untrusted: its size is bounded
in the desktop, before anything is sent, and again here.
"""

from __future__ import annotations

import base64
import binascii
import io
import tarfile
from pathlib import Path

from vdesk.desktop import Desktop
from vdesk.errors import CommandFailed, InvalidArgument

READ_LIMIT = 32 * 1024 * 1024    # bytes a check reads out of a desktop
PACK_LIMIT = 16 * 1024 * 1024    # bytes of a task folder copied in
MISSING = 3                      # the exit code of the reader when there is no such file
TOO_BIG = 4

_READ = """cd || exit 1
[ -f "$1" ] || { echo "no such file" >&2; exit 3; }
size=$(stat -L -c %s -- "$1") || exit 1
[ "$size" -le "$2" ] || { echo "it is $size bytes, over the limit of $2" >&2; exit 4; }
head -c "$2" -- "$1" | base64 -w 0"""
_UNPACK = 'cd && mkdir -p -- "$1" && base64 -d | tar -x --no-same-owner --no-same-permissions -C "$1" -f -'


class FileTooLarge(CommandFailed):
    """A file in the desktop is larger than the reader allows."""


def read_file(desktop: Desktop, path: str, limit: int = READ_LIMIT, timeout: float = 60.0) -> bytes | None:
    """The bytes of the file at ``path`` (relative to the home), None when there is none."""
    done = desktop.run(["sh", "-c", _READ, "sh", path, str(limit)], wait=True, timeout=timeout)
    if done.returncode == MISSING:
        return None
    if done.returncode == TOO_BIG:
        raise FileTooLarge(f"{path}: {done.stderr.strip()}")
    done.check()
    try:
        data = base64.b64decode(done.stdout, validate=True)
    except (binascii.Error, ValueError):
        raise CommandFailed(f"{path}: the desktop's answer is not base64") from None
    if len(data) > limit:
        raise FileTooLarge(f"{path}: it is over the limit of {limit} bytes")
    return data


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
    text = base64.b64encode(archive).decode("ascii")
    desktop.run(["sh", "-c", _UNPACK, "sh", destination], wait=True, stdin=text, timeout=timeout).check()

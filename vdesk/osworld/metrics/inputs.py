"""Reading what the getters brought to the host, bounded: text files, JSON, office archives.

Every file out of a desktop is untrusted: it is read up to :data:`FILE_LIMIT` bytes (past that
it is refused), an office archive is checked for zip bombs before a library opens it
(:func:`vdesk.documents.check_archive`), and XML is parsed without entity expansion.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vdesk.errors import DocumentError
from vdesk.documents import check_archive

FILE_LIMIT = 64 << 20  # bytes a metric reads from one file


def read_bytes(path: str | Path) -> bytes:
    """The bytes of ``path``; :class:`DocumentError` when it is missing or past the limit."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > FILE_LIMIT:
            raise DocumentError(f"{path}: {size} bytes, over the limit of {FILE_LIMIT}")
        with path.open("rb") as handle:
            return handle.read(FILE_LIMIT + 1)
    except OSError as error:
        raise DocumentError(f"{path}: cannot be read ({error.strerror or error})") from None


def read_text(path: str | Path) -> str:
    """The text of ``path``: UTF-8 (a BOM dropped), else Latin-1, which reads any bytes."""
    data = read_bytes(path)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def result_text(path: Any) -> str | None:
    """The text of a result file, or None when there is none or it cannot be read (it scores 0)."""
    if path is None:
        return None
    try:
        return read_text(path)
    except DocumentError:
        return None


def read_json(path: str | Path) -> Any:
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as error:
        raise DocumentError(f"{path}: not JSON ({error.msg} at line {error.lineno})") from None


def read_archive(path: str | Path) -> bytes:
    """An office file's bytes, refused when its archive would unpack past the limits."""
    data = read_bytes(path)
    check_archive(data)
    return data


def paths(value: Any) -> list[str] | None:
    """A getter's file result as a list of paths; None when any file is missing."""
    items = value if isinstance(value, list) else [value]
    if not items or any(item is None for item in items):
        return None
    return [str(item) for item in items]

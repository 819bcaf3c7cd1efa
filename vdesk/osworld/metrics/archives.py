"""OSWorld's archive metric ``compare_zip_files``: two zip files hold the same members with the
same bytes (PDF members: nearly the same text).

The archives are untrusted: they are read into memory bounded, refused past the member and
unpacked-size limits (a zip bomb) before any member is read, and nothing is extracted to disk.
"""

from __future__ import annotations

import io
import zipfile
from difflib import SequenceMatcher
from typing import Any

from vdesk.errors import DocumentError
from vdesk.osworld.metrics.inputs import read_archive
from vdesk.osworld.metrics.registry import metric

PDF_SIMILARITY = 0.95  # the reference's threshold for two PDF members' texts


def _pdf_text(data: bytes) -> str:
    """Every page's text, run together as the reference joins them."""
    import pypdf

    reader = pypdf.PdfReader(io.BytesIO(data))
    return "".join(page.extract_text() or "" for page in reader.pages)


def _same_member(name: str, one: bytes, two: bytes) -> bool:
    if not name.lower().endswith(".pdf"):
        return one == two
    try:
        return SequenceMatcher(None, _pdf_text(one), _pdf_text(two)).ratio() >= PDF_SIMILARITY
    except Exception:  # pypdf's many errors for a damaged PDF: the reference fails, scoring 0
        return False


@metric("compare_zip_files")
def compare_zip_files(result: Any, expected: Any) -> float:
    """The same member names in both archives, and each member the same."""
    if not result or not expected:
        return 0.0
    try:
        with zipfile.ZipFile(io.BytesIO(read_archive(str(result)))) as got, \
                zipfile.ZipFile(io.BytesIO(read_archive(str(expected)))) as want:
            names = set(got.namelist())
            if names != set(want.namelist()):
                return 0.0
            return float(all(_same_member(name, got.read(name), want.read(name)) for name in names))
    except (DocumentError, zipfile.BadZipFile, zipfile.LargeZipFile, RuntimeError, NotImplementedError, EOFError):
        # damaged, encrypted or of an unknown compression: the reference fails on it too
        return 0.0

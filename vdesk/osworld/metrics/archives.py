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
from vdesk.osworld.metrics.inputs import read_archive, read_bytes
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


# -- e-books --------------------------------------------------------------------------------
def _epub_html_lines(data: bytes) -> list[str]:
    """An html member pretty-printed as the reference rewrites it (its own line breaks dropped
    first), as lines. lxml's HTML parser reads no DTD and fetches nothing."""
    import lxml.html

    text = data.decode("utf-8").replace("\n", "").replace("\r", "")
    parser = lxml.html.HTMLParser(no_network=True, huge_tree=False)
    tree = lxml.html.fromstring(text.encode(), parser=parser)
    return lxml.html.tostring(tree, pretty_print=True, encoding="unicode").splitlines()


def _epub_pieces(path: str) -> list[list[str]] | None:
    """The lines the reference compares of an e-book, in the order of its member names:
    ``toc.ncx`` without navPoint lines, ``content.opf`` without dc:identifier lines, each
    ``.html`` member pretty-printed. ``[]`` when it is no zip; None when the reference fails on
    it (an html member in a folder, text that is not UTF-8, html lxml cannot read)."""
    try:
        book = zipfile.ZipFile(io.BytesIO(read_archive(path)))
    except DocumentError as error:
        if "not a zip archive" in str(error):
            return []
        return None
    pieces: dict[str, list[str]] = {}
    try:
        with book:
            names = book.namelist()
            for name, dropped in (("toc.ncx", "navPoint"), ("content.opf", "dc:identifier")):
                if name in names:
                    pieces[name] = [line for line in book.read(name).decode("utf-8").splitlines() if dropped not in line]
            for name in names:
                if name.endswith(".html"):
                    if "/" in name:  # the reference writes it into a folder it never made, and fails
                        return None
                    pieces[name] = _epub_html_lines(book.read(name))
    except Exception:  # bad UTF-8, unreadable html, damaged member: the reference fails there too
        return None
    return [pieces[name] for name in sorted(pieces)]


@metric("compare_epub")
def compare_epub(result: Any, expected: Any) -> float:
    """How alike two e-books are: the mean, over the result's compared pieces (table of
    contents, package file, html pages, paired by name order), of difflib's line ratio."""
    if result is None or expected is None:
        return 0.0
    got, want = _epub_pieces(str(result)), _epub_pieces(str(expected))
    if got is None or want is None or not got:
        return 0.0
    total = sum(SequenceMatcher(a=one, b=two).ratio() for one, two in zip(got, want))
    return total / len(got)


# -- archives of files of one kind -----------------------------------------------------------
# compare_archive's file_type → the vdesk metric comparing one pair of unpacked files.
_ARCHIVE_KINDS = {"text": "compare_text_file", "pdf": "compare_pdfs", "docx": "compare_docx_files",
                  "ppt": "compare_pptx_files", "csv": "compare_csv", "table": "compare_table"}
ARCHIVE_OPTIONS = ("file_path", "file_type", "ignore_blanks", "ignore_case", "strict", "rules",
                   "ignore_order", "content_only", "fuzzy_match", "delete_empty_lines")


def _check_archive_options(options: Any) -> None:
    kind = options.get("file_type", "text")
    if kind not in _ARCHIVE_KINDS:  # image, audio, video: metrics vdesk does not have
        from vdesk.errors import UnsupportedMetric
        raise UnsupportedMetric(f"compare_archive: file_type {kind!r} is not supported "
                                f"(supported: {', '.join(_ARCHIVE_KINDS)})")


def _safe_member(name: str) -> bool:
    from pathlib import PurePosixPath
    parts = PurePosixPath(name).parts
    return bool(parts) and not PurePosixPath(name).is_absolute() and ".." not in parts


def _unpack(path: str, into: str) -> None:
    """Unpack a zip or tar archive into ``into``: regular files and folders only, every name
    inside it, refused past the member and unpacked-size limits. DocumentError when refused."""
    import os
    import tarfile

    from vdesk.documents import MEMBER_LIMIT, UNPACKED_LIMIT

    data = read_bytes(path)
    if zipfile.is_zipfile(io.BytesIO(data)):
        archive = zipfile.ZipFile(io.BytesIO(read_archive(path)))  # the zip-bomb check first
        with archive:
            for member in archive.infolist():
                if not _safe_member(member.filename):
                    raise DocumentError(f"{path}: member {member.filename!r} would land outside")
                target = os.path.join(into, member.filename)
                if member.is_dir():
                    os.makedirs(target, exist_ok=True)
                    continue
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "wb") as out:
                    out.write(archive.read(member))
        return
    try:
        archive_tar = tarfile.open(fileobj=io.BytesIO(data))
    except tarfile.TarError:
        raise DocumentError(f"{path}: neither a zip nor a tar archive") from None
    with archive_tar:
        members = archive_tar.getmembers()
        if len(members) > MEMBER_LIMIT or sum(m.size for m in members) > UNPACKED_LIMIT:
            raise DocumentError(f"{path}: the archive is past the member or size limits")
        for member in members:
            if not _safe_member(member.name) or not (member.isfile() or member.isdir()):
                raise DocumentError(f"{path}: member {member.name!r} is a link, a device or outside")
        archive_tar.extractall(into, members=members, filter="data")


@metric("compare_archive", options=ARCHIVE_OPTIONS, check=_check_archive_options)
def compare_archive(result: Any, expected: Any, file_path: str = "", file_type: str = "text", **options: Any) -> float:
    """Two archives hold the same file names (in ``file_path``, a folder inside them), and
    the mean over those files of the ``file_type`` metric (text, pdf, docx, ppt, csv, table),
    given the remaining options. Each archive is unpacked into its own temporary folder."""
    import os
    import tempfile

    from vdesk.osworld.metrics.registry import registered

    if not result or not expected:
        return 0.0
    compare = registered()[_ARCHIVE_KINDS[file_type]]
    with tempfile.TemporaryDirectory(prefix="vdesk-archive-") as got, \
            tempfile.TemporaryDirectory(prefix="vdesk-archive-") as want:
        try:
            _unpack(str(result), got)
            _unpack(str(expected), want)
            here, there = os.path.join(got, file_path), os.path.join(want, file_path)
            if not os.path.realpath(here).startswith(os.path.realpath(got)):
                return 0.0
            names, gold = sorted(os.listdir(here)), sorted(os.listdir(there))
        except (DocumentError, OSError):
            return 0.0
        if names != gold or not names:
            return 0.0
        total = 0.0
        for name in names:
            try:
                total += compare(os.path.join(here, name), os.path.join(there, name), **options)
            except (DocumentError, OSError, ValueError):
                pass  # the reference's runner scores a failing comparison 0
        return total / len(names)

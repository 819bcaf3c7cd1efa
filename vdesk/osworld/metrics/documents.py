"""OSWorld's document metrics: ``compare_docx_files``, ``compare_pdfs``, ``compare_docx_tables``,
``compare_line_spacing`` (presentations are :mod:`vdesk.osworld.metrics.slides`).

Text documents and PDFs are read by :mod:`vdesk.documents` (the readers vdesk's own
checks use: bounded, zip bombs refused). A result file that cannot be read scores 0.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from typing import Any, TypeVar

from rapidfuzz import fuzz

from vdesk.errors import DocumentError
from vdesk.documents import kind_of, read_pdf_text, read_text_document
from vdesk.osworld.metrics.inputs import paths, read_archive, read_bytes

from vdesk.osworld.metrics.registry import metric

T = TypeVar("T")


# -- text documents --------------------------------------------------------------------------
def _paragraphs(path: str) -> list[str]:
    kind = kind_of(path)
    if kind not in (".docx", ".odt"):
        raise DocumentError(f"{path}: not a text document (.docx, .odt)")
    return [p.text for p in read_text_document(read_archive(path), kind)]


def _both(read: Callable[[str], T], result: Any, expected: Any) -> tuple[T, T] | None:
    """Both files read with ``read``, or None when the result is missing or unreadable (it
    scores 0); an unreadable expected file is the task's fault and raises."""
    if result is None or expected is None:
        return None
    try:
        got = read(str(result))
    except DocumentError:
        return None
    return got, read(str(expected))


@metric("compare_docx_files", options=("ignore_blanks", "ignore_case", "ignore_order", "content_only",
                                       "fuzzy_match", "delete_empty_lines"))
def compare_docx_files(result: Any, expected: Any, ignore_blanks: bool = True, ignore_case: bool = False,
                       ignore_order: bool = False, content_only: bool = False, fuzzy_match: bool = False,
                       delete_empty_lines: bool = False) -> float:
    """Two text documents say the same. ``content_only``: how alike their whole texts are;
    ``ignore_blanks`` (the default): the same text with runs of whitespace as one space; else
    paragraph by paragraph. ``fuzzy_match`` scores by similarity instead of equality."""
    if (pair := _both(_paragraphs, result, expected)) is None:
        return 0.0
    got, want = pair
    if delete_empty_lines:
        got, want = [p for p in got if p.strip()], [p for p in want if p.strip()]
    if ignore_case:
        got, want = [p.lower() for p in got], [p.lower() for p in want]
    if ignore_order:
        got, want = sorted(p.strip() for p in got), sorted(p.strip() for p in want)
    if content_only or ignore_blanks:
        one, two = (re.sub(r"\s+", " ", "\n".join(ps)).strip() for ps in (got, want))
        if content_only or fuzzy_match:
            return fuzz.ratio(one, two) / 100.0
        return float(one == two)
    if len(got) != len(want):
        return 0.0
    if fuzzy_match:
        return min((fuzz.ratio(a, b) / 100.0 for a, b in zip(got, want)), default=1.0)
    return float(got == want)


# -- PDF -------------------------------------------------------------------------------------
@metric("compare_pdfs")
def compare_pdfs(result: Any, expected: Any) -> float:
    """How alike the text of two PDFs is (rapidfuzz's ratio); for lists of PDFs, the mean over
    the pairs. A result that cannot be read scores 0 for its pair."""
    got, want = paths(result), paths(expected)
    if got is None or want is None or len(got) != len(want):
        return 0.0
    total = 0.0
    for one, two in zip(got, want):
        try:
            text_got = read_pdf_text(read_bytes(one)).strip()
        except DocumentError:
            continue
        total += fuzz.ratio(text_got, read_pdf_text(read_bytes(two)).strip()) / 100.0
    return total / len(want)


# -- text documents: tables and line spacing (docx) ------------------------------------------
def _docx(path: str) -> Any:
    import docx

    data = read_archive(path)
    try:
        return docx.Document(io.BytesIO(data))
    except Exception as error:  # python-docx raises many kinds for a damaged file
        raise DocumentError(f"{path}: not a readable docx document: {type(error).__name__}: {str(error)[:160]}") from None


@metric("compare_docx_tables")
def compare_docx_tables(result: Any, expected: Any) -> float:
    """Two docx documents hold the same tables, cell by cell (their text)."""
    if (pair := _both(_docx, result, expected)) is None:
        return 0.0
    got, want = pair[0].tables, pair[1].tables
    cells = lambda table: [[cell.text.strip() for cell in row.cells] for row in table.rows]  # noqa: E731
    return float(len(got) == len(want) and all(cells(a) == cells(b) for a, b in zip(got, want)))


@metric("compare_line_spacing")
def compare_line_spacing(result: Any, expected: Any) -> float:
    """Two docx documents have the same paragraphs' line spacing, paragraph by paragraph."""
    if (pair := _both(_docx, result, expected)) is None:
        return 0.0
    got, want = pair[0].paragraphs, pair[1].paragraphs
    return float(len(got) == len(want) and all(a.paragraph_format.line_spacing == b.paragraph_format.line_spacing
                                               for a, b in zip(got, want)))

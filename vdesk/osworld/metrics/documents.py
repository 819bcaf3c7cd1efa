"""OSWorld's document metrics: ``compare_docx_files``, ``compare_docx_tables``, ``compare_line_spacing``,
``compare_pdfs``, ``check_pdf_pages`` (presentations are :mod:`vdesk.osworld.metrics.slides`).

Text documents are read here (python-docx, odfpy: :func:`open_docx` and :func:`open_odt`, which
the Writer family shares), each after the size and zip-bomb checks; PDFs by
:mod:`vdesk.documents` (pypdf, bounded). A result file that cannot be read scores 0.
"""

from __future__ import annotations

import io
import operator
import re
from collections.abc import Callable
from typing import Any, TypeVar

from rapidfuzz import fuzz

from vdesk.errors import DocumentError, UnsupportedMetric
from vdesk.documents import count_pdf_pages, read_pdf_pages
from vdesk.osworld.metrics.inputs import read_archive, read_bytes

from vdesk.osworld.metrics.registry import metric

T = TypeVar("T")


# -- text documents --------------------------------------------------------------------------
def open_docx(path: str) -> Any:
    """A python-docx document, after the size and zip-bomb checks; :class:`DocumentError` when
    it cannot be read. Every docx metric reads through here."""
    import docx

    data = read_archive(path)
    try:
        return docx.Document(io.BytesIO(data))
    except Exception as error:  # python-docx raises many kinds for a damaged file
        raise DocumentError(f"{path}: not a readable docx document: {type(error).__name__}: {str(error)[:160]}") from None


def open_odt(path: str) -> Any:
    """An odfpy document, after the same checks as :func:`open_docx`."""
    from odf import opendocument

    data = read_archive(path)
    try:
        return opendocument.load(io.BytesIO(data))
    except Exception as error:  # odfpy raises many kinds for a damaged file
        raise DocumentError(f"{path}: not a readable odt document: {type(error).__name__}: {str(error)[:160]}") from None


def docx_texts(path: str) -> list[str]:
    """The text of each body paragraph of a docx (not those inside tables, as python-docx reads them)."""
    return [p.text for p in open_docx(path).paragraphs]


def _odt_texts(path: str) -> list[str]:
    """Each ``text:p`` of an odt as the reference reads it: its own text and that of its spans'
    direct text, nothing else (no headings, no ``text:s`` spaces, tabs or links)."""
    from odf.text import P

    texts = []
    for paragraph in open_odt(path).getElementsByType(P):
        parts = []
        for node in paragraph.childNodes:
            if node.nodeType == node.TEXT_NODE:
                parts.append(str(node.data))
            elif node.nodeType == node.ELEMENT_NODE and node.tagName == "text:span":
                parts.extend(str(child.data) for child in node.childNodes if child.nodeType == child.TEXT_NODE)
        texts.append("".join(parts))
    return texts


def _paragraph_reader(result: str, expected: str) -> Callable[[str], list[str]] | None:
    """The reader for two documents of one kind, by their names as the reference tells them
    (a case-sensitive suffix); None for any other pair, which scores 0."""
    for suffix, read in ((".docx", docx_texts), (".odt", _odt_texts)):
        if result.endswith(suffix) and expected.endswith(suffix):
            return read
    return None


def read_both(read: Callable[[str], T], result: Any, expected: Any) -> tuple[T, T] | None:
    """Both files read with ``read``, or None when the result is missing or unreadable (it
    scores 0); an unreadable expected file is the task's fault and raises."""
    if not result or not expected:
        return None
    try:
        got = read(str(result))
    except DocumentError:
        return None
    return got, read(str(expected))


def one_text(paragraphs: list[str]) -> str:
    """Paragraphs as one text, every run of whitespace (line breaks too) one space."""
    return re.sub(r"\s+", " ", "\n".join(paragraphs)).strip()


@metric("compare_docx_files", options=("ignore_blanks", "ignore_case", "ignore_order", "content_only",
                                       "fuzzy_match", "delete_empty_lines"))
def compare_docx_files(result: Any, expected: Any, ignore_blanks: bool = True, ignore_case: bool = False,
                       ignore_order: bool = False, content_only: bool = False, fuzzy_match: bool = False,
                       delete_empty_lines: bool = False) -> float:
    """Two text documents of one kind (both .docx or both .odt) say the same. ``content_only``:
    how alike their whole texts are; ``ignore_blanks`` (the default): the same text with runs of
    whitespace as one space (``fuzzy_match``: how alike); else paragraph by paragraph, equal or
    (``fuzzy_match``) their mean likeness. ``ignore_order`` sorts the paragraphs as they are,
    ``delete_empty_lines`` drops the blank ones."""
    if not result or not expected or (read := _paragraph_reader(str(result), str(expected))) is None:
        return 0.0
    if (pair := read_both(read, result, expected)) is None:
        return 0.0
    got, want = pair
    if ignore_order:
        got, want = sorted(got), sorted(want)
    if delete_empty_lines:
        got, want = [p for p in got if p.strip()], [p for p in want if p.strip()]
    if ignore_case:
        got, want = [p.lower() for p in got], [p.lower() for p in want]
    if content_only or ignore_blanks:
        one, two = one_text(got), one_text(want)
        if content_only or fuzzy_match:
            return fuzz.ratio(one, two) / 100.0
        return float(one == two)
    if len(got) != len(want):
        return 0.0
    if fuzzy_match:
        return sum(fuzz.ratio(a, b) / 100.0 for a, b in zip(got, want)) / len(got) if got else 1.0
    return float(got == want)


def same_docx_text(result: Any, expected: Any) -> bool:
    """:func:`compare_docx_files` with its defaults passes: the reference's first gate in the
    metrics that then look at formatting."""
    return compare_docx_files(result, expected) == 1.0


# -- PDF -------------------------------------------------------------------------------------
def _pdf_text(path: str) -> str:
    """A PDF's text the way PyMuPDF (the reference's reader) lays it out: pages run together,
    each line ending in a newline, the whole stripped. pypdf reads it here."""
    pages = read_pdf_pages(read_bytes(path))
    return "".join(text if not text or text.endswith("\n") else text + "\n" for text in pages).strip()


@metric("compare_pdfs")
def compare_pdfs(result: Any, expected: Any) -> float:
    """How alike the text of two PDFs is (rapidfuzz's ratio). For lists of PDFs, pairs are taken
    in order as far as both lists go and their sum is divided by the number expected; a pair
    that cannot be read adds 0. A missing result reads as an empty PDF, as the reference's
    reader opens ``None`` (a reference quirk: against an expected PDF without text it scores 1)."""
    if not isinstance(expected, list):
        result, expected = [result], [expected]
    elif not isinstance(result, list):
        return 0.0   # the reference pairs the characters of a path with the expected files
    if not expected:
        return 0.0
    total = 0.0
    for one, two in zip(result, expected):
        try:
            text_got = "" if one is None else _pdf_text(str(one))
            total += fuzz.ratio(text_got, _pdf_text(str(two))) / 100.0
        except DocumentError:
            continue
    return total / len(expected)


@metric("check_pdf_pages")
def check_pdf_pages(result: Any, expected: Any) -> float:
    """A PDF's page count stands in the relation ``expected["relation"]`` (``eq``, ``lt``, …, as
    Python's :mod:`operator` names them) to ``expected["ref_value"]``."""
    if result is None:
        return 0.0
    relation = PAGE_RELATIONS.get(str(expected["relation"]))
    if relation is None:
        raise UnsupportedMetric(f"check_pdf_pages: relation {expected['relation']!r} is not supported")
    try:
        pages = count_pdf_pages(read_bytes(str(result)))
    except DocumentError:
        return 0.0
    return float(relation(pages, expected["ref_value"]))


PAGE_RELATIONS: dict[str, Callable[[Any, Any], Any]] = {
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge}


# -- text documents: tables and line spacing (docx) ------------------------------------------
@metric("compare_docx_tables")
def compare_docx_tables(result: Any, expected: Any) -> float:
    """Two docx documents hold the same tables: as many, each of the same rows and columns, cell
    by cell the same text (stripped)."""
    if (pair := read_both(open_docx, result, expected)) is None:
        return 0.0
    got, want = pair[0].tables, pair[1].tables
    if len(got) != len(want):
        return 0.0
    for one, two in zip(got, want):
        rows, columns = len(one.rows), len(one.columns)
        if rows != len(two.rows) or columns != len(two.columns):
            return 0.0
        if any(one.cell(i, j).text.strip() != two.cell(i, j).text.strip()
               for i in range(rows) for j in range(columns)):
            return 0.0
    return 1.0


@metric("compare_line_spacing")
def compare_line_spacing(result: Any, expected: Any) -> float:
    """Two docx documents say the same (:func:`same_docx_text`) and have the same line spacing,
    paragraph by paragraph."""
    if not same_docx_text(result, expected) or (pair := read_both(open_docx, result, expected)) is None:
        return 0.0
    got, want = pair[0].paragraphs, pair[1].paragraphs
    return float(len(got) == len(want) and all(a.paragraph_format.line_spacing == b.paragraph_format.line_spacing
                                               for a, b in zip(got, want)))

"""OSWorld's document metrics: ``compare_docx_files``, ``compare_pptx_files``, ``compare_pdfs``.

Text documents and PDFs are read by :mod:`vdesk.documents` (the readers vdesk's own
checks use: bounded, zip bombs refused); presentations here with python-pptx after the same
archive check. A result file that cannot be read scores 0.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from rapidfuzz import fuzz

from vdesk.errors import DocumentError, UnsupportedMetric
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


# -- presentations ---------------------------------------------------------------------------
EXAMINED = ("number_of_slides", "shape", "text", "indent", "font_name", "font_size", "font_bold",
            "font_italic", "color_rgb", "font_underline", "strike_through", "alignment", "image_size", "note")
# The reference's task-specific position checks, off by default: accepted only when off.
NOT_EXAMINED = ("title_bottom_position", "table_bottom_position", "right_position", "top_position",
                "shape_for_shift_size", "modify_height", "bullets", "background_color")
PPTX_OPTIONS = tuple(f"examine_{name}" for name in EXAMINED + NOT_EXAMINED)


def _check_pptx_options(options: Mapping[str, Any]) -> None:
    for name in NOT_EXAMINED:
        if options.get(f"examine_{name}"):
            raise UnsupportedMetric(f"compare_pptx_files: option 'examine_{name}' is not supported")


@dataclass(frozen=True)
class Run:
    text: str
    font_name: str | None
    font_size: int | None
    font_bold: bool | None
    font_italic: bool | None
    color_rgb: str | None
    font_underline: Any
    strike_through: bool


@dataclass(frozen=True)
class Para:
    text: str
    indent: int
    alignment: Any
    runs: tuple[Run, ...]


@dataclass(frozen=True)
class Shape:
    box: tuple[int | None, ...]       # left, top, width, height in EMU
    picture: bool
    paragraphs: tuple[Para, ...]
    table: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class SlideContent:
    shapes: tuple[Shape, ...]
    note: str


def read_slides(path: str) -> list[SlideContent]:
    import pptx

    data = read_archive(path)
    try:
        presentation = pptx.Presentation(io.BytesIO(data))
        return [SlideContent(tuple(_shape(s) for s in slide.shapes),
                             slide.notes_slide.notes_text_frame.text if slide.has_notes_slide
                             and slide.notes_slide.notes_text_frame is not None else "")
                for slide in presentation.slides]
    except Exception as error:  # python-pptx raises many kinds for a damaged file
        raise DocumentError(f"{path}: not a readable pptx presentation: {type(error).__name__}: {str(error)[:160]}") from None


def _shape(shape: Any) -> Shape:
    paragraphs: tuple[Para, ...] = ()
    if shape.has_text_frame:
        paragraphs = tuple(Para(p.text, p.level, p.alignment, tuple(_run(r) for r in p.runs))
                           for p in shape.text_frame.paragraphs)
    table: tuple[tuple[str, ...], ...] = ()
    if getattr(shape, "has_table", False) and shape.has_table:
        table = tuple(tuple(cell.text for cell in row.cells) for row in shape.table.rows)
    return Shape((shape.left, shape.top, shape.width, shape.height), shape.shape_type == 13, paragraphs, table)


def _run(run: Any) -> Run:
    font = run.font
    try:
        color = str(font.color.rgb) if font.color and font.color.type is not None and font.color.rgb else None
    except AttributeError:  # a theme colour has no rgb
        color = None
    properties = run._r.rPr
    strike = properties.get("strike") if properties is not None else None
    return Run(run.text, font.name, font.size, font.bold, font.italic, color, font.underline,
               strike not in (None, "noStrike"))


@metric("compare_pptx_files", options=PPTX_OPTIONS, check=_check_pptx_options)
def compare_pptx_files(result: Any, expected: Any, **options: bool) -> float:
    """Two presentations agree slide by slide and shape by shape on what is examined (every
    ``examine_*`` option is on by default, as in the reference)."""
    if (pair := _both(read_slides, result, expected)) is None:
        return 0.0
    got, want = pair
    on = {name: bool(options.get(f"examine_{name}", True)) for name in EXAMINED}
    if on["number_of_slides"] and len(got) != len(want):
        return 0.0
    for slide_got, slide_want in zip(got, want):
        if on["note"] and slide_got.note.strip() != slide_want.note.strip():
            return 0.0
        if len(slide_got.shapes) != len(slide_want.shapes):
            return 0.0
        if not all(_shapes_agree(a, b, on) for a, b in zip(slide_got.shapes, slide_want.shapes)):
            return 0.0
    return 1.0


def _shapes_agree(got: Shape, want: Shape, on: Mapping[str, bool]) -> bool:
    if (on["shape"] or (on["image_size"] and got.picture)) and got.box != want.box:
        return False
    if on["text"] and got.table != want.table:
        return False
    if len(got.paragraphs) != len(want.paragraphs):
        return False
    for para_got, para_want in zip(got.paragraphs, want.paragraphs):
        if on["text"] and para_got.text != para_want.text:
            return False
        if (on["indent"] and para_got.indent != para_want.indent) or \
                (on["alignment"] and para_got.alignment != para_want.alignment):
            return False
        if on["text"] and len(para_got.runs) != len(para_want.runs):
            return False
        for run_got, run_want in zip(para_got.runs, para_want.runs):
            for name in ("font_name", "font_size", "font_bold", "font_italic", "color_rgb",
                         "font_underline", "strike_through"):
                if on[name] and getattr(run_got, name) != getattr(run_want, name):
                    return False
    return True


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

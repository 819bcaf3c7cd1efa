"""OSWorld's LibreOffice Writer metrics: the formatting of a text document, as a task asked for it.

Most compare a result document with the task's (``check_tabstops``, ``compare_subscript_contains``,
``compare_references``, ``compare_docx_images``, ``compare_docx_files_and_ignore_new_lines``); some
first require the texts to agree, as :func:`~vdesk.osworld.metrics.documents.compare_docx_files`
with its defaults judges it, then check one formatting rule on the result alone
(``check_highlighted_words``, ``evaluate_strike_through_last_paragraph``,
``evaluate_colored_words_in_tables``, ``check_italic_font_size_14``); the rest check a rule on the
result (``has_page_numbers_in_footers``, ``compare_font_names``, ``is_first_line_centered``,
``contains_page_break``) or LibreOffice's settings (``find_default_font``).

Documents are read by the document family's readers (bounded, zip bombs refused). As in the
reference, a result that cannot be read, or a document without what a rule looks at (no first
paragraph, a run without a colour), scores 0.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
from rapidfuzz import fuzz

from vdesk.errors import DocumentError
from vdesk.osworld.metrics.documents import docx_texts, one_text, open_docx, open_odt, read_both, same_docx_text
from vdesk.osworld.metrics.inputs import read_bytes
from vdesk.osworld.metrics.registry import metric

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def _result_docx(result: Any) -> Any | None:
    """The result's document, or None when there is none or it cannot be read (it scores 0)."""
    if not result:
        return None
    try:
        return open_docx(str(result))
    except DocumentError:
        return None


def _runs(paragraphs: Any) -> Iterator[Any]:
    for paragraph in paragraphs:
        yield from paragraph.runs


# -- text ------------------------------------------------------------------------------------
@metric("compare_docx_files_and_ignore_new_lines", options=("ignore_blanks",))
def compare_docx_files_and_ignore_new_lines(result: Any, expected: Any, ignore_blanks: bool = True) -> float:
    """Two docx documents say the same once their empty paragraphs are dropped: as one text with
    runs of whitespace as one space (``ignore_blanks``, the default), else paragraph by paragraph."""
    if not result or not expected or not (str(result).endswith(".docx") and str(expected).endswith(".docx")):
        return 0.0
    if (pair := read_both(docx_texts, result, expected)) is None:
        return 0.0
    got, want = ([p for p in texts if p != ""] for texts in pair)
    if ignore_blanks:
        return float(one_text(got) == one_text(want))
    return float(got == want)


@metric("compare_references", options=("reference_indicator", "reference_base_result", "content_only"))
def compare_references(result: Any, expected: Any, reference_indicator: str = "References",
                       reference_base_result: float = 0.5, content_only: Any = None) -> float:
    """How alike two docx documents' reference lists are: the non-blank paragraphs after the first
    paragraph that reads exactly ``reference_indicator``, compared one by one (rapidfuzz's ratio).
    Their mean ``m`` scores ``(m - base) / (1 - base)`` when it is at least ``base + 0.01``, else 0.
    Neither document having the heading scores 1; one of them, 0. ``content_only`` is accepted
    and, as in the reference, changes nothing. Reference quirk kept: two empty lists under the
    heading score 0 (the reference divides by their length)."""
    if not result or not expected or not (str(result).endswith(".docx") and str(expected).endswith(".docx")):
        return 0.0
    if (pair := read_both(docx_texts, result, expected)) is None:
        return 0.0
    got, want = pair
    if reference_indicator not in got and reference_indicator not in want:
        return 1.0
    if reference_indicator not in got or reference_indicator not in want:
        return 0.0
    got = [p for p in got[got.index(reference_indicator) + 1:] if p.strip()]
    want = [p for p in want[want.index(reference_indicator) + 1:] if p.strip()]
    if len(got) != len(want) or not got:
        return 0.0
    mean = sum(fuzz.ratio(a, b) / 100.0 for a, b in zip(got, want)) / len(got)
    base = float(reference_base_result)
    return (mean - base) / (1 - base) if mean >= base + 0.01 else 0.0


# -- tab stops -------------------------------------------------------------------------------
@metric("check_tabstops", options=("word_number_split_by_tabstop", "index"))
def check_tabstops(result: Any, expected: Any, word_number_split_by_tabstop: int | None = None,
                   index: int = 0) -> float:
    """A docx's non-blank paragraphs have the expected ones' tab stops (a cleared stop and a left
    stop at 0 do not count): as many, of the same alignments; the score is 1 less their mean
    distance, each paragraph's summed and taken as a share of the expected page's text width
    (so it can fall below 0, as in the reference). ``word_number_split_by_tabstop``: each
    result paragraph's ``index``-th tab-separated part must have that many words."""
    if (pair := read_both(open_docx, result, expected)) is None:
        return 0.0
    got, want = ([p for p in document.paragraphs if p.text.strip()] for document in pair)
    if len(got) != len(want):
        return 0.0
    if word_number_split_by_tabstop is not None:
        for paragraph in got:
            parts = paragraph.text.split("\t")
            if not -len(parts) <= index < len(parts):
                return 0.0   # the reference raises on a part it does not find
            if len([w for w in re.split(r"\s", parts[index]) if w.strip()]) != word_number_split_by_tabstop:
                return 0.0
    if not pair[1].sections or not got:
        return 0.0   # the reference raises: no section to measure, nothing to divide by
    section = pair[1].sections[0]
    if None in (section.page_width, section.left_margin, section.right_margin):
        return 0.0   # the reference raises on a width it cannot compute
    width = section.page_width - section.left_margin - section.right_margin
    missed = 0.0
    for one, two in zip(got, want):
        stops_got, stops_want = _tab_stops(one), _tab_stops(two)
        if len(stops_got) != len(stops_want):
            return 0.0
        if any(a.alignment != b.alignment for a, b in zip(stops_got, stops_want)):
            return 0.0
        if width == 0:
            return 0.0   # the reference divides by it
        missed += sum(abs(a.position - b.position) for a, b in zip(stops_got, stops_want)) / width
    return 1 - missed / len(got)


def _tab_stops(paragraph: Any) -> list[Any]:
    from docx.enum.text import WD_TAB_ALIGNMENT

    return [stop for stop in paragraph.paragraph_format.tab_stops
            if not (stop.alignment == WD_TAB_ALIGNMENT.CLEAR
                    or (stop.alignment == WD_TAB_ALIGNMENT.LEFT and stop.position == 0))]


# -- character formatting --------------------------------------------------------------------
@metric("compare_subscript_contains")
def compare_subscript_contains(result: Any, expected: Any) -> float:
    """Somewhere both documents have a subscript run at the same place (paragraph and run index)."""
    if (pair := read_both(open_docx, result, expected)) is None:
        return 0.0
    for one, two in zip(pair[0].paragraphs, pair[1].paragraphs):
        if any(a.font.subscript and b.font.subscript for a, b in zip(one.runs, two.runs)):
            return 1.0
    return 0.0


@metric("compare_font_names")
def compare_font_names(result: Any, expected: Any) -> float:
    """Every run of a docx's body paragraphs names the font ``expected["font_name"]`` directly
    (a run that inherits its font from a style names none)."""
    if (document := _result_docx(result)) is None:
        return 0.0
    font = expected["font_name"]
    return float(all(run.font.name == font for run in _runs(document.paragraphs)))


@metric("check_italic_font_size_14")
def check_italic_font_size_14(result: Any, expected: Any) -> float:
    """The texts agree and every run set in italic (directly) is 14 pt."""
    if not same_docx_text(result, expected) or (document := _result_docx(result)) is None:
        return 0.0
    return float(all(run.font.size is not None and run.font.size.pt == 14
                     for run in _runs(document.paragraphs) if run.italic))


@metric("evaluate_strike_through_last_paragraph")
def evaluate_strike_through_last_paragraph(result: Any, expected: Any) -> float:
    """The texts agree and every run of the result's last paragraph is struck through."""
    if not same_docx_text(result, expected) or (document := _result_docx(result)) is None:
        return 0.0
    if not document.paragraphs:
        return 0.0   # the reference raises: no last paragraph
    return float(all(run.font.strike for run in document.paragraphs[-1].runs))


@metric("check_highlighted_words")
def check_highlighted_words(result: Any, expected: Any) -> float:
    """The texts of two odt documents agree and no span of the result is highlighted in yellow
    (its automatic style's properties have the background ``#ffff00``)."""
    if not same_docx_text(result, expected):
        return 0.0
    from odf.text import Span

    try:
        document = open_odt(str(result))
        return 0.0 if any(_yellow(span, document.automaticstyles.childNodes)
                          for span in document.getElementsByType(Span)) else 1.0
    except (DocumentError, AttributeError, ValueError):
        return 0.0   # odfpy refuses an attribute an element cannot have; the reference raises


def _yellow(span: Any, styles: list[Any]) -> bool:
    """Whether an automatic style of the span's name has a yellow background. Every style's
    name is asked for, as the reference asks (odfpy raises for an element that has none)."""
    name = span.getAttribute("stylename")
    if not name:
        return False
    found = False
    for style in styles:
        if style.getAttribute("name") == name:
            yellow = any(part.getAttribute("backgroundcolor") == "#ffff00" for part in style.childNodes)
            found = found or yellow
    return found


# -- colours ---------------------------------------------------------------------------------
@metric("evaluate_colored_words_in_tables", options=("threshold",))
def evaluate_colored_words_in_tables(result: Any, expected: Any, threshold: float = 3.5) -> float:
    """The texts agree and in the result's tables every word (run) starting with a vowel is red
    and every other one blue, within a CIEDE2000 distance of ``threshold``. A run without an
    RGB colour scores 0 (the reference cannot measure it)."""
    if not same_docx_text(result, expected) or (document := _result_docx(result)) is None:
        return 0.0
    red, blue = _lab((255, 0, 0)), _lab((0, 0, 255))
    for table in document.tables:
        for row in table.rows:
            for cell in row.cells:
                for run in _runs(cell.paragraphs):
                    if not run.text:
                        continue
                    rgb = run.font.color.rgb
                    if rgb is None:
                        return 0.0
                    want = red if run.text[0].lower() in "aeiou" else blue
                    if _ciede2000(_lab(tuple(rgb)), want) > threshold:
                        return 0.0
    return 1.0


def _lab(rgb: tuple[int, ...]) -> Any:
    """CIE L*a*b* of an sRGB colour of 0–255 channels (scikit-image's, as the reference's)."""
    from skimage.color import rgb2lab
    return rgb2lab(np.array([[rgb]], dtype=float) / 255.0)[0, 0]


def _ciede2000(one: Any, two: Any) -> float:
    """The CIEDE2000 colour difference of two L*a*b* colours (scikit-image's)."""
    from skimage.color import deltaE_ciede2000
    return float(deltaE_ciede2000(one, two))


# -- layout ----------------------------------------------------------------------------------
@metric("has_page_numbers_in_footers")
def has_page_numbers_in_footers(result: Any, expected: Any = None) -> float:
    """Every section's footer has a digit in its first paragraph (a page number, as the
    reference reads it: any digit will do)."""
    if (document := _result_docx(result)) is None:
        return 0.0
    for section in document.sections:
        paragraphs = section.footer.paragraphs
        if not any(char.isdigit() for char in (paragraphs[0].text if paragraphs else "")):
            return 0.0
    return 1.0


@metric("is_first_line_centered")
def is_first_line_centered(result: Any, expected: Any = None) -> float:
    """The first body paragraph is centred (set on the paragraph itself)."""
    from docx.enum.text import WD_PARAGRAPH_ALIGNMENT

    if (document := _result_docx(result)) is None or not document.paragraphs:
        return 0.0
    return float(document.paragraphs[0].paragraph_format.alignment == WD_PARAGRAPH_ALIGNMENT.CENTER)


@metric("contains_page_break")
def contains_page_break(result: Any, expected: Any = None) -> float:
    """The body paragraphs' runs hold a page break; exactly ``expected["page_break_count"]``
    of them when the task gives that number."""
    if (document := _result_docx(result)) is None:
        return 0.0
    want = expected.get("page_break_count") if isinstance(expected, Mapping) else None
    count = sum(1 for run in _runs(document.paragraphs)
                for br in run.element.iter(f"{W}br") if br.get(f"{W}type") == "page")
    if want is not None and count != want:
        return 0.0
    return float(count > 0)


# -- images ----------------------------------------------------------------------------------
@metric("compare_docx_images")
def compare_docx_images(result: Any, expected: Any) -> float:
    """Two docx documents' main parts hold the same images, in the order of their relations,
    pixel for pixel (their decoded bytes). An image Pillow cannot decode scores 0."""
    from PIL import Image

    if (pair := read_both(open_docx, result, expected)) is None:
        return 0.0
    try:
        got, want = ([rel.target_part.blob for rel in document.part.rels.values() if "image" in rel.reltype]
                     for document in pair)
        if len(got) != len(want):
            return 0.0
        for one, two in zip(got, want):
            with Image.open(io.BytesIO(one)) as first, Image.open(io.BytesIO(two)) as second:
                if first.tobytes() != second.tobytes():
                    return 0.0
    except (OSError, ValueError, Image.DecompressionBombError):
        return 0.0   # an external image or one Pillow cannot read: the reference raises
    return 1.0


# -- settings --------------------------------------------------------------------------------
OOR = "{http://openoffice.org/2001/registry}"


@metric("find_default_font")
def find_default_font(result: Any, expected: Any) -> float:
    """LibreOffice's settings (``registrymodifications.xcu``) set Writer's default Western font
    (``DefaultFont``'s ``Standard``) to ``expected["font_name"]``; the last value set wins."""
    from defusedxml import ElementTree

    want = expected["font_name"]
    if not result:
        return 0.0
    found = None
    try:
        root = ElementTree.fromstring(read_bytes(str(result)))
        for item in root.iter("item"):
            if item.get(f"{OOR}path") != "/org.openoffice.Office.Writer/DefaultFont":
                continue
            for prop in item.iter("prop"):
                if prop.get(f"{OOR}name") == "Standard":
                    for value in prop.findall("value"):
                        found = value.text
    except (DocumentError, ElementTree.ParseError, ValueError):
        pass   # unreadable settings set no font
    return float(found == want)

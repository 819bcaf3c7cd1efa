"""OSWorld's presentation metrics (LibreOffice Impress tasks): ``compare_pptx_files``; checks of
one deck (``check_slide_orientation_Portrait``, ``check_image_stretch_and_center``,
``check_transition``, ``check_page_number_colors``, ``evaluate_presentation_fill_to_rgb_distance``);
Impress's settings in LibreOffice's ``registrymodifications.xcu`` (``check_presenter_console_disable``, ``check_auto_saving_time``);
and its window (``check_left_panel``, over the accessibility tree).

Decks are read with python-pptx, as the reference reads them, after the archive check
(python-pptx's lxml parser never resolves entities), so what python-pptx infers on both sides is
the same: a placeholder's inherited position, a theme colour that has no RGB. Other XML goes
through defusedxml. The reference opens a missing result (``None``) as python-pptx's empty
default deck; so does vdesk. Where the reference raises on a deck (a slide background in a theme
colour, a shape python-pptx cannot type), its runner scores 0, and so does vdesk.
"""

from __future__ import annotations

import io
import math
import re
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from vdesk.errors import DocumentError, UnsupportedMetric
from vdesk.osworld.metrics.inputs import read_archive, read_bytes
from vdesk.osworld.metrics.registry import metric

A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
OOR = "{http://openoffice.org/2001/registry}"

# python-pptx's enumerations, by value (MSO_SHAPE_TYPE, MSO_FILL, PP_ALIGN).
FREEFORM, PICTURE, TABLE = 5, 13, 19
SOLID_FILL, BACKGROUND_FILL = 1, 5
LEFT_ALIGNED = 1


def open_deck(path: Any) -> Any:
    """``path`` opened by python-pptx; None opens python-pptx's default deck (no slides), as the
    reference's ``Presentation(None)`` does. :class:`DocumentError` when it cannot be read."""
    import pptx

    if path is None:
        return pptx.Presentation()
    data = read_archive(str(path))
    try:
        return pptx.Presentation(io.BytesIO(data))
    except Exception as error:  # python-pptx raises many kinds for a damaged file
        raise DocumentError(f"{path}: not a readable pptx presentation: {type(error).__name__}: {str(error)[:160]}") from None


def _result_deck(path: Any) -> Any | None:
    try:
        return open_deck(path)
    except DocumentError:
        return None


def _rule(rules: Any, key: str, name: str) -> Any:
    if not isinstance(rules, Mapping) or key not in rules:
        raise UnsupportedMetric(f"{name}: the rule needs {key!r}")
    return rules[key]


# -- compare_pptx_files ----------------------------------------------------------------------
@dataclass(frozen=True)
class Examine:
    """What ``compare_pptx_files`` compares: the reference's ``examine_<name>`` options, with its
    defaults. Each option counts by its truth, as the reference's ``and examine_<name>`` does."""

    number_of_slides: bool = True
    shape: bool = True
    text: bool = True
    indent: bool = True
    font_name: bool = True
    font_size: bool = True
    font_bold: bool = True
    font_italic: bool = True
    color_rgb: bool = True
    font_underline: bool = True
    strike_through: bool = True
    alignment: bool = True
    bullets: bool = True
    background_color: bool = True
    note: bool = True
    image_size: bool = False
    modify_height: bool = False
    shape_for_shift_size: bool = False
    # Task-specific checks of one task each: a shape moved down, right or up (see _moved_as_asked).
    title_bottom_position: bool = False
    table_bottom_position: bool = False
    right_position: bool = False
    top_position: bool = False
    # Newer reference sources read this (runs in table cells); the pinned reference ignores it.
    run_count: bool = True

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> Examine:
        return cls(**{f.name: bool(options.get(f"examine_{f.name}", f.default)) for f in fields(cls)})


# Besides the examine_* options: the relative tolerance of positions and sizes, and the
# reference's logging switch, which decides whether both shapes' types are read (see _Comparison.shapes).
PPTX_OPTIONS = tuple(f"examine_{f.name}" for f in fields(Examine)) + ("approximately_tolerance", "enable_debug")
TOLERANCE = 0.005


@metric("compare_pptx_files", options=PPTX_OPTIONS, comments=True)
def compare_pptx_files(result: Any, expected: Any, **options: Any) -> float:
    """Two decks agree slide by slide and shape by shape on what is examined: every ``examine_*``
    option on by default but image size, height-only and the position checks. Positions and
    sizes agree within ``approximately_tolerance`` (relative, 0.5%). Keys starting with ``_`` are
    the task's comments. As in the reference, a table's cells are compared by their formatting
    only (their text counts through the slide's bullet list), and text in groups only by its
    paragraphs' text and alignment."""
    got = _result_deck(result)
    if got is None:
        return 0.0
    want = open_deck(expected)
    examine = Examine.of(options)
    compare = _Comparison(examine, options.get("approximately_tolerance", TOLERANCE), bool(options.get("enable_debug", True)))
    try:
        return float(compare.decks(got, want))
    except Exception:  # noqa: BLE001 - the reference raises on these decks; its runner scores that 0
        return 0.0


def _near(one: Any, two: Any, tolerance: Any) -> bool:
    """Equal, or within ``tolerance`` of the larger (a zero only equals a zero)."""
    if one == two:
        return True
    if one == 0 or two == 0:
        return False
    return abs(one - two) / max(abs(one), abs(two)) <= tolerance


def _text_shapes(shapes: Iterable[Any]) -> list[Any]:
    """The shapes that hold text, those inside groups included (depth first)."""
    found = []
    for shape in shapes:
        if hasattr(shape, "text") and hasattr(shape, "text_frame"):
            found.append(shape)
        if hasattr(shape, "shapes"):
            found.extend(_text_shapes(shape.shapes))
    return found


def _background_rgb(slide: Any) -> Any:
    """A slide's background colour as the reference reads it: its solid fill's RGB (raising, as
    python-pptx does, for a theme colour); for a slide without one, its master's solid fill's
    (the layout's is skipped); else None."""
    fill = slide.background.fill
    if fill.type == SOLID_FILL:
        return fill.fore_color.rgb
    if fill.type == BACKGROUND_FILL:
        master = slide.slide_layout.slide_master.background.fill
        return master.fore_color.rgb if master.type == SOLID_FILL else None
    return None


def _notes(slide: Any) -> str:
    # python-pptx makes a notes slide when there is none; one without a text placeholder raises
    # here, as in the reference.
    return slide.notes_slide.notes_text_frame.text


def _alignment(paragraph: Any) -> Any:
    return LEFT_ALIGNED if paragraph.alignment is None else paragraph.alignment


def _flag_differs(one: Any, two: Any) -> bool:
    """Bold or italic differ: None (inherited) and False both mean off."""
    return one != two and not (one in (None, False) and two in (None, False))


def _underline_differs(one: Any, two: Any) -> bool:
    """The reference's rule: both set and different, or a single underline against none given
    (None against False, or against a double underline, agree)."""
    if one == two:
        return False
    if one is not None and two is not None:
        return True
    return one is True or two is True


def _rgb_differs(one: Any, two: Any) -> bool:
    """Both runs' colours are RGB values and they differ (a theme colour, or none, agrees with any)."""
    return hasattr(one.font.color, "rgb") and hasattr(two.font.color, "rgb") and one.font.color.rgb != two.font.color.rgb


def _strike(run: Any) -> str:
    return run._r.get_or_add_rPr().get("strike", "noStrike")


def _bullets(slide: Any) -> list[tuple[Any, Any, str]]:
    """Every paragraph of a slide with text, as (level, bullet character, text), read from the
    slide's XML as python-pptx would save it. An empty ``a:t`` raises (as in the reference,
    where that skips the bullets' check)."""
    from defusedxml import ElementTree

    root = ElementTree.fromstring(slide.part.blob)
    found = []
    for paragraph in root.iter(f"{A}p"):
        properties = paragraph.find(f"{A}pPr")
        level, char = "No Level", "No Bullet"   # no pPr at all: not the same as level 0
        if properties is not None:
            level = properties.get("lvl", "0")
            bullet = properties.find(f"{A}buChar")
            char = bullet.get("char") if bullet is not None else "No Bullet"
        text = "".join(t.text for t in paragraph.iter(f"{A}t"))  # type: ignore[misc]
        if text.strip():
            found.append((level, char, text))
    return found


class _Comparison:
    """One comparison of two decks; its checks return False at the first difference."""

    def __init__(self, examine: Examine, tolerance: Any, debug: bool) -> None:
        self.examine, self.tolerance, self.debug = examine, tolerance, debug

    def decks(self, got: Any, want: Any) -> bool:
        slides_got, slides_want = list(got.slides), list(want.slides)
        if self.examine.number_of_slides and len(slides_got) != len(slides_want):
            return False
        return all(self.slides(one, two, number)
                   for number, (one, two) in enumerate(zip(slides_got, slides_want), start=1))

    def same_box(self, one: Any, two: Any) -> bool:
        # Compared in this order, stopping at the first difference: a position python-pptx
        # cannot find (None) against a number raises only where the reference's does.
        return all(_near(getattr(one, side), getattr(two, side), self.tolerance)
                   for side in ("left", "top", "width", "height"))

    def slides(self, got: Any, want: Any, number: int) -> bool:
        examine = self.examine
        # Both are read whatever is examined: reading raises where the reference's reading does.
        if _background_rgb(got) != _background_rgb(want) and examine.background_color:
            return False
        if _notes(got).strip() != _notes(want).strip() and examine.note:
            return False
        texts_got, texts_want = _text_shapes(got.shapes), _text_shapes(want.shapes)
        if len(got.shapes) != len(want.shapes):
            return False
        bullets = _SlideBullets(got, want)
        if not all(self.shapes(one, two, number, bullets) for one, two in zip(got.shapes, want.shapes)):
            return False
        if len(texts_got) != len(texts_want):
            return False
        if not examine.alignment:
            return True
        # Every text shape, those in groups too: its text and its paragraphs' alignment.
        for one, two in zip(texts_got, texts_want):
            if one.text.strip() != two.text.strip() and examine.text:
                return False
            paragraphs_got, paragraphs_want = one.text_frame.paragraphs, two.text_frame.paragraphs
            if len(paragraphs_got) != len(paragraphs_want):
                return False
            if any(_alignment(a) != _alignment(b) for a, b in zip(paragraphs_got, paragraphs_want)):
                return False
        return True

    def shapes(self, got: Any, want: Any, number: int, bullets: _SlideBullets) -> bool:
        examine = self.examine
        if self.debug:  # the reference logs both types, which raises for a shape python-pptx cannot type
            got.shape_type, want.shape_type  # noqa: B018
        if not self.moved_as_asked(got, want, number):
            return False
        if examine.shape_for_shift_size and not self.same_box(got, want) and not (
                hasattr(got, "text") and hasattr(want, "text") and got.text == want.text
                and got.text == "Elaborate on what you want to discuss."):
            return False
        if not self.same_box(got, want) and examine.shape:
            return False
        if examine.image_size:
            if got.shape_type == PICTURE and want.shape_type == PICTURE:
                if not (_near(got.width, want.width, self.tolerance) and _near(got.height, want.height, self.tolerance)):
                    return False
            elif not self.same_box(got, want):
                return False
        if examine.modify_height:
            # Shapes without text, and freeforms, are compared by height only.
            if (not hasattr(got, "text") and not hasattr(want, "text")) or \
                    (got.shape_type == FREEFORM and want.shape_type == FREEFORM):
                if not _near(got.height, want.height, self.tolerance):
                    return False
            elif not self.same_box(got, want):
                return False
        if got.shape_type == TABLE and not self.tables(got.table, want.table):
            return False
        if hasattr(got, "text") and hasattr(want, "text"):
            return self.texts(got, want, bullets)
        return True

    def moved_as_asked(self, got: Any, want: Any, number: int) -> bool:
        """The reference's task-specific checks, each written for one task's deck (its slide
        number, its heading's text and its thresholds in EMU): the heading "Product Comparison"
        or slide 3's table moved down to the lower half, slide 2's picture moved right or up.
        The first two also need every other shape where it was."""
        examine = self.examine
        if examine.title_bottom_position:
            if hasattr(got, "text") and hasattr(want, "text") and got.text == want.text:
                if got.text == "Product Comparison" and (got.top <= want.top or got.top < 3600000):
                    return False
            elif not self.same_box(got, want):
                return False
        if examine.table_bottom_position:
            if number == 3 and got.shape_type == TABLE and want.shape_type == TABLE:
                if got.top <= want.top or got.top < 3600000:
                    return False
            elif not self.same_box(got, want):
                return False
        if examine.right_position and number == 2 and not hasattr(got, "text") and not hasattr(want, "text"):
            if got.left <= want.left or got.left < 4320000:
                return False
        if examine.top_position and number == 2 and got.shape_type == PICTURE and want.shape_type == PICTURE:
            if got.top >= want.top or got.top > 1980000:
                return False
        return True

    def tables(self, got: Any, want: Any) -> bool:
        """Two tables' cells agree on their runs' formatting: colour (if examined), and bold,
        italic and underline whatever is examined, as in the reference; not on their text."""
        rows, columns = len(got.rows), len(got.columns)
        if rows != len(want.rows) or columns != len(want.columns):
            return False
        for row in range(rows):
            for column in range(columns):
                paragraphs_got = got.cell(row, column).text_frame.paragraphs
                paragraphs_want = want.cell(row, column).text_frame.paragraphs
                if len(paragraphs_got) != len(paragraphs_want):
                    return False
                for one, two in zip(paragraphs_got, paragraphs_want):
                    if len(one.runs) != len(two.runs):
                        return False
                    for a, b in zip(one.runs, two.runs):
                        if (_rgb_differs(a, b) and self.examine.color_rgb) or _flag_differs(a.font.bold, b.font.bold) \
                                or _flag_differs(a.font.italic, b.font.italic) \
                                or _underline_differs(a.font.underline, b.font.underline):
                            return False
        return True

    def texts(self, got: Any, want: Any, bullets: _SlideBullets) -> bool:
        examine = self.examine
        if got.text.strip() != want.text.strip() and examine.text:
            return False
        paragraphs_got, paragraphs_want = got.text_frame.paragraphs, want.text_frame.paragraphs
        if len(paragraphs_got) != len(paragraphs_want):
            return False
        for one, two in zip(paragraphs_got, paragraphs_want):
            if examine.alignment and _alignment(one) != _alignment(two):
                return False
            if (one.text != two.text and examine.text) or (one.level != two.level and examine.indent):
                return False
            if len(one.runs) != len(two.runs):
                return False
            for a, b in zip(one.runs, two.runs):
                if not self.runs(a, b) or (examine.bullets and not bullets.agree()):
                    return False
        return True

    def runs(self, got: Any, want: Any) -> bool:
        examine, one, two = self.examine, got.font, want.font
        return not ((one.name != two.name and examine.font_name)
                    or (one.size != two.size and examine.font_size)
                    or (_flag_differs(one.bold, two.bold) and examine.font_bold)
                    or (_flag_differs(one.italic, two.italic) and examine.font_italic)
                    or (_rgb_differs(got, want) and examine.color_rgb)
                    or (_underline_differs(one.underline, two.underline) and examine.font_underline)
                    or (_strike(got) != _strike(want) and examine.strike_through))


class _SlideBullets:
    """Whether two slides' paragraphs agree on text, bullet character and level, as the reference
    asks at every run it compares. The answer can change as the comparison goes: reading a
    paragraph's alignment or level gives it a ``pPr`` (python-pptx adds one), which turns its
    level from "No Level" into "0". Nothing else the comparison reads changes the lists, and
    ``pPr`` are only added, so an answer holds while both slides' counts of them stay the same.
    A slide whose list cannot be read is not compared, as in the reference."""

    def __init__(self, got: Any, want: Any) -> None:
        self.got, self.want = got, want
        self.answers: dict[tuple[int, int], bool] = {}

    def agree(self) -> bool:
        key = (_count(self.got.element, f"{A}pPr"), _count(self.want.element, f"{A}pPr"))
        if key not in self.answers:
            try:
                self.answers[key] = _bullets(self.got) == _bullets(self.want)
            except Exception:  # noqa: BLE001 - the reference skips the check when it cannot read them
                self.answers[key] = True
        return self.answers[key]


def _count(element: Any, tag: str) -> int:
    return sum(1 for _ in element.iter(tag))


# -- one deck --------------------------------------------------------------------------------
@metric("check_slide_orientation_Portrait")
def check_slide_orientation_Portrait(result: Any, expected: Any = None) -> float:  # noqa: N802 - OSWorld's name
    """The deck's slides are taller than wide."""
    deck = _result_deck(result)
    if deck is None:
        return 0.0
    try:
        return float(deck.slide_width < deck.slide_height)
    except TypeError:  # a deck without a slide size
        return 0.0


def _member_xml(path: Any, member: str) -> Any | None:
    """The root of ``member``'s XML in the office archive at ``path``, or None when the archive
    cannot be read or has no such member."""
    from defusedxml import ElementTree

    if path is None:
        return None
    try:
        with zipfile.ZipFile(io.BytesIO(read_archive(str(path)))) as archive:
            if member not in archive.namelist():
                return None
            return ElementTree.fromstring(archive.read(member))
    except (DocumentError, zipfile.BadZipFile, ElementTree.ParseError, ValueError):
        return None


HALF_INCH = 457200  # EMU


@metric("check_image_stretch_and_center")
def check_image_stretch_and_center(result: Any, expected: Any) -> float:
    """The original deck's first picture on slide 1 (the same image bytes; the last such picture
    in the result) now fills the slide: its size within half an inch of the original's slide
    size, and centred within half an inch."""
    got = _result_deck(result)
    if got is None:
        return 0.0
    original = open_deck(expected)
    try:
        pictures_want = [s for s in original.slides[0].shapes if s.shape_type == PICTURE]
        pictures_got = [s for s in got.slides[0].shapes if s.shape_type == PICTURE]
        if not pictures_want:
            return 0.0
        blob = pictures_want[0].image.blob
        picture = None
        for candidate in pictures_got:
            if candidate.image.blob == blob:
                picture = candidate
        if picture is None:
            return 0.0
        width, height = original.slide_width, original.slide_height
        return float(abs(picture.width - width) <= HALF_INCH and abs(picture.height - height) <= HALF_INCH
                     and abs(picture.left - (width - picture.width) / 2) <= HALF_INCH
                     and abs(picture.top - (height - picture.height) / 2) <= HALF_INCH)
    except Exception:  # noqa: BLE001 - no slide, a linked picture: the reference raises, its runner scores 0
        return 0.0


XML_NAME = re.compile(r"[A-Za-z_][\w.-]*")


@metric("check_transition")
def check_transition(result: Any, expected: Any) -> float:
    """Slide ``slide_idx`` (0-based; the file ``ppt/slides/slide<n+1>.xml``) has a transition whose
    first ``p:transition`` element holds a ``p:<transition_type>`` (``dissolve``)."""
    index = _rule(expected, "slide_idx", "check_transition")
    kind = _rule(expected, "transition_type", "check_transition")
    if not isinstance(index, int) or not isinstance(kind, str) or not XML_NAME.fullmatch(kind):
        raise UnsupportedMetric(f"check_transition: needs a slide number and a transition's name, got {index!r}, {kind!r}")
    root = _member_xml(result, f"ppt/slides/slide{index + 1}.xml")
    if root is None:
        return 0.0
    transition = next((e for e in root.iter(f"{P}transition") if e is not root), None)
    if transition is None:
        return 0.0
    return float(any(e is not transition for e in transition.iter(f"{P}{kind}")))


# The reference reads a colour value as "#RRGGBB" (offsets 1, 3, 5) but the XML has "RRGGBB", so
# it reads "FF0000" as 0xF0, 0x00, 0x0; vdesk reads it the same way, so verdicts match.
def _shifted_rgb(value: str) -> tuple[int, int, int]:
    return int(value[1:3], 16), int(value[3:5], 16), int(value[5:7], 16)


COLOUR_TESTS = {
    "red": lambda r, g, b: r > g + 50 and r > b + 50,
    "green": lambda r, g, b: g > r + 50 and g > b + 50,
    "blue": lambda r, g, b: b > g + 50 and b > r + 50,
    "black": lambda r, g, b: r < 50 and g < 50 and b < 50,
}


@metric("check_page_number_colors")
def check_page_number_colors(result: Any, expected: Any) -> float:
    """The slide numbers are in ``color`` (red, green, blue, black; any other name passes), as the
    pinned reference finds them: the second-to-last RGB colour of a solid fill in the first
    slide master. Its values are read shifted by one digit (see :func:`_shifted_rgb`)."""
    colour = _rule(expected, "color", "check_page_number_colors")
    root = _member_xml(result, "ppt/slideMasters/slideMaster1.xml")
    if root is None:
        return 0.0
    values = [e for fill in root.iter(f"{A}solidFill") for e in fill.iter(f"{A}srgbClr")]
    if len(values) < 2 or values[-2].get("val") is None:
        return 0.0
    test = COLOUR_TESTS.get(colour)
    if test is None:
        return 1.0
    try:
        return float(test(*_shifted_rgb(values[-2].get("val"))))
    except ValueError:  # too short to read so
        return 0.0


def _fill_rgb(fill: Any) -> Any:
    try:
        return fill.fore_color.rgb
    except Exception:  # noqa: BLE001 - a theme colour or no colour: the reference counts it as none
        return None


def _fill_distance(slide: Any, rgb: Any, original: Any) -> float:
    """How far a slide's background is from ``rgb`` (0 to 1); 1 when it has no RGB colour or
    still has the ``original`` one. A slide without its own takes its master's."""
    fill = slide.background.fill
    if fill.type == BACKGROUND_FILL:
        fill = slide.slide_layout.slide_master.background.fill
    colour = _fill_rgb(fill) if fill.type == SOLID_FILL else None
    if colour is None:
        return 1.0
    (r1, g1, b1), (r2, g2, b2) = colour, rgb
    if original is not None:
        r3, g3, b3 = original
        if (r1, g1, b1) == (r3, g3, b3):
            return 1.0
    return math.sqrt((r1 - r2) ** 2 + (g1 - g2) ** 2 + (b1 - b2) ** 2) / math.sqrt(3 * 255 ** 2)


@metric("evaluate_presentation_fill_to_rgb_distance")
def evaluate_presentation_fill_to_rgb_distance(result: Any, expected: Any) -> float:
    """How close the slides' backgrounds are to ``rgb``: 1 minus the mean distance (each in 0..1);
    a slide still in ``original_rgb`` counts as farthest."""
    rgb = _rule(expected, "rgb", "evaluate_presentation_fill_to_rgb_distance")
    original = expected.get("original_rgb")
    deck = _result_deck(result)
    if deck is None:
        return 0.0
    try:
        slides = list(deck.slides)
        return 1 - sum(_fill_distance(slide, rgb, original) for slide in slides) / len(slides)
    except (ZeroDivisionError, TypeError, ValueError):  # no slides; a rule colour that is not three numbers
        return 0.0


# -- Impress's settings (registrymodifications.xcu) ------------------------------------------
def _registry(path: Any) -> Any | None:
    """The root of LibreOffice's registry XML, or None when it is missing or not XML."""
    from defusedxml import ElementTree

    if path is None:
        return None
    try:
        return ElementTree.fromstring(read_bytes(str(path)))
    except (DocumentError, ElementTree.ParseError, ValueError):
        return None


@metric("check_presenter_console_disable")
def check_presenter_console_disable(result: Any, expected: Any = None) -> float:
    """Impress's presenter console is off: the first ``EnablePresenterScreen`` under
    ``/org.openoffice.Office.Impress/Misc/Start`` is ``false``."""
    root = _registry(result)
    if root is None:
        return 0.0
    for item in root.iter("item"):
        if item is root or item.get(f"{OOR}path") != "/org.openoffice.Office.Impress/Misc/Start":
            continue
        for prop in item.findall("prop"):
            if prop.get(f"{OOR}name") == "EnablePresenterScreen":
                value = prop.find("value")
                text = value.text if value is not None else None
                return float(text is not None and text.lower() == "false")
    return 0.0


@metric("check_auto_saving_time")
def check_auto_saving_time(result: Any, expected: Any) -> float:
    """LibreOffice saves recovery data every ``minutes``: the ``AutoSaveTimeIntervall`` of the
    last ``/org.openoffice.Office.Common/Save/Document`` item that has one (the first in it)."""
    minutes = _rule(expected, "minutes", "check_auto_saving_time")
    root = _registry(result)
    if root is None:
        return 0.0
    value = None
    for item in root.iter("item"):
        if item is root or item.get(f"{OOR}path") != "/org.openoffice.Office.Common/Save/Document":
            continue
        for prop in item.iter("prop"):
            if prop.get(f"{OOR}name") == "AutoSaveTimeIntervall":
                found = next(prop.iter("value"), None)
                if found is None:  # the reference raises
                    return 0.0
                value = found.text
                break
    if value is None:
        return 0.0
    try:
        return float(int(value) == minutes)
    except ValueError:
        return 0.0


# -- Impress's window --------------------------------------------------------------------------
@metric("check_left_panel")
def check_left_panel(result: Any, expected: Any = None) -> float:
    """Impress's slide pane is open: the accessibility tree has a ``document-frame`` named "Slides View"."""
    if not isinstance(result, str) or not result:
        return 0.0
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False)
    try:
        root = etree.fromstring(result.encode(), parser)
    except etree.XMLSyntaxError:
        return 0.0
    return float(any(node.get("name") == "Slides View" for node in root.iter("document-frame")))

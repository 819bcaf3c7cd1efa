"""Text on screen: OCR of frames, and finding text in what was read.

Tesseract reads the frames (the engine comes inside the ``tesserocr`` wheel; its English
model is Debian's ``tesseract-ocr-eng``, found on disk, never downloaded). It was measured
against RapidOCR (ONNX models shipped in its wheel) on frames of the apps desktop — an xterm
listing, a Writer document with its menus and toolbars, a Chromium form page: RapidOCR read a
little more (45 of 50 known phrases against Tesseract's 43 as set up here) but took 1.1–2.3 s
a frame on this 2-core machine at a load average of 3, Tesseract (enlarged, without the local
threshold) 0.18–0.45 s; one after the other at a load of 17–24: 4.5–13.8 s against 0.3–1.6 s.

Frames are enlarged twice before reading (at scale 1), then slightly blurred, and binarized
with Sauvola's local threshold. Tesseract's models were trained on text far taller than a
desktop's 8–9 px lowercase: at its own size xterm's bitmap font was not read at all. The blur
(0.7 px at twice the size) rounds the steps of enlarged bitmap glyphs (all three frames: 42 of
50 phrases without it, 47 with it; radius 0.5: 45, 1.0: 37). Tesseract's default global
threshold then lost a terminal's text on the lean desktop's black background (only "uild fin"
of "Build finished OK"); Sauvola's reads it, at 43 of 50 on the apps frames. The engine is
single-threaded; each thread that reads gets its own instance.

Words come grouped in lines. A pattern is matched against each line's text (its words joined
by single spaces), so a match may span words but never lines; the box of a match is the union
of the words it touches.
"""

from __future__ import annotations

import math
import os
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PIL import Image, ImageFilter

from vdesk.coords import Box, union
from vdesk.errors import InvalidArgument, MissingDependency

if TYPE_CHECKING:  # loaded on first read: the engine takes ~0.1 s to load its model
    import tesserocr

Pattern = str | re.Pattern[str]

LANGUAGE = "eng"
TESSDATA_DIRS = ("/usr/share/tesseract-ocr/5/tessdata", "/usr/share/tesseract-ocr/4.00/tessdata",
                 "/usr/share/tessdata", "/usr/local/share/tessdata")
TARGET_SCALE = 2.0  # pixels per logical pixel the engine reads at (see the module's docstring)
BLUR_PER_FACTOR = 0.35  # the blur of an enlarged frame, in its original pixels (see the docstring)
SAUVOLA = "2"  # Tesseract's thresholding_method for Sauvola's local threshold
_WORD_LEVEL = "5"  # the level of a word in Tesseract's TSV output


@dataclass(frozen=True)
class TextBox:
    """Text read on screen: a word, or a match of a pattern (which may span words)."""

    text: str
    bounds: Box  # logical pixels, whole ones
    confidence: float = 1.0  # 0..1, the engine's (the lowest of the words for a match)

    def __post_init__(self) -> None:
        if not isinstance(self.bounds, Box):  # given as (left, top, right, bottom)
            object.__setattr__(self, "bounds", Box.of(self.bounds))

    @property
    def centre(self) -> tuple[float, float]:
        return self.bounds.centre


@dataclass(frozen=True)
class TextLine:
    """One line of text as the engine grouped it, left to right."""

    words: tuple[TextBox, ...]

    @property
    def text(self) -> str:
        return " ".join(word.text for word in self.words)

    @property
    def bounds(self) -> Box:
        return union(word.bounds for word in self.words)


# -- finding --------------------------------------------------------------------------------
def compile_pattern(pattern: Pattern) -> re.Pattern[str]:
    """A pattern as a regular expression. A plain string matches literally (case and all),
    any run of whitespace in it standing for any run in the text; a compiled regex is used as
    it is (compile it with ``re.IGNORECASE`` to ignore case)."""
    if isinstance(pattern, re.Pattern):
        if not isinstance(pattern.pattern, str):
            raise InvalidArgument("a text pattern must be a str regex, not a bytes one")
        return pattern
    if not isinstance(pattern, str):
        raise InvalidArgument(f"a text pattern must be a string or a compiled regex, got {type(pattern).__name__}")
    words = pattern.split()
    if not words:
        raise InvalidArgument("a text pattern must contain some text, got only whitespace")
    return re.compile(r"\s+".join(re.escape(word) for word in words))


def describe(pattern: Pattern) -> str:
    """A pattern as errors and progress name it."""
    return f"/{pattern.pattern}/" if isinstance(pattern, re.Pattern) else repr(pattern)


def find(lines: Iterable[TextLine], pattern: Pattern, region: Box | Sequence[int] | None = None) -> list[TextBox]:
    """Every match of ``pattern`` in ``lines`` (top to bottom, left to right), each a box
    around the words it touches; with ``region``, only matches whose box lies inside it."""
    regex = compile_pattern(pattern)
    within = Box.of(region) if region is not None else None
    found = []
    for line in lines:
        text, spans = _joined(line)
        for match in regex.finditer(text):
            if match.start() == match.end():
                continue
            touched = [word for word, (start, end) in zip(line.words, spans)
                       if start < match.end() and end > match.start()]
            box = TextBox(match.group(), union(word.bounds for word in touched),
                          min(word.confidence for word in touched))
            if within is None or box.bounds.inside(within):
                found.append(box)
    return found


def _joined(line: TextLine) -> tuple[str, list[tuple[int, int]]]:
    spans, position = [], 0
    for word in line.words:
        spans.append((position, position + len(word.text)))
        position += len(word.text) + 1
    return line.text, spans


# -- reading --------------------------------------------------------------------------------
def read(image: Image.Image, *, scale: float = 1.0, region: Box | Sequence[int] | None = None) -> list[TextLine]:
    """The lines of text in ``image``, a frame at ``scale`` physical pixels per logical pixel
    (a screenshot at the logical size has scale 1), within ``region`` (logical pixels) if
    given; bounds are logical pixels of the whole screen."""
    left, top = 0, 0
    if region is not None:
        left, top, right, bottom = _checked_region(region, image.size, scale)
        image = image.crop((round(left * scale), round(top * scale), round(right * scale), round(bottom * scale)))
    if image.width == 0 or image.height == 0:
        return []
    factor = max(1, round(TARGET_SCALE / scale))
    picture = image.convert("L")
    if factor > 1:
        picture = picture.resize((picture.width * factor, picture.height * factor), Image.Resampling.LANCZOS)
        picture = picture.filter(ImageFilter.GaussianBlur(BLUR_PER_FACTOR * factor))
    tsv = _engine().read_tsv(picture)
    return _lines(tsv, pixels_per_logical=factor * scale, offset=(left, top))


def _checked_region(region: Box | Sequence[int], size: tuple[int, int], scale: float) -> tuple[int, int, int, int]:
    if not (isinstance(region, (Box, tuple, list)) and len(region) == 4
            and all(isinstance(v, int) and not isinstance(v, bool) for v in region)):
        raise InvalidArgument(f"a region must be (left, top, right, bottom) in whole pixels, got {region!r}")
    left, top, right, bottom = (int(v) for v in Box.of(region))
    width, height = math.floor(size[0] / scale), math.floor(size[1] / scale)
    if not (0 <= left < right <= width and 0 <= top < bottom <= height):
        raise InvalidArgument(f"region {list(region)} must lie within the {width}x{height} screen "
                              f"with left < right and top < bottom")
    return left, top, right, bottom


def _lines(tsv: str, pixels_per_logical: float, offset: tuple[int, int]) -> list[TextLine]:
    """Tesseract's TSV (level, page, block, paragraph, line, word, left, top, width, height,
    confidence, text) as lines of words in logical pixels."""
    grouped: dict[tuple[str, str, str], list[TextBox]] = {}
    for row in tsv.splitlines():
        fields = row.split("\t", 11)
        if len(fields) != 12 or fields[0] != _WORD_LEVEL or not fields[11].strip():
            continue
        x, y, w, h = (int(v) for v in fields[6:10])
        bounds = Box(offset[0] + math.floor(x / pixels_per_logical), offset[1] + math.floor(y / pixels_per_logical),
                     offset[0] + math.ceil((x + w) / pixels_per_logical), offset[1] + math.ceil((y + h) / pixels_per_logical))
        confidence = min(max(float(fields[10]) / 100, 0.0), 1.0)
        grouped.setdefault((fields[2], fields[3], fields[4]), []).append(TextBox(fields[11].strip(), bounds, confidence))
    return [TextLine(tuple(words)) for words in grouped.values()]


def tessdata_dir() -> Path:
    """Where Tesseract's English model is (``TESSDATA_PREFIX`` first); raises MissingDependency."""
    candidates = [os.environ["TESSDATA_PREFIX"]] if os.environ.get("TESSDATA_PREFIX") else []
    for folder in (*candidates, *TESSDATA_DIRS):
        if (Path(folder) / f"{LANGUAGE}.traineddata").is_file():
            return Path(folder)
    raise MissingDependency(
        f"reading text on screen needs Tesseract's {LANGUAGE} model ({LANGUAGE}.traineddata), found in none of "
        f"{', '.join(candidates + list(TESSDATA_DIRS))}: install Debian's tesseract-ocr-{LANGUAGE} "
        f"(scripts/setup-host.sh does) or set TESSDATA_PREFIX")


class _Engine:
    """One Tesseract instance (not thread-safe: one per thread)."""

    def __init__(self) -> None:
        try:
            import tesserocr
        except ImportError as error:
            raise MissingDependency(f"reading text on screen needs tesserocr (pip install tesserocr): {error}") from None
        self._api: tesserocr.PyTessBaseAPI = tesserocr.PyTessBaseAPI(
            path=f"{tessdata_dir()}/", lang=LANGUAGE, psm=tesserocr.PSM.AUTO)
        self._api.SetVariable("thresholding_method", SAUVOLA)
        self._auto, self._sparse = tesserocr.PSM.AUTO, tesserocr.PSM.SPARSE_TEXT

    def read_tsv(self, picture: Image.Image) -> str:
        self._api.SetImage(picture)
        tsv = self._api.GetTSVText(0)
        if _has_words(tsv):
            return tsv
        # The page layout found no text at all: one big light window on the dark desktop reads
        # as a picture. Read it again as scattered text, which looks everywhere.
        self._api.SetPageSegMode(self._sparse)
        try:
            self._api.SetImage(picture)
            return self._api.GetTSVText(0)
        finally:
            self._api.SetPageSegMode(self._auto)


def _has_words(tsv: str) -> bool:
    return any(len(fields := row.split("\t", 11)) == 12 and fields[0] == _WORD_LEVEL and fields[11].strip()
               for row in tsv.splitlines())


_engines = threading.local()


def _engine() -> _Engine:
    engine = getattr(_engines, "engine", None)
    if engine is None:
        engine = _engines.engine = _Engine()
    return engine

"""OSWorld's metrics on lists a task asked for inside a document or a sheet: places in a docx
(``fuzzy_place_math``), unique train records (``compare_unique_train_records``) and conference
cities in a column (``compare_conference_city_in_order``).

The documents are read by the bounded, zip-bomb-refusing readers of the other families.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from rapidfuzz import fuzz

from vdesk.errors import DocumentError
from vdesk.osworld.metrics.documents import open_docx
from vdesk.osworld.metrics.registry import metric
from vdesk.osworld.metrics.tables import load_book

CITY_CELLS = "C2:C22"  # where the reference's one task keeps its cities


@metric("fuzzy_place_math")
def fuzzy_place_math(result: Any, expected: Any) -> float:
    """A docx lists exactly three words (over all its paragraphs), each scored by its closest
    expected answer; the score is their mean. Any other number of words scores 0."""
    if result is None or not isinstance(expected, Mapping):
        return 0.0
    try:
        document = open_docx(str(result))
    except DocumentError:
        return 0.0
    answers = list(expected.get("expected", []))
    words = [word for paragraph in document.paragraphs for word in paragraph.text.split()]
    if len(words) != 3:
        return 0.0
    return sum(max((fuzz.ratio(word, answer) / 100 for answer in answers), default=0.0) for word in words) / 3


def _record_lines(path: str) -> tuple[list[str], list[str]]:
    """A docx's non-blank paragraphs (stripped) and the train ids of its four-field records (the
    second field)."""
    lines = [p.text.strip() for p in open_docx(path).paragraphs if p.text.strip()]
    return lines, [line.split(",")[1].strip() for line in lines if len(line.split(",")) == 4]


@metric("compare_unique_train_records")
def compare_unique_train_records(result: Any, expected: Any) -> float:
    """The processed docx keeps only lines of the initial one (``expected[1]``), no train id
    twice, the same ids as the gold one (``expected[0]``) and as many lines."""
    if not result or not isinstance(expected, list) or len(expected) < 2 or not expected[0] or not expected[1]:
        return 0.0
    try:
        lines, ids = _record_lines(str(result))
        gold_lines, gold_ids = _record_lines(str(expected[0]))
        initial_lines, _ = _record_lines(str(expected[1]))
    except DocumentError:
        return 0.0
    return float(set(lines) <= set(initial_lines) and len(ids) == len(set(ids))
                 and set(ids) == set(gold_ids) and len(lines) == len(gold_lines))


def _city(value: Any) -> str:
    """Lowercase, accents and punctuation gone: the reference's tolerant city spelling."""
    if value is None:
        return ""
    text = "".join(ch for ch in unicodedata.normalize("NFKD", str(value)) if not unicodedata.combining(ch))
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


@metric("compare_conference_city_in_order")
def compare_conference_city_in_order(result: Any, expected: Any) -> float:
    """Each cell of C2:C22 on the active sheet names its expected city (one spelling, or any of a
    list), in order; a cell with no expected entry scores 0."""
    if result is None or not isinstance(expected, Mapping):
        return 0.0
    try:
        sheet = load_book(str(result)).cells.active
    except DocumentError:
        return 0.0
    cities = list(expected.get("expected", []))
    cells = [cell.value for row in sheet[CITY_CELLS] for cell in row]
    if len(cells) > len(cities):
        return 0.0
    for value, entry in zip(cells, cities):
        if isinstance(entry, str):
            entry = [entry]
        if not isinstance(entry, list):
            return 0.0
        got = _city(value)
        if not any(_city(candidate) and _city(candidate) in got for candidate in entry):
            return 0.0
    return 1.0

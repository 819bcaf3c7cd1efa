"""Text on screen: patterns matched against OCR lines (pure), and the engine reading a picture."""

from __future__ import annotations

import re

import pytest
from PIL import Image, ImageDraw, ImageFont

from vdesk.accessibility.text import TextBox, TextLine, compile_pattern, describe, find, read
from vdesk.errors import InvalidArgument


def line(*words: tuple[str, int], top: int = 10, height: int = 12, confidence: float = 0.9) -> TextLine:
    """Words at the given left edges, each 7 px per character wide."""
    return TextLine(tuple(TextBox(text, (left, top, left + 7 * len(text), top + height), confidence)
                          for text, left in words))


SAVE_LINE = line(("File", 10), ("saved", 50), ("to", 100), ("/home/desk/a.txt", 120), confidence=0.8)


def test_a_plain_string_matches_across_words_and_boxes_the_words_it_touches():
    [match] = find([SAVE_LINE], "saved to /home")
    assert match.text == "saved to /home"
    assert match.bounds == (50, 10, 120 + 7 * 16, 22)  # from "saved" to the end of the word "/home" is in
    assert match.confidence == 0.8


def test_a_match_inside_a_word_boxes_that_word():
    [match] = find([SAVE_LINE], "desk")
    assert match.bounds == (120, 10, 232, 22)


def test_whitespace_in_a_plain_string_matches_any_run_and_specials_are_literal():
    lines = [line(("Total:", 10), ("42.50", 60), ("EUR", 110))]
    assert [m.text for m in find(lines, "Total:   42.50\tEUR")] == ["Total: 42.50 EUR"]
    assert find(lines, "42X50") == []  # the dot is literal
    assert find(lines, "total:") == []  # and case counts


def test_a_regex_is_used_as_given():
    lines = [line(("Invoice", 10), ("2026-0457", 80)), line(("invoice", 10), ("paid", 80), top=30)]
    assert [m.text for m in find(lines, re.compile(r"Invoice \d+-\d+"))] == ["Invoice 2026-0457"]
    assert len(find(lines, re.compile("invoice", re.IGNORECASE))) == 2


def test_a_match_never_spans_lines_and_every_match_is_returned_in_order():
    lines = [line(("open", 10), ("the", 50)), line(("file", 10), ("open", 60), top=30)]
    assert find(lines, "the file") == []
    assert [m.bounds[1] for m in find(lines, "open")] == [10, 30]


def test_a_region_keeps_only_matches_inside_it():
    lines = [line(("Save", 10)), line(("Save", 10), top=300)]
    [match] = find(lines, "Save", region=(0, 200, 400, 400))
    assert match.bounds[1] == 300


def test_an_empty_match_of_a_regex_is_not_a_match():
    assert find([SAVE_LINE], re.compile("q*")) == []


@pytest.mark.parametrize("bad", ["", "   ", 42, re.compile(b"bytes")])
def test_a_bad_pattern_is_an_invalid_argument(bad):
    with pytest.raises(InvalidArgument):
        compile_pattern(bad)


def test_patterns_are_described_as_written():
    assert describe("Saved") == "'Saved'"
    assert describe(re.compile(r"\d+ items")) == r"/\d+ items/"


# -- the engine, on a picture drawn here ---------------------------------------------------------
def picture(lines: list[tuple[str, tuple[int, int]]], size: tuple[int, int] = (640, 200), font_size: int = 13) -> Image.Image:
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=font_size)
    for text, where in lines:
        draw.text(where, text, fill="black", font=font)
    return image


def test_the_engine_reads_ui_sized_text_with_bounds_where_it_was_drawn():
    image = picture([("Quarterly report saved", (40, 30)), ("Invoice 2026-0457 paid", (300, 120))])
    lines = read(image)
    [saved] = find(lines, "report saved")
    font = ImageFont.load_default(size=13)
    drawn = ImageDraw.Draw(image).textbbox((40, 30), "Quarterly report saved", font=font)
    expected = (40 + font.getlength("Quarterly "), drawn[1], drawn[2], drawn[3])
    assert all(abs(got - want) <= 3 for got, want in zip(saved.bounds, expected)), (saved, expected)
    [invoice] = find(lines, re.compile(r"Invoice \d{4}-\d{4}"))
    assert invoice.bounds[0] >= 295 and invoice.bounds[1] >= 115 and invoice.confidence > 0.5


def test_a_hidpi_frame_gives_bounds_in_logical_pixels():
    image = picture([("Settings applied", (80, 60))], size=(800, 400), font_size=26)
    [box] = find(read(image, scale=2.0), "Settings applied")
    assert 36 <= box.bounds[0] <= 44 and 28 <= box.bounds[1] <= 34 and box.bounds[2] <= 400


def test_a_region_reads_only_its_part_and_keeps_screen_coordinates():
    image = picture([("left words", (20, 20)), ("right words", (400, 20))])
    lines = read(image, region=(300, 0, 640, 100))
    assert [l.text for l in lines] == ["right words"]
    assert lines[0].bounds[0] >= 395


@pytest.mark.parametrize("region", [(0, 0, 700, 100), (10, 10, 5, 50), (0, 0, 1.5, 2)])
def test_a_region_off_the_picture_is_an_invalid_argument(region):
    with pytest.raises(InvalidArgument):
        read(picture([]), region=region)

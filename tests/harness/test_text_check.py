"""The task's text check: text read by OCR in a region of the final frame, or its absence."""

from __future__ import annotations

import pytest
from PIL import Image, ImageDraw, ImageFont

from vdesk.harness.checks import text_check
from vdesk.harness.tasks import TaskError, TextCheck, parse_task

MINIMAL = {"id": "t", "instruction": "do it"}


@pytest.fixture(scope="module")
def final_frame() -> Image.Image:
    """A 1280x800 final frame: a status line at the bottom, a title at the top."""
    frame = Image.new("RGB", (1280, 800), (235, 235, 235))
    draw = ImageDraw.Draw(frame)
    font = ImageFont.load_default(size=13)
    draw.text((20, 12), "Quarterly report - Editor", fill="black", font=font)
    draw.text((900, 770), "Document saved at 14:05", fill="black", font=font)
    return frame


def check(data: dict) -> TextCheck:
    [parsed] = parse_task({**MINIMAL, "checks": [data]}).checks
    assert isinstance(parsed, TextCheck)
    return parsed


def test_text_on_screen_passes_and_says_where(final_frame):
    result = text_check(final_frame, check({"text": "Document saved"}))
    assert result.passed and result.kind == "text"
    assert "'Document saved' is on screen at [9" in result.detail  # the left edge of "Document", about 900


def test_text_not_on_screen_fails_saying_what_the_screen_said(final_frame):
    result = text_check(final_frame, check({"text": "Export finished"}))
    assert not result.passed
    assert "'Export finished' is not on screen" in result.detail and "Quarterly report" in result.detail


def test_a_region_limits_where_the_text_may_be(final_frame):
    assert text_check(final_frame, check({"text": "Document saved", "within": [800, 740, 1280, 800]})).passed
    elsewhere = text_check(final_frame, check({"text": "Document saved", "within": [0, 0, 640, 100]}))
    assert not elsewhere.passed and "in [0, 0, 640, 100]" in elsewhere.detail


def test_present_false_passes_only_when_the_text_is_absent(final_frame):
    assert text_check(final_frame, check({"text": "Unsaved changes", "present": False})).passed
    assert not text_check(final_frame, check({"text": "Quarterly report", "present": False})).passed


def test_regex_and_ignore_case(final_frame):
    assert text_check(final_frame, check({"text": r"saved at \d\d:\d\d", "regex": True})).passed
    assert not text_check(final_frame, check({"text": "DOCUMENT SAVED"})).passed
    assert text_check(final_frame, check({"text": "DOCUMENT SAVED", "ignore_case": True})).passed


def test_a_region_off_the_screen_fails_the_check_with_the_reason(final_frame):
    result = text_check(final_frame, check({"text": "x", "within": [0, 0, 2000, 100]}))
    assert not result.passed and "must lie within the 1280x800 screen" in result.detail


@pytest.mark.parametrize("data, message", [
    ({"text": "   "}, "a text check needs some text"),
    ({"text": "(", "regex": True}, "invalid regular expression"),
    ({"text": "x", "within": [10, 10, 5, 20]}, "must be [left, top, right, bottom]"),
    ({"text": "x", "region": [0, 0, 5, 5]}, "a check needs one of the keys"),  # region belongs to the region check
])
def test_a_bad_text_check_is_a_task_error_naming_the_field(data, message):
    with pytest.raises(TaskError, match=message.replace("[", r"\[")):
        parse_task({**MINIMAL, "checks": [data]})

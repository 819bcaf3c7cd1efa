"""OSWorld's rule_relativeTime, as pure logic: the dates its phrases name on a given "now", and
where they are written (the desktop's own now is tested in tests/osworld/test_relative_time.py)."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from typing import Any

import pytest

from vdesk.errors import UnsupportedGetter
from vdesk.osworld.metrics import lookup
from vdesk.osworld.relative_time import Phrase, check, fill, write

WEDNESDAY = date(2026, 3, 4)


def day(phrase: str, today: date = WEDNESDAY) -> date:
    return Phrase.read(phrase).day(today)


@pytest.mark.parametrize("phrase, expected", [
    ("today", "2026-03-04"), ("tomorrow", "2026-03-05"), ("yesterday", "2026-03-03"), ("this month", "2026-03-04"),
    ("this Monday", "2026-03-02"), ("this Saturday", "2026-03-07"), ("this Sunday", "2026-03-08"),
    ("next Monday", "2026-03-09"), ("next Wednesday", "2026-03-11"), ("next Friday", "2026-03-06"),
    ("next week Friday", "2026-03-13"), ("next week Sunday", "2026-03-15"), ("10th next month", "2026-04-10"),
    ("5th next month", "2026-04-05"), ("first monday four months later", "2026-07-06"),
    ("first monday eight months later", "2026-11-02"), ("First  Monday 2 months later", "2026-05-04"),
    ("next Monday split", "2026-03-09"),
])
def test_each_phrase_names_a_day_counted_from_today(phrase: str, expected: str) -> None:
    assert day(phrase).isoformat() == expected


def test_the_phrases_cross_week_month_and_year_ends() -> None:
    new_years_eve = date(2026, 12, 31)  # a Thursday
    assert day("tomorrow", new_years_eve) == date(2027, 1, 1)
    assert day("next Monday", new_years_eve) == date(2027, 1, 4)
    assert day("10th next month", new_years_eve) == date(2027, 1, 10)
    assert day("first monday four months later", date(2026, 8, 15)) == date(2026, 12, 7)
    assert day("first monday eight months later", date(2026, 9, 1)) == date(2027, 5, 3)
    monday, sunday = date(2026, 3, 2), date(2026, 3, 8)
    assert day("next Monday", monday) == date(2026, 3, 9) and day("next Monday", sunday) == date(2026, 3, 9)
    assert day("this Saturday", sunday) == date(2026, 3, 7)  # the week starts on Monday: yesterday
    assert day("next week Monday", sunday) == date(2026, 3, 9)


def test_next_monday_to_next_friday_is_one_working_week_whatever_today_is() -> None:
    rules = {"relativeTime": {"from": "next Monday", "to": "next Friday"},
             "expected": {"from": "{Year}-{Month0D}-{Day0D}", "to": "{Year}-{Month0D}-{Day0D}"}}
    for offset in range(14):
        today = WEDNESDAY + timedelta(days=offset)
        got = fill(rules, datetime(today.year, today.month, today.day, 12, tzinfo=timezone.utc))["expected"]
        start, end = date.fromisoformat(got["from"]), date.fromisoformat(got["to"])
        assert start.weekday() == 0 and 0 < (start - today).days <= 7 and end == start + timedelta(days=4)


def test_a_weekend_to_is_the_same_weekend_as_its_from() -> None:
    rules = {"relativeTime": {"from": "next Saturday", "to": "next Sunday"}, "expected": {"from": "{DayD}", "to": "{DayD}"}}
    saturday = datetime(2026, 3, 7, 9, tzinfo=timezone.utc)  # next Saturday is a week on; its Sunday follows it
    assert fill(rules, saturday)["expected"] == {"from": "14", "to": "15"}


def test_the_placeholders_are_the_references() -> None:
    template = "{DoW} {Month} {MonthFull} {month} {MonthD} {Month0D} {DayD} {Day0D} {Year} {Year}"
    assert write(template, date(2026, 3, 9)) == "Mon Mar March march 3 03 9 09 2026 2026"
    assert write(["{DayD}", "{Day0D}"], date(2026, 3, 9)) == ["9", "09"]


def test_one_date_fills_time_and_a_split_range_fills_pick_up_and_drop_off() -> None:
    now = datetime(2026, 3, 4, 10, tzinfo=timezone.utc)
    rules = {"relativeTime": {"from": "next Monday"}, "expected": {"time": ["weekly-{Year}-{Month0D}-{Day0D}.txt"]},
             "expect_in_result": True}
    assert fill(rules, now) == {**rules, "expected": {"time": ["weekly-2026-03-09.txt"]}}
    assert rules["expected"] == {"time": ["weekly-{Year}-{Month0D}-{Day0D}.txt"]}  # the task's rule is left as it was
    split = {"relativeTime": {"from": "next Monday split", "to": "next Friday split"},
             "expected": {"puDay": "{DayD}", "puMonth": "{MonthD}", "puYear": "{Year}",
                          "doDay": "{DayD}", "doMonth": "{MonthD}", "doYear": "{Year}", "locationName": "Zürich"}}
    assert fill(split, now)["expected"] == {"puDay": "9", "puMonth": "3", "puYear": "2026", "doDay": "13",
                                            "doMonth": "3", "doYear": "2026", "locationName": "Zürich"}


def test_the_day_is_the_desktops_calendar_day_or_the_named_zones() -> None:
    rules: dict[str, Any] = {"relativeTime": {"from": "today"}, "expected": {"time": "{Year}-{Month0D}-{Day0D}"}}
    late_in_new_york = datetime(2026, 3, 4, 23, 30, tzinfo=timezone(timedelta(hours=-5)))  # already the 5th in UTC
    assert fill(rules, late_in_new_york)["expected"]["time"] == "2026-03-04"
    assert fill({**rules, "timezone": "Asia/Tokyo"}, late_in_new_york)["expected"]["time"] == "2026-03-05"


@pytest.mark.parametrize("rules, message", [
    ({"relativeTime": {"from": "the day after the deadline"}, "expected": {"time": "x"}}, "the phrase 'the day after"),
    ({"relativeTime": {"from": "31st next month"}, "expected": {"time": "x"}}, "the phrase '31st next month'"),
    ({"relativeTime": {"from": "next Monday"}, "expected": {"from": "x"}}, "expected has no 'time'"),
    ({"relativeTime": {"from": "next Monday split", "to": "next Friday"}, "expected": {"puDay": "x", "to": "x"}},
     "expected has no 'puMonth'"),
    ({"relativeTime": {"from": "today"}, "expected": {"time": "x"}, "timezone": "Mars/Olympus"}, "unknown timezone"),
    ({"expected": {"time": "x"}}, "rules need relativeTime"),
])
def test_a_rule_vdesk_cannot_fill_is_named(rules: dict[str, Any], message: str) -> None:
    with pytest.raises(UnsupportedGetter, match=message):
        check(rules)


def test_check_direct_json_object_reads_a_commands_output_as_json() -> None:
    metric = lookup("check_direct_json_object")
    expected = {"expected": {"time": ["weekly-2026-03-09.txt"]}}
    assert metric('{"time": ["weekly-2026-03-09.txt"]}\n', expected) == 1.0
    assert metric("{'time': ['weekly-2026-03-09.txt']}", expected) == 1.0  # single quotes, as the reference reads them
    assert metric('{"time": ["weekly-2026-03-04.txt"]}', expected) == 0.0
    assert metric("weekly-2026-03-09.txt", expected) == 0.0

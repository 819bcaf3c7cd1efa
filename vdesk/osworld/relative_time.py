"""OSWorld's ``rule_relativeTime``: dates named relative to the desktop's "now", written into
the rule a metric then compares with (``check_direct_json_object`` in the reference's tasks).

    {"type": "rule_relativeTime",
     "rules": {"relativeTime": {"from": "next Monday"},
               "expected": {"time": "weekly-{Year}-{Month0D}-{Day0D}.txt"}}}

What is filled, as the reference fills it: with ``from`` alone, ``expected["time"]`` (a string
or a list of strings); with ``from`` and ``to``, ``expected["from"]`` and ``expected["to"]``, or
for the ``… split`` phrases the pick-up keys ``puDay``/``puMonth``/``puYear`` (``from``) and the
drop-off keys ``doDay``/``doMonth``/``doYear`` (``to``). ``rules["timezone"]`` names the zone
whose calendar day counts; without it, the desktop's own.

Placeholders (every occurrence): ``{Year}`` 2026, ``{Month}`` Mar, ``{MonthFull}`` March,
``{month}`` march, ``{MonthD}`` 3, ``{Month0D}`` 03, ``{DayD}`` 9, ``{Day0D}`` 09, ``{DoW}`` Mon.

Phrases (case and spacing ignored): ``today``, ``tomorrow``, ``yesterday``, ``this month``
(today), ``this <weekday>`` (that day of the current week, which starts on Monday), ``next
<weekday>`` (the first one after today), ``next week <weekday>`` (that day of next week),
``<N>th next month`` (N up to 28), ``first <weekday> <N> months later`` (N a number or a word up
to twelve). A ``to`` read after a ``from`` of the same kind (``next``, ``next week``) is in the
same week when its weekday comes later: "next Monday" to "next Friday" is a Monday and the
Friday four days after, whatever today is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from vdesk.errors import UnsupportedGetter

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = {word: n for n, word in enumerate(
    ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"), 1)}
_DAY = "|".join(WEEKDAYS)
_WEEK_PHRASE = re.compile(rf"(this|next|next week) ({_DAY})")
_DAY_NEXT_MONTH = re.compile(r"(\d{1,2})(?:st|nd|rd|th) next month")
_FIRST_LATER = re.compile(rf"first ({_DAY}) (\d{{1,2}}|{'|'.join(_NUMBERS)}) months? later")
_SHIFTS = {"today": 0, "now": 0, "this month": 0, "tomorrow": 1, "yesterday": -1}
SPLIT_KEYS = {"from": ("puDay", "puMonth", "puYear"), "to": ("doDay", "doMonth", "doYear")}


@dataclass(frozen=True)
class Phrase:
    """One ``relativeTime`` value, read: ``words`` without the ``split`` suffix."""

    words: str
    split: bool

    @classmethod
    def read(cls, text: Any) -> Phrase:
        """:class:`UnsupportedGetter` naming a phrase vdesk cannot turn into a date."""
        words = " ".join(str(text).lower().split())
        split = words.endswith(" split")
        phrase = cls(words.removesuffix(" split"), split)
        if not (phrase.words in _SHIFTS or _WEEK_PHRASE.fullmatch(phrase.words)
                or _FIRST_LATER.fullmatch(phrase.words) or _day_next_month(phrase.words)):
            raise UnsupportedGetter(f"rule_relativeTime: the phrase {text!r} is not supported")
        return phrase

    def day(self, today: date, after: tuple[Phrase, date] | None = None) -> date:
        """The date this phrase names on ``today``; ``after`` is the range's ``from`` and its date."""
        if self.words in _SHIFTS:
            return today + timedelta(days=_SHIFTS[self.words])
        if week := _WEEK_PHRASE.fullmatch(self.words):
            kind, weekday = week[1], WEEKDAYS.index(week[2])
            if after is not None and (earlier := _WEEK_PHRASE.fullmatch(after[0].words)) and earlier[1] == kind:
                ahead = weekday - after[1].weekday()
                if ahead > 0:
                    return after[1] + timedelta(days=ahead)
            if kind == "this":
                return today + timedelta(days=weekday - today.weekday())
            if kind == "next week":
                return today + timedelta(days=7 - today.weekday() + weekday)
            return today + timedelta(days=(weekday - today.weekday()) % 7 or 7)
        if later := _FIRST_LATER.fullmatch(self.words):
            months = int(later[2]) if later[2].isdigit() else _NUMBERS[later[2]]
            first = _month_start(today, months)
            return first + timedelta(days=(WEEKDAYS.index(later[1]) - first.weekday()) % 7)
        return _month_start(today, 1).replace(day=_day_next_month(self.words) or 1)


def _day_next_month(words: str) -> int | None:
    found = _DAY_NEXT_MONTH.fullmatch(words)
    return int(found[1]) if found and 1 <= int(found[1]) <= 28 else None


def _month_start(today: date, months: int) -> date:
    index = today.month - 1 + months
    return date(today.year + index // 12, index % 12 + 1, 1)


def write(template: Any, day: date) -> Any:
    """``template`` (a string, or a list of them) with the placeholders of ``day``."""
    if isinstance(template, list):
        return [write(item, day) for item in template]
    text = str(template)
    for name, value in (("{Year}", str(day.year)), ("{MonthFull}", day.strftime("%B")),
                        ("{Month0D}", f"{day.month:02d}"), ("{MonthD}", str(day.month)),
                        ("{Month}", day.strftime("%b")), ("{month}", day.strftime("%B").lower()),
                        ("{Day0D}", f"{day.day:02d}"), ("{DayD}", str(day.day)), ("{DoW}", day.strftime("%a"))):
        text = text.replace(name, value)
    return text


def check(rules: Any) -> None:
    """:class:`UnsupportedGetter` saying what is wrong with a ``rule_relativeTime`` rule: a
    phrase vdesk cannot read, an unknown time zone, an ``expected`` key the dates go into missing."""
    if not isinstance(rules, Mapping) or not isinstance(rules.get("relativeTime"), Mapping) \
            or "from" not in rules["relativeTime"] or not isinstance(rules.get("expected"), Mapping):
        raise UnsupportedGetter("rule_relativeTime: rules need relativeTime with 'from', and expected")
    for key in _targets(rules):
        if key not in rules["expected"]:
            raise UnsupportedGetter(f"rule_relativeTime: expected has no {key!r} for the date to go into")
    _zone(rules)


def _targets(rules: Mapping[str, Any]) -> list[str]:
    """The ``expected`` keys the dates go into."""
    relative = rules["relativeTime"]
    if "to" not in relative:
        Phrase.read(relative["from"])
        return ["time"]
    keys = []
    for end in ("from", "to"):
        keys += SPLIT_KEYS[end] if Phrase.read(relative[end]).split else [end]
    return keys


def _zone(rules: Mapping[str, Any]) -> ZoneInfo | None:
    name = rules.get("timezone")
    if name is None:
        return None
    try:
        return ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError):
        raise UnsupportedGetter(f"rule_relativeTime: unknown timezone {name!r}") from None


def fill(rules: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """``rules`` with the dates its phrases name on ``now`` (the desktop's time, with its UTC
    offset) written into ``expected``; :class:`UnsupportedGetter` as :func:`check` says."""
    check(rules)
    zone = _zone(rules)
    today = (now.astimezone(zone) if zone is not None else now).date()
    relative, expected = rules["relativeTime"], dict(rules["expected"])
    start_phrase = Phrase.read(relative["from"])
    start = start_phrase.day(today)
    if "to" not in relative:
        expected["time"] = write(expected["time"], start)
        return {**rules, "expected": expected}
    end_phrase = Phrase.read(relative["to"])
    end = end_phrase.day(today, after=(start_phrase, start))
    for side, phrase, day in (("from", start_phrase, start), ("to", end_phrase, end)):
        for key in (SPLIT_KEYS[side] if phrase.split else (side,)):
            expected[key] = write(expected[key], day)
    return {**rules, "expected": expected}

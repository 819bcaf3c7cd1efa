"""rule_relativeTime on a real desktop: its dates count from the desktop's clock (here a fixed
day far from this machine's), in the desktop's zone or the one the rule names."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from vdesk.desktop import Desktop
from vdesk.harness.hosts import LocalHost
from vdesk.osworld.extension import spec_of
from vdesk.osworld.getters import getter
from vdesk.osworld.loader import osworld_task
from vdesk.osworld.steps import Context
from vdesk.osworld.task_files import TaskFiles

pytestmark = pytest.mark.desktop
CLOCK = "2026-03-04 15:00:00"  # a Wednesday afternoon (UTC), hours from any midnight


@pytest.fixture(scope="module")
def context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Context]:
    cache = tmp_path_factory.mktemp("cache")
    data = {"id": "t1", "instruction": "x", "evaluator": {"func": "exact_match"}}
    task = osworld_task(data, source="t", base_dir=cache, domain="os")
    assert spec_of(task) is not None
    with Desktop.up(image="apps", clock=CLOCK, timeout=120) as desktop:
        yield Context(LocalHost(desktop), spec_of(task), TaskFiles(None, "t1", cache), cache)


def filled(context: Context, **rules: object) -> dict[str, object]:
    return getter("rule_relativeTime")(context, {"rules": rules})["expected"]


def test_next_monday_is_counted_from_the_desktops_clock(context: Context) -> None:
    got = filled(context, relativeTime={"from": "next Monday"}, expected={"time": "weekly-{Year}-{Month0D}-{Day0D}.txt"})
    assert got == {"time": "weekly-2026-03-09.txt"}


def test_a_named_zone_turns_the_desktops_time_into_its_day(context: Context) -> None:
    rules = {"relativeTime": {"from": "today"}, "expected": {"time": "{DoW} {DayD} {Month}"}}
    assert filled(context, **rules) == {"time": "Wed 4 Mar"}
    assert filled(context, **rules, timezone="Pacific/Kiritimati") == {"time": "Thu 5 Mar"}  # UTC+14

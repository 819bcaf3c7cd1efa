"""vdesk's getters that turn a desktop's file into a value give what OSWorld's own getters give:
``content_from_vm_file`` (a spreadsheet's last row as text, which the reference reads with pandas)
is run by the reference's getter in its virtualenv, over a stand-in machine that serves the same
workbook, and by vdesk's reader; the answers must be equal. So are the getters that hand a file
on (``vm_file`` with ``multi`` and ``gives``, ``vlc_config``, ``gimp_config_file``,
``cache_file``) and ``rule``, over the fake desktop of
:mod:`tests.osworld.test_reference_verdicts_browser`, and ``rule_relativeTime`` from one frozen
"now" on both sides."""

from __future__ import annotations

import copy
import json
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from tests.osworld.reference import REPO, reference_python

# Runs in .venv-osworld: the reference's getter over an env whose controller serves host files.
_CHILD = r"""
import json, sys, logging, types
logging.disable(logging.CRITICAL)
from desktop_env.evaluators.getters.file import get_content_from_vm_file
cache, paths = sys.argv[1], json.loads(sys.argv[2])
env = types.SimpleNamespace(cache_dir=cache, controller=types.SimpleNamespace(get_file=lambda p: open(p, "rb").read()))
out = []
for path in paths:
    try:
        out.append(get_content_from_vm_file(env, {"path": path, "file_type": "xlsx", "file_content": "last_row"}))
    except Exception as error:
        out.append({"error": type(error).__name__})
print(json.dumps(out))
"""

SHEETS: dict[str, list[list[Any]]] = {
    "ints": [["Name", "Citations", "h"], ["Ann", 345074, 147], ["Bob", 12, 3]],
    "all numbers": [["a", "b"], [1, 2], [3, 4.5]],
    "all whole numbers": [["a", "b"], [1, 2], [3, 4]],
    "decimals column": [["Name", "Score"], ["Ann", 1.5], ["Bob", 2]],
    "missing in a number column": [["Name", "Score", "Rank"], ["Ann", 1, 2], ["Bob", None, 3]],
    "missing last cell": [["Name", "Score", "Note"], ["Ann", 1, "x"], ["Bob", 2]],
    "numbers as text": [["Name", "Year"], ["Ann", "2021"], ["Bob", "2022"]],
    "text meaning missing": [["Name", "Note"], ["Ann", "ok"], ["Bob", "N/A"]],
    "mixed text and numbers": [["Name", "Value"], ["Ann", "high"], ["Bob", 7]],
    "booleans": [["Name", "Done"], ["Ann", True], ["Bob", False]],
    "leading and trailing blank rows": [[], ["Name", "Value"], ["Ann", 1], ["Bob", 2], [], []],
    "header shorter": [["Name"], ["Ann", 1], ["Bob", 2, "z"]],
    "a link": [["Name", "Link"], ["Ann", "https://example.org/a"], ["Bob", "https://hal.science/hal-04206682/document"]],
    "header only": [["Name", "Value"]],
}


def _workbook(path: Path, rows: list[list[Any]]) -> str:
    import openpyxl

    book = openpyxl.Workbook()
    for index, row in enumerate(rows, start=1):
        for column, value in enumerate(row, start=1):
            book.active.cell(row=index, column=column, value=value)
    book.save(path)
    return str(path)


def test_content_from_vm_file_last_row(tmp_path: Path) -> None:
    from vdesk.documents import last_row_text
    from vdesk.errors import DocumentError

    paths = [_workbook(tmp_path / f"{i}.xlsx", rows) for i, rows in enumerate(SHEETS.values())]
    cache = tmp_path / "cache"
    cache.mkdir()
    done = subprocess.run([str(reference_python()), "-c", _CHILD, str(cache), json.dumps(paths)],
                          capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    ours: list[Any] = []
    for path in paths:
        try:
            ours.append(last_row_text(Path(path).read_bytes()))
        except DocumentError:
            ours.append({"error": "IndexError"})
    differ = [f"{label}: vdesk {a!r}, reference {b!r}" for label, a, b in zip(SHEETS, ours, theirs) if a != b]
    assert not differ, "\n".join(differ)


# The getters that bring a file of the desktop (or of the cache) to the metric, over the fake
# desktop of the browser getters' differential; a path out of either side's cache is compared as
# the file's name and bytes.
HOME = "/home/user"
VLCRC = f"{HOME}/.config/vlc/vlcrc"
GIMPRC = f"{HOME}/.config/GIMP/2.10/gimprc"


FileCase = tuple[str, str, dict[str, Any], dict[str, str], str | None]
CACHED = {"out.txt": b"saved\n"}


def _file_cases(tmp_path: Path) -> list[FileCase]:
    """(label, getter, config, the desktop's files, no shown address) for each case."""
    from tests.osworld.test_reference_verdicts_browser import _file

    a, b = f"{HOME}/Desktop/a.txt", f"{HOME}/Desktop/b.csv"
    both = {a: _file(tmp_path, "a.txt", "first\n"), b: _file(tmp_path, "b.csv", "x,y\n1,2\n")}
    empty = _file(tmp_path, "empty", b"")
    pair = {"path": [a, b], "dest": ["a.txt", "b.csv"], "multi": True}
    gimprc = {"file_name": "gimprc", "dest": "gimprc"}
    return [
        ("one file", "vm_file", {"path": a, "dest": "a.txt"}, both, None),
        ("one file missing", "vm_file", {"path": f"{HOME}/none.txt", "dest": "none.txt"}, both, None),
        ("an empty file", "vm_file", {"path": a, "dest": "a.txt"}, {a: empty}, None),
        ("two given", "vm_file", {**pair, "gives": [0, 1]}, both, None),
        ("two, the first given by default", "vm_file", pair, both, None),
        ("two, the second given", "vm_file", {**pair, "gives": [1]}, both, None),
        ("two, none given", "vm_file", {**pair, "gives": []}, both, None),
        ("two given, one missing", "vm_file", {**pair, "gives": [0, 1]}, {b: both[b]}, None),
        ("a list of one", "vm_file", {"path": [a], "dest": ["a.txt"], "multi": True}, both, None),
        ("vlcrc", "vlc_config", {"dest": "vlcrc"}, {VLCRC: _file(tmp_path, "vlcrc", "[qt]\nqt-bgcone=0\n")}, None),
        ("empty vlcrc", "vlc_config", {"dest": "vlcrc"}, {VLCRC: empty}, None),
        ("no vlcrc", "vlc_config", {"dest": "vlcrc"}, {}, None),
        ("gimprc", "gimp_config_file", gimprc, {GIMPRC: _file(tmp_path, "gimprc", "(undo-levels 100)\n")}, None),
        ("empty gimprc", "gimp_config_file", gimprc, {GIMPRC: empty}, None),
        ("no gimprc", "gimp_config_file", gimprc, {}, None),
        ("a cached file", "cache_file", {"path": "out.txt"}, {}, None),
        ("no cached file", "cache_file", {"path": "never-written.txt"}, {}, None),
        ("a rule", "rule", {"rules": {"expected": ["a", 1], "type": "x"}}, {}, None),
    ]


def test_file_getters(tmp_path: Path) -> None:
    from tests.osworld.test_reference_verdicts_browser import _compare

    cases = _file_cases(tmp_path)
    values = dict(zip((case[0] for case in cases), _compare(tmp_path, cases, cached=CACHED)))
    first, second = {"file": "a.txt", "hex": b"first\n".hex()}, {"file": "b.csv", "hex": b"x,y\n1,2\n".hex()}
    assert values["two given"] == [first, second] and values["two, the first given by default"] == first
    assert values["two given, one missing"] == [None, second] and values["empty gimprc"] is None


# Where vdesk's file getters answered otherwise than the reference (each failed before):
# ``multi`` lists handed on whole, not the files ``gives`` picks; a missing vlcrc or cached
# file None, where the reference raises; an empty gimprc a path, where it answers None.
FILE_DISAGREEMENTS = ["two, the first given by default", "two, the second given", "two, none given", "a list of one",
                      "no vlcrc", "empty gimprc", "no cached file"]


@pytest.mark.parametrize("label", FILE_DISAGREEMENTS)
def test_file_getters_where_they_differed(tmp_path: Path, label: str) -> None:
    from tests.osworld.test_reference_verdicts_browser import _compare

    _compare(tmp_path, [case for case in _file_cases(tmp_path) if case[0] == label], cached=CACHED)


# rule_relativeTime counted from one frozen "now" on both sides: the reference's clock patched in
# its child, vdesk's desktop answering `date` with it. The phrases are those the pinned reference
# fills (vdesk reads more, from OSWorld's newer source), in the zone the rule names.
_RELATIVE_CHILD = r"""
import json, sys, logging, os
answers = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)  # the reference prints the rules it filled
logging.disable(logging.CRITICAL)
from datetime import datetime
from desktop_env.evaluators.getters import misc
out = []
for case in json.load(sys.stdin):
    frozen = datetime.fromisoformat(case["now"])
    class Frozen(datetime):
        @classmethod
        def now(cls, tz=None):
            return frozen.astimezone(tz)
    misc.datetime = Frozen
    try:
        out.append({"value": misc.get_rule_relativeTime(None, {"rules": case["rules"]})})
    except Exception as error:
        out.append({"error": f"{type(error).__name__}: {error}"[:300]})
answers.write(json.dumps(out) + "\n")
"""
EVERY_PLACEHOLDER = "{DoW} {Month} {DayD} {Year} {Month0D} {month} {MonthFull} {Day0D} {MonthD}"
ONE_DAY = ["tomorrow", "5th next month", "10th next month", "this month", "next Monday",
           "first monday four months later", "first monday eight months later"]
RANGES = [("this Saturday", "this Sunday"), ("10th next month", "11th next month"), ("next Monday", "next Friday"),
          ("next Monday split", "next Friday split"), ("next Friday", "next Sunday"), ("next Saturday", "next Sunday"),
          ("next week Friday", "next week Sunday"), ("next week Saturday", "next week Sunday"), ("tomorrow", "next Sunday")]
SPLIT = {"puDay": "{DayD}", "puMonth": "{MonthD}", "puYear": "{Year}", "doDay": "{DayD}", "doMonth": "{MonthD}",
         "doYear": "{Year}"}


def _relative_cases() -> list[tuple[datetime, dict[str, Any]]]:
    """Each day of one week, and the 15th of each month late in the evening."""
    nows = [datetime(2026, 12, 7, 10, tzinfo=timezone.utc) + timedelta(days=days) for days in range(7)]
    nows += [datetime(2026, month, 15, 23, 30, tzinfo=timezone.utc) for month in range(1, 13)]
    cases = []
    for now in nows:
        for phrase in ONE_DAY:
            # The pinned reference counts "N months later" as month (m + N) % 12, which is 0 (it
            # raises) for August + 4 and April + 8; vdesk gives December there.
            if phrase.startswith("first monday") and (now.month + (4 if "four" in phrase else 8)) % 12 == 0:
                continue
            cases.append((now, {"relativeTime": {"from": phrase}, "expected": {"time": EVERY_PLACEHOLDER},
                                "timezone": "UTC"}))
        for start, end in RANGES:
            expected = dict(SPLIT) if "split" in start else {"from": EVERY_PLACEHOLDER, "to": EVERY_PLACEHOLDER}
            cases.append((now, {"relativeTime": {"from": start, "to": end}, "expected": expected, "timezone": "UTC"}))
    return cases


class _Clock:
    """A desktop whose ``date`` prints ``now``."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def call(self, function: Any, *args: Any, timeout: float = 0.0) -> Any:
        from types import SimpleNamespace

        from vdesk.osworld import inside

        assert function is inside.run and args[0][0] == "date", function
        return SimpleNamespace(stdout=self.now.isoformat(timespec="seconds") + "\n")


def test_rule_relative_time(tmp_path: Path) -> None:
    from vdesk.osworld.getters import getter
    from vdesk.osworld.steps import Context

    cases = _relative_cases()
    done = subprocess.run([str(reference_python()), "-c", _RELATIVE_CHILD], capture_output=True, text=True,
                          input=json.dumps([{"now": now.isoformat(), "rules": rules} for now, rules in cases]),
                          timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    differ = []
    for (now, rules), answer in zip(cases, theirs):
        context = Context(_Clock(now), None, None, tmp_path, home=HOME)  # type: ignore[arg-type]
        mine = {"value": getter("rule_relativeTime")(context, {"rules": copy.deepcopy(rules)})}
        if mine != answer:
            differ.append(f"{now:%a %Y-%m-%d} {rules['relativeTime']}: vdesk {mine!r:.300}, reference {answer!r:.300}")
    assert not differ, f"{len(differ)} of {len(cases)} differ:\n" + "\n".join(differ)

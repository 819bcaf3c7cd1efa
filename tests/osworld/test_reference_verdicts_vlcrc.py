"""vdesk's readers of VLC's settings file (vlcrc) give OSWorld's own verdicts on generated files:
sections, comments that hold a key and its value, spaces around ``=``, a key given twice, blank
and stray lines, odd encodings, and each rule the metrics take. Hypothesis draws the inputs (a
fixed seed, no example database); each metric's inputs are scored by the reference in one batch
(tests/osworld/reference.py). ``VDESK_SWEEP=N`` draws N times as many (see docs/osworld.md)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.osworld.reference import Case, assert_same_outcomes, write_file

EXAMPLES = 200 * int(os.environ.get("VDESK_SWEEP", "1") or "1")

INT_KEYS = {   # metric -> the key it reads and its rule's key
    "check_qt_bgcone": ("qt-bgcone", "expected_qt_bgcone"),
    "check_qt_max_volume": ("qt-max-volume", "expected_qt_max_volume"),
    "check_qt_minimal_view": ("qt-minimal-view", "expected_qt_minimal_view"),
    "check_one_instance_when_started_from_file": ("one-instance-when-started-from-file",
                                                  "expected_one_instance_when_started_from_file"),
    "check_global_key_play_pause": ("global-key-play-pause", "expected_global_key_play_pause"),
}
KEYS = [key for key, _ in INT_KEYS.values()] + ["qt-slider-colours", "input-record-path"]
OTHER_KEYS = ["qt-privacy-ask", "key-play-pause", "qt-bgcone-file", "metadata-network-access", "qt-recentplay"]

NUMBERS = ["0", "1", "125", "200", "01", "-1", "1.0", "true", "Ctrl+p", ""]
COLOURS = ["153;210;153;20;210;20;255;199;15;245;39;29", "0;0;0;0;0;0;0;0;0;0;0;0", "10;20;30;40;50;60;70;80;90;99;0;1",
           "0;0;0;200", "0;0;0;0", "0; 0 ;0", "0;0;x", "255;255;255;255;255;255;255;255;255;255;255;255", ""]
PATHS = ["/home/user/Videos", "/home/user/Videos/", "/home/user/Desktop", "~/Desktop", "/a=b", ""]

text_bits = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)


@dataclass(frozen=True)
class Family:
    """One metric of the family: the key it reads, the values that key takes, its rules."""

    metric: str
    key: str
    values: list[str]
    rules: st.SearchStrategy[Any]


@st.composite
def setting_lines(draw: st.DrawFn, family: Family) -> str:
    """One line that sets (or, commented, seems to set) a key, the metric's own most often: a
    comment before it, spaces around ``=``, a prefix that makes it a longer key, a trailing CR."""
    key = draw(st.sampled_from([family.key] * 6 + KEYS + OTHER_KEYS))
    value = draw(st.sampled_from(family.values[:4]) | st.sampled_from(family.values)
                 | st.sampled_from(NUMBERS + COLOURS + PATHS) | text_bits)
    prefix = draw(st.sampled_from(["", "", "", "#", "# ", " ", "\t", "x", "#x"]))
    before, after = draw(st.sampled_from(["", "", " ", "\t"])), draw(st.sampled_from(["", "", " ", "\t"]))
    equals = draw(st.sampled_from(["=", "=", "=", "==", ":", ""]))
    end = draw(st.sampled_from(["", "", " ", "\r"]))
    return f"{prefix}{key}{before}{equals}{after}{value}{end}"


other_lines = st.sampled_from(["", "[qt]", "[core]", "[main]", "# Show background cone or art (boolean)",
                               "## vlc file", "   ", "#", "="]) | text_bits


@st.composite
def vlcrc_bytes(draw: st.DrawFn, family: Family) -> bytes:
    """A vlcrc file's bytes: its lines joined by LF (or CRLF), most as UTF-8, some with a BOM, in
    Latin-1 or UTF-16, or with a stray byte."""
    lines = draw(st.lists(setting_lines(family) | setting_lines(family) | other_lines, max_size=12))
    text = draw(st.sampled_from(["\n", "\n", "\r\n"])).join(lines)
    encoding = draw(st.sampled_from(["utf-8"] * 16 + ["utf-8-sig", "latin-1", "utf-16", "stray"]))
    if encoding == "stray":
        return text.encode("utf-8") + b"\xff"
    return text.encode(encoding, errors="replace")


def _wanted(pool: list[str]) -> st.SearchStrategy[Any]:
    """A rule's expected value as task files give it (a number or text), and odd ones."""
    kinds = [st.sampled_from(pool[:4] + [0, 1]), st.sampled_from(pool), st.sampled_from([0, 1, 125, 200, -1]),
             st.booleans(), st.sampled_from([1.0, None, [1]])]
    return st.integers(0, len(kinds) - 1).flatmap(lambda n: kinds[n])   # the first kinds most often


def _int_family(metric: str, key: str, rule_key: str) -> Family:
    rules = st.fixed_dictionaries({rule_key: _wanted(NUMBERS)})
    lacking = st.just({})   # the rule lacks its key: an error on both sides
    return Family(metric, key, NUMBERS, st.integers(0, 9).flatmap(lambda n: lacking if n == 9 else rules))


FAMILY = [_int_family(metric, key, rule_key) for metric, (key, rule_key) in INT_KEYS.items()] + [
    Family("check_qt_slider_colours", "qt-slider-colours", COLOURS, st.fixed_dictionaries(
        {"type": st.sampled_from(["match", "blackish"])},
        optional={"expected_qt_slider_colours": _wanted(COLOURS)})),
    Family("is_vlc_recordings_folder", "input-record-path", PATHS,
           st.dictionaries(st.just("recording_file_path"), _wanted(PATHS), min_size=1)),
]


def _drawn(strategy: st.SearchStrategy[Any], count: int) -> list[Any]:
    """``count`` inputs drawn by Hypothesis with a fixed seed, to be scored in one batch: the
    generate phase only (a batch has nothing to shrink; the failure lists every input)."""
    drawn: list[Any] = []

    @settings(max_examples=count, derandomize=True, database=None, deadline=None,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(value: Any) -> None:
        drawn.append(value)

    collect()
    return drawn


def _cases(tmp_path: Path, metric: str, inputs: list[tuple[bytes, Any]]) -> list[Case]:
    return [Case(metric, write_file(tmp_path / f"vlcrc{n}", data), rule, label=f"{data!r:.160} {json.dumps(rule)}")
            for n, (data, rule) in enumerate(inputs)]


@pytest.mark.parametrize("family", FAMILY, ids=lambda family: family.metric)
def test_generated_vlcrc_files(tmp_path: Path, family: Family) -> None:
    inputs = _drawn(st.tuples(vlcrc_bytes(family), family.rules), EXAMPLES)
    assert len(inputs) >= EXAMPLES * 0.9, f"Hypothesis drew only {len(inputs)} inputs"
    assert_same_outcomes(_cases(tmp_path, family.metric, inputs))


# The cases the differential first found, kept as they are: each gave the opposite verdict.
ISSUE_CASES: list[tuple[str, bytes, dict[str, Any]]] = [
    ("check_qt_bgcone", b"[qt]\n#qt-bgcone=0\n", {"expected_qt_bgcone": 0}),      # a comment holds the value
    ("check_qt_bgcone", b"[qt]\nqt-bgcone = 0\n", {"expected_qt_bgcone": 0}),     # spaces around =
    ("check_qt_max_volume", b"[qt]\n# qt-max-volume=200\n", {"expected_qt_max_volume": 200}),
    ("check_qt_max_volume", b"[qt]\nqt-max-volume = 200\n", {"expected_qt_max_volume": 200}),
    ("check_qt_minimal_view", b"[qt]\n#qt-minimal-view=1\n", {"expected_qt_minimal_view": 1}),
    ("check_qt_minimal_view", b"[qt]\nqt-minimal-view = 1\n", {"expected_qt_minimal_view": 1}),
    ("check_one_instance_when_started_from_file", b"[core]\n#one-instance-when-started-from-file=0\n",
     {"expected_one_instance_when_started_from_file": 0}),
    ("check_one_instance_when_started_from_file", b"[core]\none-instance-when-started-from-file = 0\n",
     {"expected_one_instance_when_started_from_file": 0}),
]


# Each other kind of disagreement the generated files found, one case each.
FOUND_CASES: list[tuple[str, bytes, Any]] = [
    ("check_qt_bgcone", "[qt]\n# Fond d'écran\nqt-bgcone=0\n".encode("latin-1"),   # not UTF-8: an error
     {"expected_qt_bgcone": 0}),
    ("check_qt_max_volume", b"qt-max-volume=125\n", {"expected_qt_max_volume": 125.0}),
    ("check_qt_minimal_view", b"qt-minimal-view=01\n", {"expected_qt_minimal_view": 1}),
    ("check_qt_minimal_view", b"", {"expected_qt_minimal_view": None}),
    ("check_one_instance_when_started_from_file", b"", {"expected_one_instance_when_started_from_file": True}),
    ("check_global_key_play_pause", b"global-key-play-pause=0\n", {"expected_global_key_play_pause": 1}),
    ("check_qt_slider_colours", b"qt-slider-colours=0;0;0;200\n", {"type": "blackish"}),   # no whole 2nd colour
    ("check_qt_slider_colours", b"qt-slider-colours=0;0;0\n# qt-slider-colours (string)\n", {"type": "blackish"}),
    ("check_qt_slider_colours", b"qt-slider-colours=1;2;3;4;5;6;7;8;9;10;11;12\n", {"type": "match"}),
    ("is_vlc_recordings_folder", b"\xef\xbb\xbf#input-record-path=/home/user/Videos\n",
     {"recording_file_path": "/home/user/Videos"}),
]


@pytest.mark.parametrize(("metric", "data", "rule"), ISSUE_CASES + FOUND_CASES,
                         ids=[f"{m}-{n}" for n, (m, _, _) in enumerate(ISSUE_CASES + FOUND_CASES)])
def test_found_cases(tmp_path: Path, metric: str, data: bytes, rule: Any) -> None:
    assert_same_outcomes(_cases(tmp_path, metric, [(data, rule)]))

"""vdesk's OSWorld metrics against OSWorld's own: the same inputs must get the same verdicts.

A first slice of vdesk issue 30 (item 4): the cheap JSON/string metrics; file metrics come next.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.osworld.reference import Case, assert_same_verdicts

AGREED: list[Case] = [
    Case("exact_match", "a", {"expected": "a"}, label="equal"),
    Case("exact_match", "a", {"expected": "b"}, label="different"),
    Case("check_direct_json_object", {"a": 1}, {"expected": {"a": 1}}, label="equal dict"),
    Case("check_direct_json_object", {"a": 1}, {"expected": {"a": 2}}, label="different dict"),
    Case("check_direct_json_object", [{"a": 1}], {"expected": {"a": 1}},
         label="list without expect_in_result"),
    Case("check_enabled_experiments", ["x@1", "y"], {"type": "names", "names": ["x", "y"]},
         label="option suffix stripped"),
    Case("check_enabled_experiments", ["y", "x"], {"type": "names", "names": ["x", "y"]},
         label="order counts"),
]



def test_agreed_verdicts() -> None:
    """Cases both implementations already score alike stay alike."""
    assert_same_verdicts(AGREED)


def test_direct_json_object_contains_mode_and_candidates() -> None:
    rule = {"expected": {"a": "hello"}, "expect_in_result": True}
    assert_same_verdicts([
        Case("check_direct_json_object", {"a": "say hello"}, rule, label="substring"),
        Case("check_direct_json_object", {"a": "Hello"}, rule, label="other case"),
        Case("check_direct_json_object", {"b": "hello"}, rule, label="key missing"),
        Case("check_direct_json_object", {"a": ["x", "hello"]}, rule, label="in a result list"),
        Case("check_direct_json_object", {"a": "y"}, {"expected": {"a": ["y", "x"]}, "expect_in_result": True},
             label="candidate equals"),
        Case("check_direct_json_object", {"a": ["q", "x"]}, {"expected": {"a": ["y", "x"]}, "expect_in_result": True},
             label="candidate in list"),
        Case("check_direct_json_object", {"a": "xy"}, {"expected": {"a": ["y", "x"]}, "expect_in_result": True},
             label="candidate only inside"),
        Case("check_direct_json_object", {"a": 3}, {"expected": {"a": 3}, "expect_in_result": True},
             label="a number contained"),
        Case("check_direct_json_object", {"a": "x"}, {"expected": {"a": ["y", "x"]}}, label="candidates, exact mode"),
        Case("check_direct_json_object", {"a": [2, 1]}, {"expected": {"a": [1, 2], "ignore_list_order": True}},
             label="ignore_list_order"),
        Case("check_direct_json_object", {"a": "v"}, {"expected": {"a": "__EVALUATION_FAILED__"}},
             label="failure mark"),
        Case("check_direct_json_object", "{'a': 'v'}", {"expected": {"a": "v"}}, label="single-quoted text"),
        Case("check_direct_json_object", "not json", {"expected": {"a": "v"}}, label="not JSON"),
        Case("check_direct_json_object", ["a"], {"expected": {"a": "v"}}, label="a list result"),
    ])


def test_diff_text_file_compares_lines(tmp_path: Path) -> None:
    def text(name: str, body: str) -> str:
        (tmp_path / name).write_text(body)
        return str(tmp_path / name)

    gold = text("gold.txt", "alpha\nbeta\ngamma\ndelta\n")
    assert_same_verdicts([
        Case("diff_text_file", text("same.txt", "alpha\nbeta\ngamma\ndelta\n"), gold, label="same"),
        Case("diff_text_file", text("one.txt", "alpha\nbeta\ngamma\ndelta!\n"), gold, label="one line edited"),
        Case("diff_text_file", text("order.txt", "beta\nalpha\ngamma\ndelta\n"), gold, label="two lines swapped"),
        Case("diff_text_file", text("empty.txt", ""), gold, label="empty"),
        Case("diff_text_file", None, gold, label="none"),
    ])

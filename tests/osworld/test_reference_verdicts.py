"""vdesk's OSWorld metrics against OSWorld's own: the same inputs must get the same verdicts.

A first slice of vdesk issue 30 (item 4): the cheap JSON/string metrics; file metrics come next.
"""

from __future__ import annotations

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

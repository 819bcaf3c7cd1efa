"""One DesktopSpec and one Box, in pure logic: a spec checked when made, read from a task file's
words, laid over a run's defaults; a box's two views, its space and the tuple it replaces."""

from __future__ import annotations

import pytest

from vdesk.actions import Receipt, parse_batch
from vdesk.coords import Box, ImageSpace, Screen, union
from vdesk.errors import InvalidAction, InvalidArgument
from vdesk.spec import DesktopSpec, Limits


def test_a_spec_reads_a_task_files_words_and_writes_them_back() -> None:
    spec = DesktopSpec.model_validate({"size": "1024x768", "limits": {"memory": "1g"}, "clock": "2026-01-01 00:00:00"})
    assert spec.size == (1024, 768) and spec.limits == Limits(memory="1g") and spec.screen == Screen(1024, 768)
    assert spec.model_dump(mode="json", include={"size", "clock"}) == {"size": "1024x768", "clock": "2026-01-01 00:00:00"}


def test_a_spec_over_a_runs_defaults_keeps_its_own() -> None:
    mine = DesktopSpec(image="apps", environment={"A": "task"})
    assert mine.over("osworld", {"A": "run", "B": "run"}) == DesktopSpec(image="apps", environment={"A": "task", "B": "run"})
    assert DesktopSpec().over("osworld").image == "osworld" and DesktopSpec().image_name == "lean"


@pytest.mark.parametrize("settings, said", [
    ({"size": (10, 10)}, "size 10x10 is outside"),
    ({"size": ("1280", "800")}, "size must be a pair of whole numbers"),
    ({"scale": True}, "scale: must be a number"),
    ({"ttl": -1}, "ttl must be 0 (none)"),
    ({"limits": {"cpus": 0}}, "limits.cpus must be a positive number"),
    ({"clock": "soon"}, "invalid clock 'soon'"),
    ({"sise": (800, 600)}, "unknown desktop setting 'sise'"),
])
def test_a_bad_setting_is_one_line_naming_it(settings: dict, said: str) -> None:
    with pytest.raises(InvalidArgument, match="^[^\n]*$") as caught:
        DesktopSpec(**settings)
    assert said in str(caught.value)


def test_a_box_has_both_views_and_still_reads_as_its_tuple() -> None:
    box = Box.from_xywh(10, 20, 30, 40)
    assert box.ltrb == (10, 20, 40, 60) and box.xywh == (10, 20, 30, 40) and box.centre == (25, 40)
    left, top, right, bottom = box
    assert (left, top, right, bottom) == (10, 20, 40, 60) and box[2] == 40 and box == (10, 20, 40, 60)
    assert box.contains(10, 20) and not box.contains(40, 20) and Box(15, 25, 20, 30).inside(box)
    assert union([box, Box(0, 0, 5, 5)]) == Box(0, 0, 40, 60)


def test_a_box_knows_its_space_and_converts_between_them() -> None:
    logical = Box(10, 10, 21, 21)
    physical = logical.physical(1.5)
    assert physical.space == "physical" and physical == Box(15, 15, 32, 32, "physical")
    assert physical.logical(1.5) == Box(10, 10, 22, 22)  # the logical pixels that cover it
    assert physical != Box(15, 15, 32, 32)  # same numbers, another space
    with pytest.raises(InvalidArgument, match="logical pixels is needed"):
        Box.of(physical)
    with pytest.raises(InvalidArgument, match="left <= right"):
        Box.of((5, 0, 1, 1))


def test_the_door_parses_json_text_and_names_what_is_not() -> None:
    assert [a.type.value for a in parse_batch('[{"type": "hotkey", "inputs": {"key": "a"}}]')] == ["hotkey"]
    with pytest.raises(InvalidAction, match="list of actions or its JSON"):
        parse_batch("click(100, 200)")


def test_a_receipt_in_the_agents_image_covers_the_same_pixels() -> None:
    receipt = Receipt(changed=True, regions=[(0, 0, 640, 400), (641, 1, 643, 3)])
    scaled = receipt.in_image(Screen(1280, 800), ImageSpace(640, 400))
    assert scaled.regions == [(0, 0, 320, 200), (320, 0, 322, 2)]
    assert receipt.in_image(Screen(1280, 800), ImageSpace(1280, 800)) is receipt

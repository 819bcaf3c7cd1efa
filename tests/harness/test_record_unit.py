"""Run-folder records and pixel comparisons, without a desktop."""

from __future__ import annotations

import io

from PIL import Image

from vdesk.actions import BaseAction
from vdesk.harness.checks import differing_fraction, region_check
from vdesk.harness.record import StepRecord, frame_hash
from vdesk.harness.tasks import RegionCheck
from vdesk.actions import ExecuteResult


def test_frame_hash_depends_on_pixels_not_on_the_file_encoding():
    image = Image.new("RGB", (40, 30), (10, 20, 30))
    image.putpixel((5, 5), (255, 0, 0))
    encoded = io.BytesIO()
    image.save(encoded, format="PNG", compress_level=9)
    again = Image.open(io.BytesIO(encoded.getvalue()))
    assert frame_hash(again) == frame_hash(image) == frame_hash(image.convert("RGBA"))
    image.putpixel((6, 5), (255, 0, 1))
    assert frame_hash(again) != frame_hash(image)


def test_a_step_record_round_trips_its_actions_and_results():
    actions = [BaseAction.of("click", point={"normalized": {"x": 0.5, "y": 0.25}}),
               BaseAction.of("drag", start={"referenceBox": {"x1": 1, "y1": 2, "x2": 3, "y2": 4}}, end=[9, 9]),
               BaseAction.of("hotkey", key="ctrl+c"), BaseAction.of("type", content="héllo\n")]
    record = StepRecord(step=1, frame="frames/step-0001.png", frame_hash="x", actions=actions,
                        results=[ExecuteResult(executed=1)], raw_reply="Action: click(...)")
    back = StepRecord.model_validate_json(record.model_dump_json(by_alias=True, exclude_none=True))
    assert back.actions == actions and back.results == record.results and back.raw_reply == record.raw_reply


def test_differing_fraction_counts_pixels_beyond_the_threshold():
    a = Image.new("RGB", (10, 10), (100, 100, 100))
    b = a.copy()
    for x in range(10):
        b.putpixel((x, 0), (100, 100, 130))   # 10 pixels differ by 30 in one channel
    b.putpixel((0, 5), (110, 100, 100))       # one differs by 10 only
    assert differing_fraction(a, b, threshold=24) == 0.10
    assert differing_fraction(a, b, threshold=5) == 0.11
    assert differing_fraction(a, a, threshold=0) == 0.0


def test_region_check_crops_the_screen_and_applies_the_tolerance(tmp_path):
    screen = Image.new("RGB", (100, 80), (0, 0, 0))
    screen.paste((255, 255, 255), (10, 10, 30, 20))
    screen.crop((10, 10, 30, 20)).save(tmp_path / "ref.png")
    check = RegionCheck(region=(10, 10, 30, 20), reference="ref.png", tolerance=0.0)
    assert region_check(screen, check, tmp_path).passed
    screen.putpixel((12, 12), (0, 0, 0))
    failed = region_check(screen, check, tmp_path)
    assert not failed.passed and "0.50% of pixels differ" in failed.detail
    assert region_check(screen, check.model_copy(update={"tolerance": 0.01}), tmp_path).passed


def test_region_check_explains_a_missing_or_mismatched_reference(tmp_path):
    screen = Image.new("RGB", (100, 80))
    missing = region_check(screen, RegionCheck(region=(0, 0, 5, 5), reference="nope.png"), tmp_path)
    assert not missing.passed and "cannot read reference image" in missing.detail
    Image.new("RGB", (6, 5)).save(tmp_path / "r.png")
    wrong = region_check(screen, RegionCheck(region=(0, 0, 5, 5), reference="r.png"), tmp_path)
    assert not wrong.passed and "region is 5x5 but the reference r.png is 6x5" in wrong.detail

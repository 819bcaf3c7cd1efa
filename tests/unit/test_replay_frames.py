"""When a replay's final frame counts as the original's: equal pixels, or a few pixels a level
or two apart (Chromium's tab strip corners under load); a real difference never does."""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw

from vdesk.harness.record import FINAL_FRAME, Outcome, frame_hash
from vdesk.harness.replay import FRAME_TOLERANCE, frame_difference


def episode(folder: Path, image: Image.Image | None) -> Outcome:
    folder.mkdir()
    if image is not None:
        image.save(folder / FINAL_FRAME)
    return Outcome(task_id="t", agent="scripted", status="finished", success=True, steps=1, elapsed_s=1.0,
                   final_hash=frame_hash(image) if image is not None else None)


def screen() -> Image.Image:
    image = Image.new("RGB", (320, 200), (211, 227, 253))
    ImageDraw.Draw(image).text((20, 20), "Shop home", fill=(60, 64, 67))
    return image


def test_equal_pixels_are_the_same_frame(tmp_path):
    a, b = episode(tmp_path / "a", screen()), episode(tmp_path / "b", screen())
    assert frame_difference(tmp_path / "a", tmp_path / "b", a, b) == 0


def test_corner_pixels_a_level_apart_are_the_same_frame(tmp_path):
    nudged = screen()
    for x, y in ((0, 46), (0, 47), (267, 7)):
        r, g, b_ = nudged.getpixel((x, y))
        nudged.putpixel((x, y), (r - FRAME_TOLERANCE, g - 1, b_))
    a, b = episode(tmp_path / "a", screen()), episode(tmp_path / "b", nudged)
    assert 0 < frame_difference(tmp_path / "a", tmp_path / "b", a, b) <= FRAME_TOLERANCE


def test_a_character_more_is_a_different_frame(tmp_path):
    typed = screen()
    ImageDraw.Draw(typed).text((20, 60), "x", fill=(60, 64, 67))
    a, b = episode(tmp_path / "a", screen()), episode(tmp_path / "b", typed)
    assert frame_difference(tmp_path / "a", tmp_path / "b", a, b) > FRAME_TOLERANCE


def test_a_faint_change_of_colour_everywhere_is_a_different_frame(tmp_path):
    tinted = Image.new("RGB", (320, 200), (211, 227, 253 - FRAME_TOLERANCE - 1))
    a, b = episode(tmp_path / "a", Image.new("RGB", (320, 200), (211, 227, 253))), episode(tmp_path / "b", tinted)
    assert frame_difference(tmp_path / "a", tmp_path / "b", a, b) > FRAME_TOLERANCE


def test_a_missing_frame_or_another_size_is_not_comparable(tmp_path):
    a = episode(tmp_path / "a", screen())
    assert frame_difference(tmp_path / "a", tmp_path / "b", a, episode(tmp_path / "b", None)) is None
    assert frame_difference(tmp_path / "a", tmp_path / "c", a, episode(tmp_path / "c", screen().resize((160, 100)))) is None
    assert frame_difference(tmp_path / "a", tmp_path / "b", None, a) is None


def test_another_minute_on_the_taskbar_clock_is_the_same_frame_only_where_there_is_one(tmp_path):
    from vdesk.images import TASKBAR_CLOCK

    later = screen()
    ImageDraw.Draw(later).text((later.width - TASKBAR_CLOCK[0] + 40, later.height - 20), "09:01", fill=(255, 255, 255))
    a, b = episode(tmp_path / "a", screen()), episode(tmp_path / "b", later)
    assert frame_difference(tmp_path / "a", tmp_path / "b", a, b, image="apps") == 0
    assert frame_difference(tmp_path / "a", tmp_path / "b", a, b, image="osworld-openbox") == 0
    assert frame_difference(tmp_path / "a", tmp_path / "b", a, b) > FRAME_TOLERANCE  # the lean image has no clock
    assert frame_difference(tmp_path / "a", tmp_path / "b", a, b, image="osworld") > FRAME_TOLERANCE  # its clock is on top
    typed = screen()
    ImageDraw.Draw(typed).text((20, 60), "x", fill=(60, 64, 67))
    c = episode(tmp_path / "c", typed)
    assert frame_difference(tmp_path / "a", tmp_path / "c", a, c, image="apps") > FRAME_TOLERANCE


def test_another_minute_on_the_top_bar_clock_of_the_gnome_desktop_is_the_same_frame(tmp_path):
    later = screen()
    ImageDraw.Draw(later).text((later.width // 2 - 20, 5), "09:01", fill=(255, 255, 255))
    a, b = episode(tmp_path / "a", screen()), episode(tmp_path / "b", later)
    assert frame_difference(tmp_path / "a", tmp_path / "b", a, b, image="osworld") == 0
    assert frame_difference(tmp_path / "a", tmp_path / "b", a, b, image="apps") > FRAME_TOLERANCE


def test_a_mismatch_says_what_each_side_saw():
    from vdesk.harness.record import CheckRecord
    from vdesk.harness.replay import ReplayComparison

    passed = Outcome(task_id="t", agent="scripted", status="finished", success=True, steps=3, elapsed_s=1.0)
    failed = passed.model_copy(update={"success": False, "checks": [
        CheckRecord(kind="document", passed=False, detail="~/prices.ods: D2 has no formula"),
        CheckRecord(kind="file", passed=True, detail="~/notes.txt exists")]})
    errored = passed.model_copy(update={"status": "error", "success": False, "error": "soffice.bin did not go idle within 60 s"})

    assert ReplayComparison("t", passed, passed, frame_difference=1).difference == ""
    assert ReplayComparison("t", passed, failed, frame_difference=90).difference == (
        "original: finished, passed; replay: finished, failed (~/prices.ods: D2 has no formula); "
        f"final frames 90 levels apart (at most {FRAME_TOLERANCE} match)")
    assert ReplayComparison("t", passed, errored, frame_difference=None).difference == (
        "original: finished, passed; replay: error, failed (soffice.bin did not go idle within 60 s); "
        "final frames not comparable")
    assert ReplayComparison("t", None, passed).difference.startswith("original: unfinished; replay: finished, passed")

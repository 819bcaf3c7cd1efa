"""A receipt's regions: exact boxes of changed pixels in screen coordinates, wherever on the screen."""

from __future__ import annotations

from PIL import Image, ImageDraw

from vdesk.frames import changed_regions


def changed(size: tuple[int, int], *boxes: tuple[int, int, int, int]) -> list[tuple[int, int, int, int]]:
    before = Image.new("RGB", size, (40, 40, 40))
    after = before.copy()
    for left, top, right, bottom in boxes:
        ImageDraw.Draw(after).rectangle((left, top, right - 1, bottom - 1), fill=(200, 10, 10))
    return changed_regions(before, after)


def test_separate_changes_are_separate_exact_regions_largest_first():
    assert changed((1280, 800), (845, 207, 1008, 288), (531, 44, 552, 50)) == [(845, 207, 1008, 288), (531, 44, 552, 50)]


def test_a_change_at_the_edge_of_a_screen_off_the_tile_grid_is_exact():
    assert changed((1366, 765), (1350, 750, 1366, 765)) == [(1350, 750, 1366, 765)]
    assert changed((1366, 765), (3, 5, 9, 7), (1360, 760, 1366, 765)) == [(1360, 760, 1366, 765), (3, 5, 9, 7)]


def test_equal_frames_have_no_regions():
    assert changed((640, 480)) == []

"""Receipts: each batch of actions says where it changed the screen, seen on the held framebuffer."""

from __future__ import annotations

import time

from tests.desktop.helpers import xterm
from vdesk.coords import ImageSpace
from vdesk.desktop import Desktop
from vdesk.operator import Operator

EMPTY = {"raw": {"x": 1200, "y": 760}}  # the bare root window: nothing of the tests' reaches there


def click(point: dict, kind: str = "click") -> list[dict]:
    return [{"type": kind, "inputs": {"point": point}}]


def contains(region: tuple[int, int, int, int], x: int, y: int) -> bool:
    left, top, right, bottom = region
    return left <= x < right and top <= y < bottom


def test_a_click_that_changes_the_screen_names_the_region_around_it(shared_desktop: Desktop):
    title = f"receipt-{time.monotonic_ns()}"
    with xterm(shared_desktop, title, "-geometry", "60x8+200+200", "-e", "sh", "-c",
               "echo Select this whole line please; sleep 120") as window:
        [line] = shared_desktop.wait_for_text("Select this whole line", timeout=30)
        shared_desktop.execute(click({"raw": {"x": window.x + window.width // 2, "y": window.y + window.height - 20}}),
                               settle=True)  # focus it first: the title bar's redraw is not this test's change
        time.sleep(0.5)  # past xterm's multi-click time: the triple click must not count that click
        x, y = (round(v) for v in line.centre)
        result = shared_desktop.execute(click({"raw": {"x": x, "y": y}}, "triple_click"))  # selects the line
        assert result.status == "success", result
        receipt = result.receipt
        assert receipt is not None and receipt.changed and receipt.settled, receipt
        # The selection's highlight: the line under the pointer, inside the terminal.
        biggest = receipt.regions[0]
        assert contains(biggest, x, y), (receipt, line)
        assert window.x <= biggest[0] and biggest[2] <= window.x + window.width, receipt
        assert "the screen changed in [" in receipt.describe()


def test_a_click_on_an_empty_area_says_nothing_changed(shared_desktop: Desktop):
    shared_desktop.execute(click(EMPTY), settle=True)  # whatever focus change it makes happens now
    result = shared_desktop.execute(click(EMPTY))
    assert result.status == "success" and result.receipt is not None, result
    assert not result.receipt.changed and result.receipt.regions == [], result.receipt
    assert result.receipt.describe() == "nothing changed on screen"


def test_receipts_can_be_turned_off_and_a_batch_that_sends_nothing_has_none(shared_desktop: Desktop):
    assert shared_desktop.execute(click(EMPTY), receipt=False).receipt is None
    assert shared_desktop.execute([{"type": "finished", "inputs": {"content": "done"}}]).receipt is None


def test_the_operator_gives_regions_in_the_agents_image_pixels(shared_desktop: Desktop):
    title = f"receipt-image-{time.monotonic_ns()}"
    with xterm(shared_desktop, title, "-geometry", "60x8+640+400", "-e", "sh", "-c",
               "echo Half size agent line; sleep 120") as window:
        [line] = shared_desktop.wait_for_text("Half size agent line", timeout=30)
        shared_desktop.execute(click({"raw": {"x": window.x + 20, "y": window.y + window.height - 20}}), settle=True)
        time.sleep(0.5)
        operator = Operator(shared_desktop, ImageSpace(640, 400))
        x, y = (round(v / 2) for v in line.centre)
        result = operator.execute({"actions": click({"raw": {"x": x, "y": y}}, "triple_click")})
        assert result.receipt is not None and result.receipt.changed, result
        assert contains(result.receipt.regions[0], x, y) and result.receipt.regions[0][2] <= 640, result.receipt


def test_typing_where_no_tree_is_readable_changes_the_screen_and_says_nothing_of_the_focus(shared_desktop: Desktop):
    title = f"receipt-typed-{time.monotonic_ns()}"
    with xterm(shared_desktop, title, "-geometry", "60x8+100+100", "-e", "cat") as window:
        shared_desktop.windows.focus(window)
        shared_desktop.settle(0.3)
        result = shared_desktop.execute([{"type": "type", "inputs": {"content": "typed into cat"}}])
        receipt = result.receipt
        assert receipt is not None and receipt.changed and receipt.typed is None and receipt.focused is None, result
        assert all(window.x <= r[0] and r[2] <= window.x + window.width for r in receipt.regions), (receipt, window)

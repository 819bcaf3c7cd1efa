"""Receipts: each batch of actions says where it changed the screen, seen on the held framebuffer.

The default receipt does not wait: it says what was drawn by the time the X server had the
batch, and ``desktop.input.receipt()`` reads it again once the program answered. So these tests wait
for the change they expect (a program on a loaded machine answers when it does) and then
assert what the receipt says of it; none rests on a redraw arriving within some time.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from tests.desktop.helpers import xterm
from vdesk import input as input_module
from vdesk.actions import Receipt
from vdesk.coords import ImageSpace
from vdesk.desktop import Desktop
from vdesk.errors import InvalidArgument
from vdesk.integrations.operator import Operator

EMPTY = {"raw": {"x": 1200, "y": 760}}  # the bare root window: nothing of the tests' reaches there
# Prints a new line (and scrolls) about 50 times a second: a screen that never rests, and never
# shows the same pixels twice.
TICKER = "while :; do date +%N; sleep 0.02; done"


def click(point: dict, kind: str = "click") -> list[dict]:
    return [{"type": kind, "inputs": {"point": point}}]


def contains(region: tuple[int, int, int, int], x: float, y: float) -> bool:
    left, top, right, bottom = region
    return left <= x < right and top <= y < bottom


def read_until(read: Callable[[], Receipt], wanted: Callable[[Receipt], bool], timeout: float = 20.0) -> Receipt:
    """The receipt ``read`` gives once ``wanted`` holds for it; fails after ``timeout`` with the last."""
    deadline = time.monotonic() + timeout
    while not wanted(receipt := read()):
        assert time.monotonic() < deadline, f"the receipt never showed the change: {receipt}"
        time.sleep(0.05)
    return receipt


def wait_for_file(desktop: Desktop, path: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while desktop.programs.run(["test", "-e", path], wait=True).returncode != 0:
        assert time.monotonic() < deadline, f"{path} did not appear within {timeout:g} s"
        time.sleep(0.05)


def test_a_click_that_changes_the_screen_names_the_region_around_it(shared_desktop: Desktop):
    title = f"receipt-{time.monotonic_ns()}"
    with xterm(shared_desktop, title, "-geometry", "60x8+200+200", "-e", "sh", "-c",
               "echo Select this whole line please; sleep 120") as window:
        [line] = shared_desktop.text.wait_for("Select this whole line", timeout=30)
        shared_desktop.input.execute(click({"raw": {"x": window.x + window.width // 2, "y": window.y + window.height - 20}}),
                               settle=True)  # focus it first: the title bar's redraw is not this test's change
        time.sleep(0.5)  # past xterm's multi-click time: the triple click must not count that click
        x, y = (round(v) for v in line.centre)
        result = shared_desktop.input.execute(click({"raw": {"x": x, "y": y}}, "triple_click"))  # selects the line
        assert result.status == "success" and result.receipt is not None, result
        assert result.receipt.settled is None and result.settled is None, result  # it did not wait
        # The selection's highlight, once xterm drew it: the line under the pointer, inside the terminal.
        receipt = read_until(shared_desktop.input.receipt, lambda r: r.changed and contains(r.regions[0], x, y))
        biggest = receipt.regions[0]
        assert window.x <= biggest[0] and biggest[2] <= window.x + window.width, receipt
        assert receipt.outcome == "changed" and receipt.describe().startswith("the screen changed in ["), receipt


def test_a_click_on_an_empty_area_says_nothing_changed_once_settled_and_not_yet_without(shared_desktop: Desktop):
    shared_desktop.input.execute(click(EMPTY), settle=True)  # whatever focus change it makes happens now
    settled = shared_desktop.input.execute(click(EMPTY), settle=True)
    assert settled.status == "success" and settled.settled is True and settled.receipt is not None, settled
    assert settled.receipt.outcome == "unchanged" and settled.receipt.regions == [], settled.receipt
    assert settled.receipt.describe() == "nothing changed on screen"
    # Without settle the receipt never claims "unchanged": it did not wait to know.
    quick = shared_desktop.input.execute(click(EMPTY))
    assert quick.status == "success" and quick.receipt is not None and quick.settled is None, quick
    assert quick.receipt.outcome == "unknown" and quick.receipt.settled is None and not quick.receipt.changed
    assert quick.receipt.describe() == "nothing changed on screen yet (not waited for)"


def test_the_default_receipt_returns_before_a_slow_program_answers_and_a_later_read_sees_the_answer(
        shared_desktop: Desktop):
    """The program reads the click (xterm reports it, mouse tracking on) and draws its answer
    only once the test lets it: the receipt cannot have waited for it, and must not claim more."""
    tag = f"slow-{time.monotonic_ns()}"
    ready, clicked, go = f"/tmp/{tag}-ready", f"/tmp/{tag}-clicked", f"/tmp/{tag}-go"
    script = (f"stty raw -echo; printf '\\033[?1000h'; touch {ready}; head -c 6 >/dev/null; touch {clicked}; "
              f"while [ ! -e {go} ]; do sleep 0.05; done; printf '\\033[?1000l'; stty sane; "
              "echo; echo The slow program answered; sleep 120")
    with xterm(shared_desktop, tag, "-geometry", "60x8+300+300", "-e", "sh", "-c", script) as window:
        shared_desktop.windows.focus(window)
        wait_for_file(shared_desktop, ready)
        shared_desktop.screen.settle(0.3)  # the focus and the terminal's first drawing are not this test's change
        result = shared_desktop.input.execute(click({"raw": {"x": window.x + 40, "y": window.y + 40}}))
        assert result.status == "success" and result.receipt is not None, result
        assert result.receipt.outcome == "unknown" and result.receipt.settled is None, result.receipt
        wait_for_file(shared_desktop, clicked)  # the program has the click and waits
        assert shared_desktop.input.receipt().outcome == "unknown"  # and has drawn nothing
        shared_desktop.programs.run(["touch", go], wait=True).check()
        [answer] = shared_desktop.text.wait_for("The slow program answered", timeout=30)
        later = shared_desktop.input.receipt()
        assert later.changed and any(contains(r, *answer.centre) for r in later.regions), (later, answer)
        assert all(window.x <= r[0] and r[2] <= window.x + window.width for r in later.regions), (later, window)


def test_on_a_busy_screen_the_default_does_not_wait_and_settle_stops_at_its_bound(shared_desktop: Desktop,
                                                                              monkeypatch: pytest.MonkeyPatch):
    title = f"receipt-busy-{time.monotonic_ns()}"
    ticking = f"/tmp/{title}"
    with xterm(shared_desktop, title, "-geometry", "80x30+0+0", "-e", "sh", "-c", f"touch {ticking}; {TICKER}") as window:
        wait_for_file(shared_desktop, ticking)
        shared_desktop.screen.wait_for_change(region=(0, 0, 400, 300), timeout=30)  # it is ticking (not only shown)
        quick = shared_desktop.input.execute(click(EMPTY))
        assert quick.status == "success" and quick.settled is None, quick
        assert quick.receipt is not None and quick.receipt.settled is None, quick.receipt
        # A loaded machine can hold any program still for 30 ms; the ticker never rests for half
        # a second, so with that quiet period the settle can only end at its bound.
        monkeypatch.setattr(input_module, "SETTLE_QUIET", 0.5)
        result = shared_desktop.input.execute(click(EMPTY), settle=True)
        assert result.status == "success" and result.settled is False, result
        receipt = result.receipt
        assert receipt is not None and receipt.settled is False and receipt.outcome == "changed", receipt
        assert receipt.describe().endswith("(still changing)"), receipt.describe()
        assert all(r[2] <= window.x + window.width and r[3] <= window.y + window.height
                   for r in receipt.regions), (receipt, window)  # the ticker's, nothing of the click
        off = shared_desktop.input.execute(click(EMPTY), settle=True, receipt=False)
        assert off.status == "success" and off.settled is False and off.receipt is None, off


def test_receipts_can_be_turned_off_and_a_batch_that_sends_nothing_has_none(shared_desktop: Desktop):
    assert shared_desktop.input.execute(click(EMPTY), receipt=False).receipt is None
    with pytest.raises(InvalidArgument, match="receipt=False"):
        shared_desktop.input.receipt()  # the last batch took none: there is nothing to read later
    assert shared_desktop.input.execute([{"type": "finished", "inputs": {"content": "done"}}]).receipt is None
    with pytest.raises(InvalidArgument, match="wait must be"):
        shared_desktop.input.receipt(wait=-1)


def test_the_operator_gives_regions_in_the_agents_image_pixels(shared_desktop: Desktop):
    title = f"receipt-image-{time.monotonic_ns()}"
    with xterm(shared_desktop, title, "-geometry", "60x8+640+400", "-e", "sh", "-c",
               "echo Half size agent line; sleep 120") as window:
        [line] = shared_desktop.text.wait_for("Half size agent line", timeout=30)
        shared_desktop.input.execute(click({"raw": {"x": window.x + 20, "y": window.y + window.height - 20}}), settle=True)
        time.sleep(0.5)  # past xterm's multi-click time
        operator = Operator(shared_desktop, ImageSpace(640, 400))
        x, y = (round(v / 2) for v in line.centre)
        result = operator.execute({"actions": click({"raw": {"x": x, "y": y}}, "triple_click")})
        assert result.status == "success" and result.receipt is not None, result
        receipt = read_until(lambda: operator.receipt(wait=1.0), lambda r: r.changed and contains(r.regions[0], x, y))
        assert receipt.regions[0][2] <= 640, receipt


def test_typing_where_no_tree_is_readable_changes_the_screen_and_says_nothing_of_the_focus(shared_desktop: Desktop):
    title = f"receipt-typed-{time.monotonic_ns()}"
    with xterm(shared_desktop, title, "-geometry", "60x8+100+100", "-e", "cat") as window:
        shared_desktop.windows.focus(window)
        shared_desktop.screen.settle(0.3)
        result = shared_desktop.input.execute([{"type": "type", "inputs": {"content": "typed into cat"}}])
        receipt = result.receipt
        assert receipt is not None and receipt.typed is None and receipt.focused is None, result
        [typed] = shared_desktop.text.wait_for("typed into cat", timeout=30)
        later = shared_desktop.input.receipt()
        assert later.changed and any(contains(r, *typed.centre) for r in later.regions), (later, typed)
        assert all(window.x <= r[0] and r[2] <= window.x + window.width for r in later.regions), (later, window)

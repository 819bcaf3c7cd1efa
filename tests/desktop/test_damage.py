"""The X server's word on what was drawn (vdesk.damage), which lets a default receipt reuse its
last frame: every kind of drawing is reported (a program's, the server's own painting of the root,
a window shown and the root exposed when it goes), none is lost when it lands right after a
question, and a still screen says so."""

from __future__ import annotations

import time
import uuid

import pytest

from tests.desktop.helpers import xterm
from vdesk.desktop import Desktop

pytestmark = pytest.mark.desktop

EMPTY = {"raw": {"x": 1200, "y": 760}}  # the bare root window
CLICK_EMPTY = [{"type": "click", "inputs": {"point": EMPTY}}]


def quiet(desktop: Desktop, timeout: float = 30.0) -> None:
    """Return once a question says nothing was drawn since the one before (other programs calm)."""
    deadline = time.monotonic() + timeout
    desktop.windows.drawn()
    while desktop.windows.drawn():
        assert time.monotonic() < deadline, "the screen kept being drawn on"
        time.sleep(0.05)


def root_colour(desktop: Desktop, colour: str) -> None:
    desktop.programs.run(["xsetroot", "-solid", colour], wait=True)  # its requests are processed when it ends


@pytest.fixture
def root(shared_desktop: Desktop):
    """The shared desktop, its root's colour put back afterwards."""
    red, green, blue = shared_desktop.screen.shot(fresh=True).getpixel((EMPTY["raw"]["x"], EMPTY["raw"]["y"]))[:3]
    yield shared_desktop
    root_colour(shared_desktop, f"#{red:02x}{green:02x}{blue:02x}")


def test_every_kind_of_drawing_is_reported_and_a_still_screen_is_not(root: Desktop):
    shared_desktop = root
    quiet(shared_desktop)
    assert shared_desktop.windows.drawn() is False  # still, and asking draws nothing
    root_colour(shared_desktop, "#203040")  # the server paints the root itself
    assert shared_desktop.windows.drawn() is True
    assert shared_desktop.windows.drawn() is False
    title = f"damage-{uuid.uuid4().hex[:8]}"
    with xterm(shared_desktop, title, "-geometry", "40x6+100+100"):
        assert shared_desktop.windows.drawn() is True  # a window shown and drawn
        quiet(shared_desktop)
    assert shared_desktop.windows.drawn() is True  # the root exposed where the window was


def test_drawing_that_lands_right_after_a_question_is_never_lost(shared_desktop: Desktop):
    """A screen drawn on all the time: each question clears what was drawn, and drawing made after
    the clear (the region painted again, no new notice until the next clear) still shows in the
    next answer, every time. (Without the carry, a line printed between a clear and its sync's
    reply hid the lines after it: about one question in twenty here.) The screen itself is the
    witness: a frame taken right after one question and one taken right before the next differ
    only if something was drawn between the two questions, and then the answer must say so (a
    loaded machine may leave the terminal silent for a while: those answers may say nothing)."""
    title = f"damage-busy-{uuid.uuid4().hex[:8]}"
    with xterm(shared_desktop, title, "-geometry", "40x6+100+100", "-e", "sh", "-c",
               "while :; do date +%N; sleep 0.005; done"):
        deadline = time.monotonic() + 30
        while not shared_desktop.windows.drawn():  # until the loop prints
            assert time.monotonic() < deadline, "the terminal never printed"
            time.sleep(0.03)
        after_last = shared_desktop.screen.shot(fresh=True).tobytes()
        witnessed, lost = 0, []
        for question in range(40):
            time.sleep(0.03)  # several lines printed between two questions, on a quiet machine
            before = shared_desktop.screen.shot(fresh=True).tobytes()
            answer = shared_desktop.windows.drawn()
            if before != after_last:  # drawn between the two questions, as the screen shows
                witnessed += 1
                if not answer:
                    lost.append(question)
            after_last = shared_desktop.screen.shot(fresh=True).tobytes()
        assert witnessed >= 10, f"the terminal printed between only {witnessed} of 40 questions"
        assert not lost, f"drawing the screen shows went unreported at questions {lost}"


def test_a_receipt_after_drawing_no_batch_made_starts_from_the_screen_as_it_is(root: Desktop):
    """The last frame is reused only while nothing was drawn: a root repainted between two
    batches is in the second batch's frame from before, so neither its receipt nor a later read of
    it blames the click for the new colour."""
    shared_desktop = root
    shared_desktop.input.execute(CLICK_EMPTY)  # the frame a still screen would reuse
    quiet(shared_desktop)
    shared_desktop.input.execute(CLICK_EMPTY)
    root_colour(shared_desktop, "#3060a0")
    result = shared_desktop.input.execute(CLICK_EMPTY)
    assert result.status == "success" and result.receipt is not None, result
    assert result.receipt.changed is False, result.receipt
    assert shared_desktop.input.receipt().changed is False  # its frame from before has the new colour
    assert shared_desktop.screen.shot().getpixel((1200, 760))[:3] == (0x30, 0x60, 0xA0)

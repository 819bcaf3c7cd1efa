"""Text on screen, read from the live framebuffer: find_text and wait_for_text in an xterm."""

from __future__ import annotations

import re
import time

import pytest

from tests.desktop.helpers import xterm
from vdesk.desktop import Desktop
from vdesk.errors import DesktopTimeout, InvalidArgument
from vdesk.harness.checks import run_checks
from vdesk.harness.hosts import LocalHost
from vdesk.harness.tasks import parse_task


def inside(box: tuple[int, int, int, int], window) -> bool:  # type: ignore[no-untyped-def]
    left, top, right, bottom = box
    return window.x <= left and window.y <= top and right <= window.x + window.width and bottom <= window.y + window.height


def test_find_text_finds_what_was_typed_into_a_terminal_where_it_shows(shared_desktop: Desktop):
    title = f"typed-{time.monotonic_ns()}"
    with xterm(shared_desktop, title, "-geometry", "80x10+200+150", "-e", "cat") as window:
        shared_desktop.windows.focus(window)
        assert shared_desktop.text.find("Invoice 2026-0457") == []
        result = shared_desktop.input.execute([{"type": "type", "inputs": {"content": "Invoice 2026-0457 was paid"}}], settle=True)
        assert result.status == "success", result
        [box] = shared_desktop.text.wait_for("Invoice 2026-0457", timeout=20)
        assert box.text == "Invoice 2026-0457" and inside(box.bounds, window), (box, window)
        [regex_box] = shared_desktop.text.find(re.compile(r"\d{4}-\d{4} was paid"))
        assert regex_box.bounds[0] > box.bounds[0] and abs(regex_box.bounds[1] - box.bounds[1]) <= 2
        # A region elsewhere on the screen does not see it.
        assert shared_desktop.text.find("Invoice", region=(0, 600, 1280, 800)) == []


def test_wait_for_text_sees_text_that_appears_later(shared_desktop: Desktop):
    title = f"later-{time.monotonic_ns()}"
    script = "sleep 3; echo Build finished OK; sleep 120"
    with xterm(shared_desktop, title, "-geometry", "60x6+300+300", "-e", "sh", "-c", script) as window:
        assert shared_desktop.text.find("Build finished") == []
        told: list[str] = []
        [box] = shared_desktop.text.wait_for("Build finished OK", timeout=30, progress=told.append)
        assert inside(box.bounds, window), (box, window)


def test_wait_for_text_times_out_naming_the_pattern(shared_desktop: Desktop):
    told: list[str] = []
    started = time.monotonic()
    with pytest.raises(DesktopTimeout, match=r"no text matching 'never shown anywhere' appeared within 3 s") as caught:
        shared_desktop.text.wait_for("never shown anywhere", timeout=3, progress=told.append)
    assert time.monotonic() - started < 30
    assert "frames read" in str(caught.value)
    assert all("never shown anywhere" in line for line in told)


def test_a_bad_pattern_fails_before_reading(shared_desktop: Desktop):
    with pytest.raises(InvalidArgument):
        shared_desktop.text.find("   ")
    with pytest.raises(InvalidArgument):
        shared_desktop.text.wait_for(b"bytes", timeout=1)  # type: ignore[arg-type]


def test_the_harness_text_check_reads_the_final_frame_of_a_real_desktop(shared_desktop: Desktop):
    title = f"check-{time.monotonic_ns()}"
    with xterm(shared_desktop, title, "-geometry", "60x6+100+500", "-e", "sh", "-c", "echo Export complete; sleep 120"):
        shared_desktop.text.wait_for("Export complete", timeout=30)
        task = parse_task({"id": "t", "instruction": "export", "checks": [
            {"text": "Export complete", "within": [0, 400, 1280, 800]},
            {"text": "Export complete", "within": [0, 0, 1280, 400]},
            {"text": "Export failed", "present": False}]})
        results = run_checks(LocalHost(shared_desktop), task)
        assert [result.passed for result in results] == [True, False, True], results

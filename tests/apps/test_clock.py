"""A desktop's clock: ``Desktop.up(clock=...)`` sets the time the desktop's programs see,
two desktops with one clock draw the same taskbar, and `vdesk ls --json` shows each clock."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from vdesk.clock import parse_clock
from vdesk.desktop import Desktop
from vdesk.errors import InvalidArgument

pytestmark = pytest.mark.desktop
VDESK = str(Path(sys.executable).parent / "vdesk")
START = "2026-01-01 00:00:00"
START_EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc).timestamp()
PAGE = "data:text/html,<script>document.title = 'NOW' + Date.now() + 'END'</script>"


def test_programs_started_in_the_desktop_see_its_clock_and_it_runs_on():
    with Desktop.up(image="apps", clock=START, timeout=120) as desktop:
        first = float(desktop.programs.run(["date", "+%s.%N"], wait=True).check().stdout)
        assert START_EPOCH <= first < START_EPOCH + 120
        desktop.programs.run(["chromium", PAGE])
        now = re.search(r"NOW(\d+)END", desktop.windows.wait_for("NOW", timeout=90).title)
        assert now
        assert first <= int(now.group(1)) / 1000 < START_EPOCH + 180  # the renderer too
        shell = desktop.programs.run(["sh", "-c", "sleep 1.5; date +%s.%N"], wait=True).check().stdout
        assert first + 1.4 <= float(shell) < first + 60  # it runs, and children inherit it
        # The taskbar was started by the desktop's session, not by run(): it has the clock too.
        environ = desktop.programs.run(["sh", "-c", 'tr "\\0" "\\n" < /proc/$(pgrep -x tint2)/environ'], wait=True).stdout
        assert f"FAKETIME={desktop.clock.faketime}" in environ.split()
        assert desktop.clock.start == START


def _taskbar(desktop: Desktop):
    width, height = desktop.screen.size
    return desktop.screen.shot().crop((width - 200, height - 30, width, height))


def test_two_desktops_with_one_clock_show_the_same_taskbar_and_another_clock_shows_another():
    with Desktop.up(image="apps", clock=START, timeout=120) as one, \
            Desktop.up(image="apps", clock=START, timeout=120) as two, \
            Desktop.up(image="apps", clock="2031-07-15 09:30:00", timeout=120) as other:
        assert _taskbar(one).tobytes() == _taskbar(two).tobytes()  # "00:00 Thu 01 Jan"
        assert _taskbar(one).tobytes() != _taskbar(other).tobytes()
        listed = json.loads(subprocess.run([VDESK, "ls", "--json"], capture_output=True, text=True, check=True,
                                           timeout=120).stdout)
    clocks = {d["name"]: d["clock"] for d in listed["desktops"]}
    assert [clocks[d.name] for d in (one, two, other)] == [START, START, "2031-07-15 09:30:00"]  # as started


def test_a_clock_needs_an_image_with_libfaketime_and_a_readable_time():
    with pytest.raises(InvalidArgument, match="no libfaketime"):
        Desktop.up(image="lean", clock=START)
    with pytest.raises(InvalidArgument, match="invalid clock"):
        parse_clock("next tuesday")
    with pytest.raises(InvalidArgument, match="outside the years"):
        parse_clock("1970-01-01 00:00:00")
    assert parse_clock("2026-01-01T01:00:00+01:00") == datetime(2026, 1, 1, tzinfo=timezone.utc)

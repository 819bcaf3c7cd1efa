"""``vm_screen_size`` reads the screen from the X server, not from the size the desktop was asked
for: a task that changes the resolution (``xrandr -s``) is judged on the screen it made."""

from __future__ import annotations

import time

import pytest

from vdesk.desktop import Desktop
from vdesk.osworld import inside

pytestmark = pytest.mark.desktop


def test_the_screen_size_getter_sees_a_resolution_changed_inside_the_desktop() -> None:
    with Desktop.up(size=(1280, 800)) as desktop:
        assert inside.screen_size(desktop) == {"width": 1280, "height": 800}
        assert desktop.programs.run(["xrandr", "-s", "1024x768"], timeout=30).returncode == 0
        deadline = time.monotonic() + 30  # the server applies the new mode just after xrandr returns
        while (seen := inside.screen_size(desktop)) != {"width": 1024, "height": 768} and time.monotonic() < deadline:
            time.sleep(0.05)
        assert seen == {"width": 1024, "height": 768}

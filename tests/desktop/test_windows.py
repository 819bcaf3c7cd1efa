"""Window focus on a real desktop: the window manager's own view (``_NET_ACTIVE_WINDOW``)."""

import time

import pytest

from vdesk import Desktop
from vdesk.errors import DesktopTimeout

from tests.desktop.helpers import xterm


def test_focus_wins_against_a_window_that_keeps_taking_the_focus_for_a_while(shared_desktop: Desktop):
    # Another window takes the focus back within milliseconds for a second (as a window mapping
    # just after the request does, once, on a loaded machine): focus() asks again until it holds.
    marker = f"/tmp/focus-thief-{time.monotonic_ns()}"
    with xterm(shared_desktop, "focus-wanted") as wanted, xterm(shared_desktop, "focus-thief") as thief:
        shared_desktop.windows.focus(thief)
        taking = f"while :; do xdotool windowactivate {thief.id}; touch {marker}; done"
        shared_desktop.programs.run(["timeout", "1", "sh", "-c", taking])
        while shared_desktop.programs.run(["test", "-e", marker], wait=True).returncode != 0:
            time.sleep(0.01)
        shared_desktop.windows.focus(wanted, timeout=5)  # returns once the focus is there, else raises


def test_a_window_manager_that_never_manages_is_named_in_the_timeout(shared_desktop: Desktop):
    # A stopped openbox frames nothing: the wait ends in an error that says what it found (the
    # window manager still running, the windows it managed before), not only that it waited.
    programs = shared_desktop.programs
    assert programs.run(["pkill", "-STOP", "-x", "openbox"], wait=True).returncode == 0
    try:
        with pytest.raises(DesktopTimeout, match=r"did not manage a window within 2 s \(\d+ probes; "
                                                 r"openbox running; the last probe had a window; managed: ") as failed:
            programs.wait_for_window_manager(timeout=2)
    finally:
        programs.run(["pkill", "-CONT", "-x", "openbox"], wait=True).check()
        programs.run(["pkill", "-f", "vdesk-window-manager-probe"], wait=True)
    assert "vdesk-window-manager-probe" not in str(failed.value)  # the unmanaged probes are not listed
    with xterm(shared_desktop, "managed-again"):  # and the desktop goes on
        pass

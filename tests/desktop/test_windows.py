"""Window focus on a real desktop: the window manager's own view (``_NET_ACTIVE_WINDOW``)."""

import time

from vdesk import Desktop

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

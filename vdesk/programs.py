"""The programs of a desktop: start one as the desktop's user, and know when the desktop can.

``desktop.programs.run(argv)`` starts a program (or, with ``wait=True``, runs a command to its
end) through the desktop's command channel (:mod:`vdesk.channel`): an argument list, never a
shell string. A window mapped before the window manager manages windows stays unmanaged for
good, so the first program waits for it (:meth:`DesktopPrograms.wait_for_window_manager`).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence

from vdesk.channel import OUTPUT_LIMIT, Channel, Completed
from vdesk.clock import ClockSettings
from vdesk.errors import DesktopTimeout, InvalidArgument, VdeskError
from vdesk.guard import Guard
from vdesk.windows import Windows

WM_PROBE_TITLE = "vdesk-window-manager-probe"
WM_READY_TIMEOUT = 120.0  # openbox can take many seconds to manage its first window on a busy machine
WM_PROBE_PATIENCE = 30.0  # the longest one probe window is given (a loaded machine starts and frames it slowly)
PROBE_COMMAND_TIMEOUT = 10.0  # starting or ending a probe window
SESSION_POLL = 0.02  # seconds between two looks for the session's ready file


class DesktopPrograms:
    """Programs of one desktop, started over its command channel."""

    def __init__(self, channel: Channel, windows: Windows, guard: Guard, clock: ClockSettings | None) -> None:
        self._channel = channel
        self._windows = windows
        self._guard = guard
        self._clock = clock
        self.window_manager_ready = False

    def run(self, argv: Sequence[str], *, wait: bool = False, timeout: float = 60.0,
            stdin: str | None = None, output_limit: int = OUTPUT_LIMIT, clock: bool = True) -> Completed:
        """Start ``argv`` in the desktop as the desktop user.

        By default it returns at once and the program keeps running, even after this process
        ends; with ``wait=True`` it waits (up to ``timeout``) and returns the exit code and the
        first ``output_limit`` bytes (default 1 MiB) of each output — ``result.cut`` and
        ``result.stdout_bytes`` say whether more came and how much. A waited command ends when
        this process does (or when the call is interrupted). With a desktop clock (see
        :mod:`vdesk.clock`) the program sees it; ``clock=False`` runs it on the real time.
        """
        argv = list(argv)
        if not argv or not all(isinstance(a, str) and a for a in argv):
            raise InvalidArgument("argv must be a non-empty list of non-empty strings")
        if not wait and not self.window_manager_ready:
            self.wait_for_window_manager()  # else a window the program maps may stay unmanaged
        command = argv
        if clock and self._clock is not None:  # the program and all it starts see the desktop's clock
            command = ["env", "--", *(f"{k}={v}" for k, v in self._clock.environment.items()), *argv]
        result = self._guard(lambda: self._channel.run(command, stdin=stdin, timeout=timeout, detach=not wait,
                                                       limit=output_limit))
        if wait and result.timed_out:
            cut = f"; {result.cut_note}" if result.cut else ""
            raise DesktopTimeout(f"desktop {self._guard.name}: {argv[0]} did not finish within {timeout:g} s "
                                 f"(it was killed){cut}")
        if not wait and result.returncode != 0:
            result.check()
        return result

    def wait_for_window_manager(self, timeout: float = WM_READY_TIMEOUT) -> None:
        """Return once the window manager manages new windows; :meth:`run` does this before the
        first program it starts.

        Openbox manages windows a second or so after the desktop answers, and a window mapped
        before that stays unmanaged for good (no frame, no focus, not listed). So a probe window
        is shown until one is managed, an unmanaged one replaced by a new one given longer each
        time (a busy machine makes the window manager slow), and the managed one closed again.
        """
        deadline = time.monotonic() + timeout
        patience = 0.5
        for attempt in itertools.count(1):
            title = f"{WM_PROBE_TITLE}-{attempt}"
            self._command(["xmessage", "-geometry", "+0+0", "-title", title, "-name", title, "."], detach=True).check()
            try:
                probe = self._windows.wait_for(title, timeout=min(patience, max(0.1, deadline - time.monotonic())))
            except DesktopTimeout:
                if time.monotonic() >= deadline:
                    raise DesktopTimeout(f"desktop {self._guard.name}: the window manager did not manage a window "
                                         f"within {timeout:g} s ({attempt} probes; {self._what_was_there(title)})") from None
                patience = min(2 * patience, WM_PROBE_PATIENCE)
                continue
            finally:
                self._command(["pkill", "-f", title])
            # The next program may get the probe's window id: let the window manager finish with it.
            self._windows.wait_gone(probe, timeout=max(1.0, deadline - time.monotonic()))
            self.window_manager_ready = True
            return

    def _what_was_there(self, probe: str) -> str:
        """What a failed wait for the window manager saw: whether it runs, whether the last probe
        had a window on the X display at all, and what the window manager manages."""
        try:
            running = self._command(["pgrep", "-x", "openbox"]).returncode == 0
            shown = self._command(["xdotool", "search", "--name", probe]).returncode == 0
            managed = ", ".join(f"{w.title!r}{'' if w.viewable else ' (not viewable)'}" for w in self._windows.list())
        except VdeskError as error:  # the timeout is the news; this only explains it
            return f"no look inside: {error}"
        return (f"openbox {'running' if running else 'not running'}; the last probe "
                f"{'had a window' if shown else 'had no window'}; managed: {managed or 'no windows'}")

    def wait_for_session(self, ready_file: str, timeout: float) -> None:
        """Wait until the image's session (wallpaper, taskbar) says it is up, so that the
        first frames an agent sees are the ones every later run sees too."""
        deadline = time.monotonic() + timeout
        while self._command(["test", "-e", ready_file]).returncode != 0:
            if time.monotonic() > deadline:
                raise DesktopTimeout(f"desktop {self._guard.name}: its session did not start within {timeout:g} s")
            time.sleep(SESSION_POLL)

    def _command(self, argv: list[str], *, detach: bool = False) -> Completed:
        return self._guard(lambda: self._channel.run(argv, detach=detach, timeout=PROBE_COMMAND_TIMEOUT))

"""The desktop's X selections: read and set the clipboard, and paste text into a program.

``desktop.clipboard.get()`` / ``.set(text)`` act on the CLIPBOARD selection (what Ctrl+C /
Ctrl+V use); ``selection="primary"`` on PRIMARY (what a middle click pastes). ``xclip`` reads
and ``xsel`` sets inside the desktop; the owner ``xsel`` leaves behind outlives the controller,
so what was set stays on the desktop's clipboard after this process ends. ``set`` returns once
that owner holds the selection (asked over the X connection), so a paste right after pastes it.

Bounds: :meth:`Clipboard.get` reads at most ``limit`` bytes (default :data:`CLIPBOARD_LIMIT`)
and raises :class:`~vdesk.errors.TooLarge` naming the size past it — a program in the desktop
may own a selection of any size — or :class:`~vdesk.errors.DesktopTimeout` when the selection
does not arrive within ``timeout`` (a selection of hundreds of MB does not). :meth:`Clipboard.set` takes at most :data:`MAX_SET_CHARS`.
"""

from __future__ import annotations

import time
from typing import Literal

from vdesk.channel import MAX_OUTPUT_LIMIT, Channel
from vdesk.errors import CommandFailed, DesktopTimeout, InvalidArgument, TooLarge
from vdesk.guard import Guard, guarded
from vdesk.windows import Windows

CLIPBOARD_LIMIT = 4 << 20  # bytes read back from a selection
MAX_SET_CHARS = 16 << 20
OWNER_POLL = 0.005  # seconds between two looks at the selection's owner (an X round trip each)
PASTE_KEY = "shift+Insert"  # pastes CLIPBOARD in GTK, Qt, LibreOffice and Chromium, PRIMARY in xterm
Selection = Literal["clipboard", "primary"]
_NOTHING_OWNED = ("target UTF8_STRING not available", "target STRING not available")


class Clipboard:
    """The X selections of one desktop, reached through its command channel."""

    def __init__(self, channel: Channel, windows: Windows, guard: Guard) -> None:
        self._channel = channel
        self._windows = windows
        self._guard = guard

    @guarded
    def get(self, selection: Selection = "clipboard", *, limit: int = CLIPBOARD_LIMIT,
            timeout: float = 10.0) -> str:
        """The selection's text ("" when nothing owns it); :class:`TooLarge` past ``limit`` bytes."""
        _check_selection(selection)
        if not 0 < limit <= MAX_OUTPUT_LIMIT:
            raise InvalidArgument(f"limit must be 1..{MAX_OUTPUT_LIMIT} bytes, got {limit}")
        done = self._channel.run(["xclip", "-o", "-selection", selection, "-target", "UTF8_STRING"],
                                 timeout=timeout, limit=limit)
        if done.timed_out:  # xclip hands nothing over before it has all of it
            raise DesktopTimeout(f"the {selection} selection did not arrive within {timeout:g} s "
                                 "(its owner is slow or it is very large)")
        if done.returncode != 0:
            if any(marker in done.stderr for marker in _NOTHING_OWNED) or not done.stderr.strip():
                return ""
            done.check()
        if done.stdout_bytes > limit:
            raise TooLarge(f"the {selection} selection holds {done.stdout_bytes} bytes, over the limit of "
                           f"{limit}: pass limit= (up to {MAX_OUTPUT_LIMIT}) to read more")
        return done.stdout

    @guarded
    def set(self, text: str, selection: Selection = "clipboard", *, timeout: float = 10.0) -> None:
        """Make ``text`` the selection's content (exactly, any Unicode)."""
        _check_selection(selection)
        if not isinstance(text, str):
            raise InvalidArgument(f"clipboard text must be a string, got {type(text).__name__}")
        if len(text) > MAX_SET_CHARS:
            raise InvalidArgument(f"clipboard text is {len(text)} characters, over the limit of {MAX_SET_CHARS}")
        # xsel reads the text and forks a server that takes the selection and answers for it
        # (xclip's server hangs on selections over ~1 MB, which go in increments). xsel itself
        # ends before its server owns the selection: until then a paste or a read gets what was
        # there before, so this waits for the new owner.
        before = self._windows.selection_owner(selection.upper())
        started = time.monotonic()
        done = self._channel.run(["xsel", "--input", f"--{selection}"], stdin=text,
                                 timeout=timeout, mode="outlive")
        if done.returncode != 0:
            raise CommandFailed(f"xsel could not take the {selection} selection (exit {done.returncode})")
        if text:  # an empty text clears the selection: xsel does that itself, no server
            self._until_owned(selection, before, started, timeout)

    def _until_owned(self, selection: Selection, before: int, started: float, timeout: float) -> None:
        while self._windows.selection_owner(selection.upper()) in (before, 0):
            if time.monotonic() > started + timeout:
                raise DesktopTimeout(f"xsel's server did not take the {selection} selection within {timeout:g} s")
            time.sleep(OWNER_POLL)

    @guarded
    def paste(self, text: str, timeout: float = 10.0) -> None:
        """Type ``text`` into the focused program by pasting it: both selections are set to it
        (replacing what they held) and Shift+Insert is pressed."""
        self.set(text, "clipboard", timeout=timeout)
        self.set(text, "primary", timeout=timeout)
        self._channel.run(["xdotool", "key", "--clearmodifiers", PASTE_KEY], timeout=timeout).check()


def _check_selection(selection: str) -> None:
    if selection not in ("clipboard", "primary"):
        raise InvalidArgument(f"selection must be 'clipboard' or 'primary', got {selection!r}")

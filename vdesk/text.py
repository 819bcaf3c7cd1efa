"""The text on a desktop's screen: read it, find a string in it, wait for one to appear.

``desktop.text.read()`` is the lines on the screen now, ``find(pattern)`` where a pattern is,
``wait_for(pattern)`` waits until it is there. They read the screen's frames with OCR
(:mod:`vdesk.accessibility.text`, which says what is read and how patterns match); bounds are
in logical pixels.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from vdesk.accessibility import text as text_on_screen
from vdesk.accessibility.text import Pattern, TextBox, TextLine
from vdesk.coords import Box
from vdesk.errors import DesktopTimeout
from vdesk.guard import Guard
from vdesk.progress import Progress
from vdesk.screen import DesktopScreen

if TYPE_CHECKING:
    from vdesk.frames import Frame

PROGRESS_EVERY = 2.0  # seconds between progress lines of a wait
SEEN_SHOWN = 160  # characters of the last reading a timeout quotes

Region = Box | Sequence[int] | None


class DesktopText:
    """OCR of one desktop's screen."""

    def __init__(self, screen: DesktopScreen, guard: Guard) -> None:
        self._screen = screen
        self._guard = guard

    def read(self, region: Region = None) -> list[TextLine]:
        """The lines of text on the screen now (OCR of a fresh frame), within ``region``
        (logical pixels: left, top, right, bottom) if given; bounds in logical pixels."""
        frame = self._screen.with_frames(lambda frames: frames.fresh())
        return text_on_screen.read(frame.image, scale=self._screen.scale, region=region)

    def find(self, pattern: Pattern, region: Region = None) -> list[TextBox]:
        """The boxes where text matching ``pattern`` is on the screen now, top to bottom.

        ``pattern`` is a plain string (matched literally, any whitespace standing for any) or a
        compiled regex; a match may span the words of a line. An empty list when it is not there.
        """
        text_on_screen.compile_pattern(pattern)  # a bad pattern fails before any frame is read
        return text_on_screen.find(self.read(region), pattern)

    def wait_for(self, pattern: Pattern, *, region: Region = None, timeout: float = 10.0,
                 progress: Progress | None = None) -> list[TextBox]:
        """Wait until text matching ``pattern`` (see :meth:`find`) is on screen; return its
        boxes. Each new frame of the live framebuffer is read as it comes (the newest one when
        several came during a read); ``progress`` hears how the wait goes every few seconds.
        Raises :class:`DesktopTimeout` naming the pattern and what was last read."""
        text_on_screen.compile_pattern(pattern)
        return self._guard(lambda: self._wait_for(pattern, region, timeout, progress))

    def _wait_for(self, pattern: Pattern, region: Region, timeout: float, progress: Progress | None) -> list[TextBox]:
        name, frames = self._guard.name, self._screen.frames
        started = time.monotonic()
        deadline, told = started + timeout, started
        reads, lines = 0, []
        with frames.watching():
            frame: Frame | None = frames.fresh(timeout=max(1.0, timeout))
            while frame is not None:
                lines = text_on_screen.read(frame.image, scale=self._screen.scale, region=region)
                reads += 1
                if found := text_on_screen.find(lines, pattern):
                    return found
                now = time.monotonic()
                if progress is not None and now - told >= PROGRESS_EVERY:
                    told = now
                    progress(f"{name}: waiting for text {text_on_screen.describe(pattern)}: "
                             f"{reads} frames read in {now - started:.0f} s")
                frame = frames.next_change(frame.version, deadline - now) if now < deadline else None
        seen = " | ".join(line.text for line in lines)
        seen = seen if len(seen) <= SEEN_SHOWN else seen[:SEEN_SHOWN - 3] + "..."
        raise DesktopTimeout(f"desktop {name}: no text matching {text_on_screen.describe(pattern)} "
                             f"appeared within {timeout:g} s ({reads} frames read; the last said: {seen!r})")

"""Whether anything was drawn on the screen since the last time we asked: the X server's DAMAGE
extension on the held X connection, one round trip (0.2 ms here) instead of a frame.

A receipt needs a frame from before a batch and one from after it. Each fresh frame is a round
trip on the VNC connection through the frames' event-loop thread and back (0.5-0.7 ms on this
2-core machine, twice per batch: the default receipt cost 1.2 ms a click over ``receipt=False``
at a load of 3). On a screen where nothing was drawn the last frame taken is still the screen,
and the X server knows whether anything was drawn: every drawing request reaches it, and a
DAMAGE object on the root window collects the areas painted in any window (the root's inferiors
included; the pointer is no drawing, and frames never show it).

The object reports at the ``NonEmpty`` level: one ``DamageNotify`` when its region goes from empty
to painted, nothing more until it is cleared. So a busy screen (a video, a printing terminal)
sends one small event per question, never a stream nobody reads. A question clears the region
(``DamageSubtract``) and syncs; the notifies that arrived before the sync's reply say what was
drawn. A notify the server made *after* the clear (its sequence number is the clear's or later:
the server stamps events with the last request of ours it processed) means the region is painted
again, and later drawing sends no new notify until the next clear: that painting is carried into
the next answer, so no drawing is ever missed. An answer may say "drawn" when the frame taken
right after already holds the drawing; that costs a frame, never a wrong receipt.

A receipt asks before its batch and after it (:meth:`ScreenDamage.drawn` each time). Before the
batch, the notices the connection already holds are not enough: a command that finished drawing
just before (an ``xsetroot`` run to its end) has had its requests processed, but its notice may
still be on its way through the tunnel, later than the command's own answer on a loaded machine
(beside two CPU hogs, 14 of 200 clicks after an ``xsetroot`` were blamed for its colour when only
the held notices were read). The round trip orders it: a notice the server made before
answering arrives before the answer.
"""

from __future__ import annotations

from typing import Any

from Xlib.display import Display
from Xlib.ext import damage

_SEQUENCE = 0x10000  # events carry the low 16 bits of a request's sequence number


class ScreenDamage:
    """What was drawn on one X connection's screen between two calls of :meth:`drawn`."""

    def __init__(self, display: Display) -> None:
        self._display = display
        self._id: int | None = None
        self._notify_type: int | None = None  # DamageNotify's event code on this connection
        self._available = display.has_extension(damage.extname)
        self._seen: list[int] = []  # sequence numbers of notifies read and not yet answered for
        self._carried = True  # the first answer on a connection: nothing is known before it

    def note(self, event: Any) -> None:
        """Keep a notify read from the connection by whoever drained its events."""
        # By its code: python-xlib makes each connection a class of its own for an extension's event.
        if self._notify_type is not None and event.type & 0x7F == self._notify_type:
            self._seen.append(event.sequence_number)

    def drawn(self) -> bool:
        """Whether anything was drawn since the last call (True at the first call and on a server
        without DAMAGE); one round trip."""
        if not self._available:
            return True
        display = self._display
        if self._id is None:
            display.damage_query_version()
            self._notify_type = display.query_extension(damage.extname).first_event + damage.DamageNotifyCode
            self._id = display.screen().root.damage_create(damage.DamageReportNonEmpty)
        clear = damage.DamageSubtract(display=display.display, opcode=display.display.get_extension_major(damage.extname),
                                      damage=self._id, repair=0, parts=0)
        cleared_at = clear._serial % _SEQUENCE
        display.sync()
        while display.pending_events():
            self.note(display.next_event())
        drawn, self._carried = self._carried, False
        for sequence in self._seen:
            drawn = True
            self._carried |= (sequence - cleared_at) % _SEQUENCE < _SEQUENCE // 2  # made after the clear
        self._seen.clear()
        return drawn

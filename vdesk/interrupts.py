"""Ctrl-C and SIGTERM that cannot land in the middle of making something.

Starting a desktop is several steps (create the container, wait for X and the first frame,
print its name); an interrupt between two of them would leave a desktop nobody knows about.
Inside :class:`SignalGuard` SIGINT and SIGTERM are *held* — noted, and delivered again (as the
process would have received them) when the guard ends — except inside :meth:`SignalGuard.armed`,
where the first one raises :class:`Interrupted` at once so a long wait ends promptly. Whoever
catches it undoes the work while further signals are held, then the guard delivers the signal.

Python runs signal handlers in the main thread only, so elsewhere the guard does nothing.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType, TracebackType

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """A held-back SIGINT or SIGTERM, raised where the work can be undone."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class SignalGuard:
    """Holds SIGINT and SIGTERM while it is entered (main thread only); see the module."""

    def __init__(self) -> None:
        self.pending: int | None = None
        self._armed = False
        self._previous: dict[int, object] = {}

    def __enter__(self) -> SignalGuard:
        if threading.current_thread() is threading.main_thread():
            for signum in SIGNALS:
                previous = signal.getsignal(signum)
                if previous is not signal.SIG_IGN:  # an ignored signal stays ignored
                    self._previous[signum] = previous
                    signal.signal(signum, self._note)
        return self

    def _note(self, signum: int, _: FrameType | None) -> None:
        if self.pending is None:
            self.pending = signum
        if self._armed:
            self._armed = False  # only the first raises: the undoing that follows is not cut short
            raise Interrupted(signum)

    @contextmanager
    def armed(self) -> Iterator[None]:
        """Let the first signal (or one already held) raise :class:`Interrupted` in here."""
        if self.pending is not None:
            raise Interrupted(self.pending)
        self._armed = True
        try:
            yield
        finally:
            self._armed = False

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)  # type: ignore[arg-type]
        self._previous.clear()
        if self.pending is not None:
            signal.raise_signal(self.pending)  # as if it arrived now: KeyboardInterrupt, exit, ...

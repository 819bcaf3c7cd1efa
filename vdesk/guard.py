"""The guard of one desktop: whether it is open and alive, and what a failure under it means.

A desktop's parts (:mod:`vdesk.screen`, :mod:`vdesk.input`, :mod:`vdesk.files`, ...) each talk
to the container over their own transport, and each of those fails its own way when the
container stops: a dropped VNC connection, a lost exec session, a timeout. The caller wants one
answer to "what happened": :class:`~vdesk.errors.DesktopGone` naming the desktop and why it
stopped. Every part runs its calls through the one :class:`Guard` of its desktop, which gives that
answer, and refuses calls once the desktop was closed.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Concatenate, ParamSpec, Protocol, TypeVar

import docker.errors
from docker.models.containers import Container

from vdesk.container import stop_reason
from vdesk.errors import ChannelLost, DesktopGone, DesktopTimeout

T = TypeVar("T")
P = ParamSpec("P")
GONE_PATIENCE = 0.5  # seconds a broken connection waits for the engine to report the container stopped


class Guard:
    """Whether one desktop is open and its container alive; the one place a failure of a dead
    container becomes :class:`DesktopGone`."""

    def __init__(self, container: Container, name: str) -> None:
        self.container = container
        self.name = name
        self.closed = False

    def check_open(self) -> None:
        """Raise DesktopGone if the desktop was closed (by this process)."""
        if self.closed:
            raise DesktopGone(f"desktop {self.name} is closed")

    def is_alive(self) -> bool:
        """Whether the container runs (one engine request)."""
        try:
            self.container.reload()
        except docker.errors.NotFound:
            return False
        return self.container.status == "running"

    def __call__(self, call: Callable[[], T]) -> T:
        """Run ``call``; a failure of a dead container becomes DesktopGone naming it."""
        self.check_open()
        try:
            return call()
        except (DesktopGone, DesktopTimeout, ChannelLost) as error:
            # A broken connection often arrives before the engine reports the container stopped.
            settle = time.monotonic() + (0 if isinstance(error, DesktopTimeout) else GONE_PATIENCE)
            while not self.closed and self.is_alive() and time.monotonic() < settle:
                time.sleep(0.05)
            if not self.closed and not self.is_alive():
                raise DesktopGone(f"desktop {self.name} is gone (its container stopped or was removed)"
                                  f"{stop_reason(self.container)}") from error
            raise


class Guarded(Protocol):
    """A part of a desktop: it holds its desktop's guard."""

    _guard: Guard


G = TypeVar("G", bound=Guarded)


def guarded(method: Callable[Concatenate[G, P], T]) -> Callable[Concatenate[G, P], T]:
    """A part's method run through its desktop's guard."""

    @functools.wraps(method)
    def run(self: G, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._guard(lambda: method(self, *args, **kwargs))

    return run


"""Where an environment's desktop lives: in this process, or in an actor on a cluster node.

The environment needs little of a desktop: its screen (geometry and shots), and a way to run a
function next to the real :class:`~vdesk.desktop.Desktop` — window queries, setup steps, checks
and actions all go through ``call(function, *args)``, which runs ``function(desktop, *args)``.
:class:`LocalHost` does that in this process; :class:`vdesk.cluster.actors.RemoteDesktop` does
it on the node that holds the desktop. So one episode loop drives either.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from PIL import Image

from vdesk.coords import ImageSpace, Screen
from vdesk.desktop import Desktop
from vdesk.screen import DesktopScreen
from vdesk.forks import Checkpoint
from vdesk.images import DEFAULT as DEFAULT_IMAGE
from vdesk.spec import DesktopSpec

T = TypeVar("T")


class HostScreen(Protocol):
    """What the environment needs of a desktop's screen: its geometry and a shot of it."""

    @property
    def geometry(self) -> Screen: ...

    @property
    def size(self) -> tuple[int, int]: ...

    def image(self) -> ImageSpace: ...

    def shot(self, size: tuple[int, int] | None = None, *, fresh: bool = True) -> Image.Image:
        """The screen at the logical size, or resized to ``size``."""
        ...


class DesktopHost(Protocol):
    """What the environment needs of a desktop, wherever it runs."""

    @property
    def name(self) -> str: ...

    @property
    def screen(self) -> HostScreen: ...

    @property
    def in_process(self) -> bool:
        """Whether :meth:`call` runs its function in this process, where an argument is the
        caller's own object (a stop flag set later still reaches it); else arguments travel as
        copies."""
        ...

    def call(self, function: Callable[..., T], *args: Any, timeout: float = ...) -> T:
        """``function(desktop, *args)`` run next to the real desktop; ``timeout`` bounds the
        round trip when there is one (``function`` should be module-level: it may travel)."""
        ...


@dataclass(frozen=True)
class LocalHost:
    """A desktop of this process as a :class:`DesktopHost`."""

    desktop: Desktop

    @property
    def name(self) -> str:
        return self.desktop.name

    @property
    def screen(self) -> DesktopScreen:
        return self.desktop.screen

    @property
    def in_process(self) -> bool:
        return True

    def call(self, function: Callable[..., T], *args: Any, timeout: float = 0.0) -> T:
        # No round trip to bound here: the function's own waits have their timeouts.
        return function(self.desktop, *args)


# Opens a desktop for a task's settings; leaving the context releases it (or leaves it to its owner).
DesktopSource = Callable[[DesktopSpec], AbstractContextManager[DesktopHost]]


def fresh_desktops(image: str = DEFAULT_IMAGE, environment: Mapping[str, str] | None = None) -> DesktopSource:
    """A new local desktop for each task (of the task's image, else ``image``), removed when
    the environment lets it go."""

    @contextmanager
    def open_desktop(settings: DesktopSpec) -> Iterator[DesktopHost]:
        desktop = Desktop.up(settings.over(image, dict(environment or {})))
        try:
            yield LocalHost(desktop)
        finally:
            desktop.down()

    return open_desktop


# Opens a desktop started from a checkpoint (a Checkpoint or its name); leaving the context
# releases it. Where the checkpoint lives decides where its forks can start (see vdesk.forks).
ForkSource = Callable[[Checkpoint | str], AbstractContextManager[DesktopHost]]


def local_forks(engine: str | None = None) -> ForkSource:
    """A new fork of the checkpoint for each episode, on this machine's engine (or ``engine``,
    which must be the one holding the checkpoint), removed when the environment lets it go."""

    @contextmanager
    def open_fork(checkpoint: Checkpoint | str) -> Iterator[DesktopHost]:
        (desktop,) = Desktop.fork(checkpoint, engine=engine)
        try:
            yield LocalHost(desktop)
        finally:
            desktop.down()

    return open_fork


def given(desktop: DesktopHost) -> Callable[[object], AbstractContextManager[DesktopHost]]:
    """A desktop that is already up and that its owner releases (e.g. the scheduler of
    :func:`vdesk.cluster.scheduler.run_episodes`); the task's settings (or, for a fork, the
    checkpoint) were used to start it. Serves as a :data:`ForkSource` too."""
    return lambda settings: nullcontext(desktop)

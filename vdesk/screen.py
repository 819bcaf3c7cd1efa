"""The screen of a desktop: its geometry, its frames, and the waits on them.

``desktop.screen.shot()`` is the screen as an image at the logical size; ``settle`` waits for it
to hold still, ``wait_for_change`` for it to change, ``record`` writes it to a video. All of them
read the one VNC connection the desktop holds (:class:`vdesk.frames.LiveFramebuffer`, opened
when the desktop starts and again after it dropped), so a screenshot of a still screen costs no
round trip to the desktop and a fresh one costs one.

The screen's geometry (``size``, ``scale``, ``physical_size``) is :class:`vdesk.coords.Screen`,
``desktop.screen.geometry``; the screen answers for it too, so ``desktop.screen.size`` is the
logical size wherever a desktop is held.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import docker
from docker.models.containers import Container
from PIL import Image

from vdesk import video
from vdesk.container import VNC_TARGET, last_log
from vdesk.coords import Box, ImageSpace, Screen
from vdesk.errors import (DesktopGone, DesktopTimeout, ForkedProcess, InvalidArgument, PasswordRefused, VNCUnavailable,
                          VdeskError)
from vdesk.execstream import Prelude, plain_sockets, start_exec
from vdesk.guard import Guard
from vdesk.vnc import DesktopVnc

if TYPE_CHECKING:  # imported on first use: the VNC client library takes ~0.3 s to load
    from vdesk.frames import Frame, LiveFramebuffer, OpenExec

T = TypeVar("T")
CONNECT_TIMEOUT = 10.0  # the frames' connection opened on first use
RECONNECT_TIMEOUT = 5.0  # and again after it dropped


class DesktopScreen:
    """One desktop's screen: geometry, the held VNC connection, images and waits."""

    def __init__(self, api: docker.APIClient, container: Container, geometry: Screen, guard: Guard,
                 vnc: DesktopVnc) -> None:
        self.geometry = geometry
        self._api = api
        self._container = container
        self._guard = guard
        self._vnc = vnc
        self._frames: LiveFramebuffer | None = None

    # -- geometry -----------------------------------------------------------------------------
    @property
    def width(self) -> int:
        return self.geometry.width

    @property
    def height(self) -> int:
        return self.geometry.height

    @property
    def scale(self) -> float:
        return self.geometry.scale

    @property
    def size(self) -> tuple[int, int]:
        """The logical size (width, height): what screenshots and raw points are in."""
        return self.geometry.size

    @property
    def physical_size(self) -> tuple[int, int]:
        """The framebuffer's size: the logical size times the scale."""
        return self.geometry.physical_size

    def image(self) -> ImageSpace:
        """The image space of a screenshot at the logical size."""
        return self.geometry.image()

    # -- the held connection ------------------------------------------------------------------
    @property
    def frames(self) -> LiveFramebuffer:
        """The held VNC connection, opened on first use and reopened if it dropped."""
        self._guard.check_open()
        if self._frames is None:
            self.connect(CONNECT_TIMEOUT)
        elif not self._frames.connected:
            self._reconnect()
        assert self._frames is not None
        return self._frames

    @property
    def held(self) -> LiveFramebuffer | None:
        """The connection held now, if any (frame versions count per connection)."""
        return self._frames

    def connect(self, timeout: float) -> None:
        """Hold the VNC connection once a first frame came, trying again until ``timeout`` (a
        desktop just started may not listen yet)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._connect_once(min(5.0, max(1.0, deadline - time.monotonic())))
                return
            except (PasswordRefused, ForkedProcess):
                raise
            except VdeskError as error:
                if time.monotonic() > deadline:
                    raise DesktopTimeout(f"desktop {self._guard.name} did not show a first frame within "
                                         f"{timeout:g} s: {error}") from None
                if not self._guard.is_alive():
                    raise DesktopGone(f"desktop {self._guard.name} stopped while starting: "
                                      f"{last_log(self._container)}") from None
                time.sleep(0.05)

    def connect_after(self, prelude: Prelude, timeout: float) -> None:
        """Hold the VNC connection through a relay that runs ``prelude`` first, in its own exec
        (a fork's new password, set by the exec that then carries its first frame). Tried once:
        the prelude is not run twice; any VdeskError says this connection failed."""
        self._connect_once(timeout, prelude)

    def _connect_once(self, timeout: float, prelude: Prelude | None = None) -> None:
        from vdesk.frames import LiveFramebuffer  # not loaded by commands that need no frames

        source: str | OpenExec
        if plain_sockets(self._api):  # the frames' event loop reads the relay's socket itself
            source = functools.partial(start_exec, self._api, self._container.id, ["socat", "STDIO", VNC_TARGET],
                                       label=self._guard.name, prelude=prelude)
        elif prelude is None:
            source = self._vnc.private_tunnel().address
        else:
            raise VNCUnavailable(f"desktop {self._guard.name}: a relay with a prelude needs an engine whose "
                                 "exec connections are plain sockets")
        self._frames = LiveFramebuffer(source, self._vnc.password, self._guard.name,
                                       max_size=self.geometry.physical_size)
        self._frames.connect(timeout=timeout)

    def _reconnect(self) -> None:
        # The connection dropped (its tunnel died) while the desktop lives on: pick up where we were.
        if not self._guard.is_alive():
            raise DesktopGone(f"desktop {self._guard.name} is gone")
        assert self._frames is not None
        self._frames.close()
        self.connect(RECONNECT_TIMEOUT)

    def close(self) -> None:
        """Let go of the connection (it opens again on next use)."""
        if self._frames is not None:
            self._frames.close()
            self._frames = None

    def with_frames(self, call: Callable[[LiveFramebuffer], T]) -> T:
        """Run ``call(frames)``; when the VNC connection dropped under it, reconnect and retry once."""
        try:
            return self._guard(lambda: call(self.frames))
        except DesktopGone:
            if self._guard.closed or not self._guard.is_alive():
                raise
            return self._guard(lambda: call(self.frames))

    # -- images -------------------------------------------------------------------------------
    def shot(self, size: tuple[int, int] | ImageSpace | None = None, *, fresh: bool = True) -> Image.Image:
        """The screen as an RGB image at the logical size (or resized to ``size``).

        ``fresh=True`` includes every change the VNC server has seen (one round trip);
        ``fresh=False`` returns the last received frame at no cost.
        """
        frame = self.with_frames(lambda frames: frames.fresh() if fresh else frames.latest())
        return self.to_image(frame.image, size)

    def to_image(self, physical: Image.Image, size: tuple[int, int] | ImageSpace | None = None) -> Image.Image:
        """A physical frame scaled to the logical size, or to ``size`` for a model: an image of
        the caller's own (frames are shared, see :meth:`LiveFramebuffer.latest`)."""
        scaled = self.scaled(physical, size)
        return scaled.copy() if scaled is physical else scaled

    def scaled(self, physical: Image.Image, size: tuple[int, int] | ImageSpace | None = None) -> Image.Image:
        """A physical frame at the logical size (or ``size``); the frame itself when it is that size."""
        target = image_space(size).size if size is not None else self.geometry.size
        if physical.size == target:
            return physical
        return physical.resize(target, Image.Resampling.LANCZOS, reducing_gap=2.0)

    # -- waits --------------------------------------------------------------------------------
    def settle(self, quiet: float = 0.03, timeout: float = 10.0, *, strict: bool = False) -> Image.Image:
        """The screen once it has not changed for ``quiet`` seconds, waiting ``timeout`` at most.

        A screen that never stops changing (a video, a spinner) comes back as it is at
        ``timeout``; with ``strict=True`` that is a :class:`DesktopTimeout` instead. The quiet
        period counts from this call at the earliest, so a program still reacting to the last
        input is not mistaken for calm.
        """
        if strict:
            frame = self.with_frames(lambda frames: frames.wait_until_settled(quiet, timeout))
        else:
            frame, _ = self.with_frames(lambda frames: frames.settle(quiet, timeout))
        return self.to_image(frame.image)

    def wait_for_change(self, region: Box | Sequence[float] | None = None, timeout: float = 10.0, *,
                        since: Image.Image | None = None) -> Image.Image:
        """The first frame that differs from the current one, within ``region`` (a logical Box,
        or (left, top, right, bottom) in logical pixels) if given.

        ``since`` is a screenshot from before the caller acted (what :meth:`shot` returned): the
        first frame that differs from it comes back, the current one included, so a change that
        came before this call is not missed — the way to wait for what an action did.
        """
        physical = Box.of(region).physical(self.geometry.scale) if region else None
        differs = self._differs_from(since, region) if since is not None else None
        frame = self.with_frames(lambda frames: frames.wait_for_change(physical, timeout, differs))
        return self.to_image(frame.image)

    def _differs_from(self, since: Image.Image, region: Box | Sequence[float] | None) -> Callable[[Frame], bool]:
        """Whether a frame, at the logical size, differs from ``since`` within ``region``."""
        if since.size != self.size:
            raise InvalidArgument(f"since is {since.size[0]}x{since.size[1]}, the screen {self.width}x{self.height}: "
                                  "pass a screenshot of this screen at its logical size")
        from vdesk.frames import image_differs  # loaded already: a wait goes through the frames

        differs = image_differs(since.convert("RGB"), Box.of(region).pixels() if region else None)
        return lambda frame: differs(self.scaled(frame.image))

    def record(self, path: str | Path, *, fps: float = video.DEFAULT_FPS,
               seconds: float | None = None) -> AbstractContextManager[video.Recording]:
        """Record the screen (logical size) into an MP4 at ``fps`` while inside the ``with``
        block, or ``seconds`` of video at most (``recording.wait()`` returns once they are
        written); the frames come from the held VNC connection (see :mod:`vdesk.video`)."""
        last: list[tuple[Frame, Image.Image]] = []  # the frame grabbed last, and its image at the logical size

        def grab() -> Image.Image:
            frame = self.with_frames(lambda frames: frames.fresh())
            if not last or frame is not last[0][0]:  # else the screen did not change: the same image again
                last[:] = [(frame, self.scaled(frame.image))]
            return last[0][1]

        return video.record(grab, path, size=self.geometry.size, fps=fps, seconds=seconds)


def image_space(size: tuple[int, int] | ImageSpace) -> ImageSpace:
    """``size`` as an image space: a (width, height) pair or an ImageSpace."""
    if isinstance(size, ImageSpace):
        return size
    if not (isinstance(size, (tuple, list)) and len(size) == 2):
        raise InvalidArgument(f"an image size must be (width, height) or an ImageSpace, got {size!r}")
    return ImageSpace(*size)

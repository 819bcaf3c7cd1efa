"""The desktops of ``vdesk mcp``: one per connection (an MCP session, or all of them with
``share``), started on its first tool call and leased to this process (:mod:`vdesk.lease`), so it
goes away when the server does, however it ends; at most ``max_desktops`` up or starting at once.

A desktop that died is an error saying so, and the next call starts a fresh one (or attaches
again). A slot runs one call at a time: MCP clients send tool calls one after another, and a
lock per slot keeps two sessions sharing a desktop from interleaving their input.
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import TypeVar

import docker.errors
from mcp.server.mcpserver.exceptions import ToolError

from vdesk import engine as engines, images
from vdesk.coords import ImageSpace
from vdesk.desktop import SESSION_READY_LABEL, Desktop
from vdesk.errors import DesktopGone, InvalidArgument, VdeskError
from vdesk.inventory import find_desktop
from vdesk.spec import DesktopSpec

T = TypeVar("T")
DEFAULT_IDLE_TIMEOUT = 30 * 60.0
DEFAULT_MAX_DESKTOPS = 4
STDIO_KEY = "stdio"  # the slot of the one connection over stdio
SHARED_KEY = "shared"  # the slot every session drives with share=True


@dataclass(frozen=True)
class ServerOptions:
    """What ``vdesk mcp`` was asked for: desktops of the spec ``desktop``, or ``attach`` (a name)."""

    desktop: DesktopSpec = DesktopSpec()
    attach: str | None = None
    engine: str | None = None
    share: bool = False
    max_desktops: int = DEFAULT_MAX_DESKTOPS
    allow_commands: bool = False
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT

    def __post_init__(self) -> None:
        if not 1 <= self.max_desktops <= 1000:
            raise InvalidArgument(f"--max-desktops must be 1..1000, got {self.max_desktops}")
        if not (math.isfinite(self.idle_timeout) and self.idle_timeout > 0):
            raise InvalidArgument(f"--idle-timeout must be a positive number of seconds, got {self.idle_timeout}")



def have_tree(options: ServerOptions) -> bool:
    """Whether the desktops served have an accessibility tree (what the tree, marks and element
    tools read), as their image says: one that runs vdesk's apps session (its label
    ``vdesk.session-ready``: the apps image and every image built FROM it) has the session bus,
    the accessibility bus and the tree's reader; the lean image has none. The image is the
    attached desktop's, else the spec's. One of vdesk's own images not built yet is what it will
    be built as; a desktop, image or engine that cannot be found offers the tools, and the
    first call says what is wrong."""
    image = images.resolve(options.desktop.image_name)
    try:
        client = engines.connect(options.engine)
    except VdeskError:
        return True
    try:
        if options.attach:
            labels = find_desktop(client, options.attach).labels
        else:
            labels = client.images.get(image).labels or {}
    except docker.errors.ImageNotFound:
        return images.is_apps(image) or image not in images.IMAGE_NAMES.values()
    except (VdeskError, docker.errors.DockerException):
        return True
    finally:
        client.close()
    return SESSION_READY_LABEL in labels


class Slot:
    """The desktop of one connection: started on first use, used by one call at a time."""

    def __init__(self, options: ServerOptions, room: Callable[[], AbstractContextManager[None]]) -> None:
        self._options = options
        self._room = room  # held while a desktop starts; raises when no further one may
        self._lock = threading.Lock()
        self._desktop: Desktop | None = None
        self._closed = False
        self.image: ImageSpace | None = None  # the size of the last screenshot taken here

    @property
    def running(self) -> bool:
        return self._desktop is not None

    def use(self, call: Callable[[Desktop], T]) -> T:
        """``call(desktop)``; a desktop that died is forgotten, and the next call starts another."""
        with self._lock:
            if self._closed:
                raise ToolError("this session has ended; open a new one")
            desktop = self._desktop or self._start()
            try:
                return call(desktop)
            except DesktopGone as error:
                self._forget()
                again = "attaches again" if self._options.attach else "starts a fresh desktop"
                raise ToolError(f"the desktop is gone ({error}); the next call {again}") from None
            except VdeskError as error:
                raise ToolError(str(error)) from None

    def release(self) -> None:
        """Remove the desktop (an attached one is only let go) and refuse further calls."""
        with self._lock:
            self._closed = True
            self._forget()

    def _start(self) -> Desktop:
        try:
            if self._options.attach:
                self._desktop = Desktop.attach(self._options.attach, engine=self._options.engine)
            else:
                with self._room():
                    self._desktop = Desktop.up(self._options.desktop, engine=self._options.engine)
        except VdeskError as error:
            raise ToolError(f"could not get a desktop: {error}") from None
        self.image = None
        print(f"vdesk mcp: desktop {self._desktop.name} is up", file=sys.stderr, flush=True)
        return self._desktop

    def _forget(self) -> None:
        desktop, self._desktop = self._desktop, None
        if desktop is not None:
            desktop.down() if not self._options.attach else desktop.close()


class Desktops:
    """Every connection's slot, by key; at most ``max_desktops`` desktops up or starting at once."""

    def __init__(self, options: ServerOptions) -> None:
        self._options = options
        self._slots: dict[str, Slot] = {}
        self._lock = threading.Lock()
        self._starting = 0

    def slot(self, key: str) -> Slot:
        with self._lock:
            if key not in self._slots:
                self._slots[key] = Slot(self._options, self._room)
            return self._slots[key]

    def release(self, key: str) -> None:
        with self._lock:
            slot = self._slots.pop(key, None)
        if slot is not None:
            slot.release()

    def close(self) -> None:
        with self._lock:
            slots, self._slots = list(self._slots.values()), {}
        for slot in slots:
            slot.release()

    @contextmanager
    def _room(self) -> Iterator[None]:
        """Room for one more desktop while it starts (desktops starting count as running)."""
        with self._lock:
            running = self._starting + sum(slot.running for slot in self._slots.values())
            if running >= self._options.max_desktops:
                raise ToolError(f"this server already runs {running} desktops, its limit (--max-desktops "
                                f"{self._options.max_desktops}): end another MCP session, or restart the "
                                "server with a higher --max-desktops")
            self._starting += 1
        try:
            yield
        finally:
            with self._lock:
                self._starting -= 1


"""The pointer as OSWorld's machine reports it: where it is, and screenshots with it drawn in.

OSWorld's ``/screenshot`` pastes the X cursor onto the screen grab (a VNC framebuffer, like
vdesk's, carries no cursor: the server sends it apart). Here the cursor's image comes from the
X server itself (XFixes ``GetCursorImage``: the sprite, its hotspot and the pointer's position in
one request on the held X connection), so a screenshot costs one fresh frame, one X round trip
and the PNG encoding. The sprite is placed by its hotspot (the reference puts its corner at the
pointer, a pixel or two off for an arrow).

Coordinates are the framebuffer's (physical) pixels, the space pyautogui works in inside the desktop.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from PIL import Image
from Xlib import display as xdisplay
from Xlib.ext import xfixes

from vdesk.coords import ImageSpace
from vdesk.desktop import Desktop

MAX_CURSOR_SIDE = 256  # pixels; X cursors are 16–64, a larger one is not drawn


@dataclass(frozen=True)
class Cursor:
    """The pointer's position and, when X gave one, its sprite and hotspot."""

    x: int
    y: int
    sprite: Image.Image | None = None
    hotspot: tuple[int, int] = (0, 0)


def position(desktop: Desktop) -> tuple[int, int]:
    """Where the pointer is, in the framebuffer's pixels."""
    return desktop.input.pointer(ImageSpace(*desktop.screen.physical_size))


def cursor(desktop: Desktop) -> Cursor:
    """The pointer's position and sprite; the position alone when X has no XFixes."""
    def ask(display: xdisplay.Display) -> Cursor:
        if not display.has_extension(xfixes.extname):
            reply = display.screen().root.query_pointer()
            return Cursor(int(reply.root_x), int(reply.root_y))
        display.xfixes_query_version()  # XFixes answers nothing before a client said its version
        image = display.xfixes_get_cursor_image(display.screen().root)
        return Cursor(int(image.x), int(image.y), _sprite(image.width, image.height, image.cursor_image),
                      (int(image.xhot), int(image.yhot)))
    return desktop.windows.request(ask)


def _sprite(width: int, height: int, pixels: list[int]) -> Image.Image | None:
    if not (0 < width <= MAX_CURSOR_SIDE and 0 < height <= MAX_CURSOR_SIDE) or len(pixels) != width * height:
        return None
    # ARGB words with premultiplied alpha, as little-endian bytes: B, G, R, A.
    raw = struct.pack(f"<{len(pixels)}I", *(pixel & 0xFFFFFFFF for pixel in pixels))
    return Image.frombuffer("RGBA", (width, height), raw, "raw", "BGRa", 0, 1).copy()


def screenshot(desktop: Desktop) -> Image.Image:
    """The screen at the framebuffer's size with the cursor drawn where it is."""
    frame = desktop.screen.shot(size=desktop.screen.physical_size)
    pointer = cursor(desktop)
    if pointer.sprite is not None:
        corner = (pointer.x - pointer.hotspot[0], pointer.y - pointer.hotspot[1])
        frame.paste(pointer.sprite, corner, pointer.sprite)
    return frame

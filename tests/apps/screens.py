"""What the X server itself holds on screen, read over a direct X connection."""

from __future__ import annotations

from PIL import Image, ImageChops
from Xlib import X

from vdesk.desktop import Desktop


def x_pixels(desktop: Desktop) -> Image.Image:
    """The root window's pixels as the X server has them (XGetImage), as RGB."""
    display, tunnel = desktop.x_display()
    try:
        root = display.screen().root
        geometry = root.get_geometry()
        reply = root.get_image(0, 0, geometry.width, geometry.height, X.ZPixmap, 0xFFFFFFFF)
        return Image.frombytes("RGB", (geometry.width, geometry.height), reply.data, "raw", "BGRX")
    finally:
        display.close()
        tunnel.close()


def differing_box(one: Image.Image, other: Image.Image) -> tuple[int, int, int, int] | None:
    """The bounding box of the pixels that differ at all, or None when the images are equal."""
    return ImageChops.difference(one, other).getbbox()

"""What the X server itself holds on screen, read over a direct X connection, and the check that
frames show exactly that."""

from __future__ import annotations

import pytest
from PIL import Image, ImageChops
from Xlib import X

from vdesk.desktop import Desktop
from vdesk.xconn import open_display


def x_pixels(desktop: Desktop) -> Image.Image:
    """The root window's pixels as the X server has them (XGetImage), as RGB."""
    display, tunnel = open_display(desktop.client.api, desktop.id)
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


def assert_frames_show_what_x_holds(desktop: Desktop, when: str, quiet: float = 0.5) -> None:
    """The held connection's frame and a new connection's frame equal X's pixels.

    Both frames are taken before X is read (reading the root's image makes the server finish
    drawing what it had pending, which would hide a frame that missed it). The comparison
    counts once nothing moved meanwhile: the held connection's frames before and after, and
    X's pixels read twice, agree."""
    for _ in range(20):  # each round waits for a quiet screen first
        desktop.screen.settle(quiet=quiet, timeout=30)
        held = desktop.screen.shot(fresh=True)
        with Desktop.attach(desktop.name) as other:
            new = other.screen.shot(fresh=True)
        x_now, x_again = x_pixels(desktop), x_pixels(desktop)
        still = differing_box(held, desktop.screen.shot(fresh=True)) is None and differing_box(x_now, x_again) is None
        if still:
            for label, frame in (("the held connection's frame", held), ("a new connection's frame", new)):
                box = differing_box(frame, x_now)
                assert box is None, f"{when}: {label} differs from the X server's pixels in {box}"
            return
    pytest.fail(f"{when}: the screen never held still long enough to compare")


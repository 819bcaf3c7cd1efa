"""A frame as bytes: PNG or JPEG, for an agent, a wire or a file.

Its own module, light on purpose: the command line, the cluster and the servers encode frames
without loading the VNC client (:mod:`vdesk.frames` imports Twisted and vncdotool, about 0.16 s).
"""

from __future__ import annotations

import io
from typing import Literal

from PIL import Image

from vdesk.errors import InvalidArgument


def encode(image: Image.Image, format: Literal["png", "jpeg"] = "png", quality: int = 85) -> bytes:
    """``image`` as PNG or JPEG bytes; PNG favours speed over size (compress_level 1: a 1280x800
    desktop in a few ms rather than tens)."""
    buffer = io.BytesIO()
    if format == "png":
        image.save(buffer, format="PNG", compress_level=1)
    elif format == "jpeg":
        image.save(buffer, format="JPEG", quality=quality)
    else:
        raise InvalidArgument(f"format must be png or jpeg, got {format!r}")
    return buffer.getvalue()

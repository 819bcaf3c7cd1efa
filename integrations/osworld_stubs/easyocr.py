"""Stand-in for easyocr in the osworld virtualenv: importable, unusable.

desktop-env's document metrics import easyocr at the top of their module, but only
``compare_image_text`` calls it. The real package pulls torch (~800 MB) and downloads its
recognition weights at first use, which an offline machine cannot do, so this stub lets every
metric import and makes that one metric fail with a message that says why.
"""

from __future__ import annotations

from typing import NoReturn

UNAVAILABLE = "easyocr is a stub in the osworld virtualenv (no torch, no weights offline): compare_image_text cannot run"


class Reader:
    """Raises on construction: there is no OCR model behind it."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise RuntimeError(UNAVAILABLE)


def __getattr__(name: str) -> NoReturn:
    raise AttributeError(f"{name}: {UNAVAILABLE}")

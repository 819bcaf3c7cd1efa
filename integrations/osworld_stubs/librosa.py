"""Stand-in for librosa in the osworld virtualenv: importable, unusable.

desktop-env's VLC metrics import librosa at the top of their module, but only ``compare_audios``
calls it. The real package brings numba, llvmlite, soundfile and an audio stack that no vdesk
task needs, so this stub lets the VLC metrics import and makes that one metric fail with a message
that says why.
"""

from __future__ import annotations

from typing import NoReturn

UNAVAILABLE = "librosa is a stub in the osworld virtualenv (no audio stack): compare_audios cannot run"


def load(*args: object, **kwargs: object) -> NoReturn:
    raise RuntimeError(UNAVAILABLE)


def __getattr__(name: str) -> NoReturn:
    raise AttributeError(f"{name}: {UNAVAILABLE}")

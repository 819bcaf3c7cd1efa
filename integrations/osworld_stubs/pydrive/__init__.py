"""Stand-in for pydrive in the osworld virtualenv: importable, unusable.

desktop-env's SetupController and Chrome getters import ``pydrive.auth.GoogleAuth`` and
``pydrive.drive.GoogleDrive*`` at the top of their modules, but only the ``googledrive`` setup step
and the Google Drive getters use them, and those need Google's servers and an account. The stub
lets the modules import; constructing any of its classes raises, saying why.
"""

from __future__ import annotations

UNAVAILABLE = "pydrive is a stub in the osworld virtualenv (Google Drive needs the internet and an account)"


class Unavailable:
    """A class that cannot be constructed: the base of every stand-in class here."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise RuntimeError(UNAVAILABLE)

"""``pydrive.drive`` stand-in: the Drive classes cannot be constructed (see the package docstring)."""

from __future__ import annotations

from pydrive import Unavailable


class GoogleDrive(Unavailable):
    """A Drive client: not available offline."""


class GoogleDriveFile(Unavailable):
    """A file on Drive: not available offline."""


class GoogleDriveFileList(Unavailable):
    """A listing of Drive files: not available offline."""

"""``pydrive.auth`` stand-in: GoogleAuth cannot be constructed (see the package docstring)."""

from __future__ import annotations

from pydrive import Unavailable


class GoogleAuth(Unavailable):
    """Google's OAuth flow: not available offline."""

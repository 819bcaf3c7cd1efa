"""OSWorld metrics: tables."""

from __future__ import annotations


"""OSWorld metrics: general."""

from __future__ import annotations


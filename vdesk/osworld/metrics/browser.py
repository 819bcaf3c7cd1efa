"""OSWorld metrics: browser."""

from __future__ import annotations


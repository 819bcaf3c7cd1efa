"""OSWorld metrics: settings."""

from __future__ import annotations


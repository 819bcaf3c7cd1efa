"""OSWorld metrics: documents."""

from __future__ import annotations


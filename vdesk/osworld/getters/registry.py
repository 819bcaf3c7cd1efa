"""The table of getters by OSWorld type, filled by each family module's ``@getter`` decorator.

A getter is ``function(context, settings)``: ``settings`` are the entry's keys besides ``type``;
it returns what the reference's getter of that type returns (a host path for files, strings,
dicts, lists).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from vdesk.osworld.steps import Context

Getter = Callable[[Context, dict[str, Any]], Any]

_TABLE: dict[str, Getter] = {}


def getter(name: str) -> Callable[[Getter], Getter]:
    """Register the decorated function as OSWorld's getter type ``name``."""
    def register(function: Getter) -> Getter:
        if name in _TABLE:
            raise RuntimeError(f"getter {name!r} registered twice")
        _TABLE[name] = function
        return function
    return register


def registered() -> Mapping[str, Getter]:
    return _TABLE

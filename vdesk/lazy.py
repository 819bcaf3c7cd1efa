"""Names a package's face re-exports, each imported from its home module on first use.

A face that imported its homes at once would load the whole of them (docker-py, pydantic, the
MCP SDK, ...) for ``import vdesk`` or ``vdesk --help``; a name asked for costs its module's
import once, then a plain attribute read.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_face(namespace: dict[str, Any], homes: Mapping[str, str],
              names: Iterable[str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the module whose globals are ``namespace``:
    ``homes`` maps each name to the module it comes from; ``names`` are its ``__all__``."""
    package = namespace["__name__"]
    listed = set(names)

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value  # found once; later lookups are plain attribute reads
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | listed)

    return __getattr__, __dir__

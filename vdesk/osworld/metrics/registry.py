"""The table of metrics by OSWorld name, filled by each family module's ``@metric`` decorator."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from vdesk.errors import UnsupportedMetric

Score = float
MetricFunction = Callable[..., Score]   # (result, expected, **options) -> score in [0, 1]

_TABLE: dict[str, Metric] = {}


@dataclass(frozen=True)
class Metric:
    """One metric: its OSWorld name, the function, and the options it understands."""

    name: str
    function: MetricFunction
    options: frozenset[str]
    check_extra: Callable[[Mapping[str, Any]], None] | None = None  # deeper checks (compare_table's rules)
    comments: bool = False  # keys starting with "_" are the task's comments (the reference never reads them)

    def check_options(self, options: Mapping[str, Any] | None) -> None:
        """Raise :class:`UnsupportedMetric` naming the first option this metric does not implement,
        so a task using it is skipped with that reason before it runs."""
        unknown = sorted(key for key in set(options or {}) - self.options
                         if not (self.comments and key.startswith("_")))
        if unknown:
            raise UnsupportedMetric(f"metric {self.name!r}: option {unknown[0]!r} is not supported "
                                    f"(supported: {', '.join(sorted(self.options)) or 'none'})")
        if self.check_extra is not None:
            self.check_extra(options or {})

    def __call__(self, result: Any, expected: Any = None, **options: Any) -> Score:
        self.check_options(options)
        return float(self.function(result, expected, **options))


def metric(name: str, options: Iterable[str] = (), check: Callable[[Mapping[str, Any]], None] | None = None,
           comments: bool = False) -> Callable[[MetricFunction], MetricFunction]:
    """Register the decorated function as OSWorld's metric ``name``. ``comments``: the reference
    reads only the option keys it knows, so a task's ``_note``-like keys are accepted and unused."""
    def register(function: MetricFunction) -> MetricFunction:
        if name in _TABLE:
            raise RuntimeError(f"metric {name!r} registered twice")
        _TABLE[name] = Metric(name, function, frozenset(options), check, comments)
        return function
    return register


def registered() -> Mapping[str, Metric]:
    return _TABLE

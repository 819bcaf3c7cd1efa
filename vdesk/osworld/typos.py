"""Names in an OSWorld task file that neither vdesk nor OSWorld knows: typos, never skip reasons.

A task whose metric, getter, option or step vdesk does not run but OSWorld does is skipped with
that reason (:mod:`vdesk.osworld.evaluator`, :mod:`vdesk.osworld.loader`). A name neither knows
(``lauch``, ``check_include_exlude``, ``vm_comand_line``) cannot be OSWorld's task as written:
skipping it would let a run pass by mistake, so :func:`typos` names each one, where it is and
the closest known name, and the loader refuses the file.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from vdesk.harness.tasks import did_you_mean
from vdesk.osworld import getters, metrics
from vdesk.osworld.format import EvaluatorSpec, OSWorldTask, StepSpec
from vdesk.osworld.steps import OSWORLD_ONLY as OSWORLD_STEPS
from vdesk.osworld.steps import STEPS


def typos(file: OSWorldTask) -> list[str]:
    """Every unknown step, metric, getter and option of ``file``, each as ``where: what (did you mean …?)``."""
    found = _steps("config", file.config) + _steps("evaluator.postconfig", file.evaluator.postconfig)
    evaluator = file.evaluator
    listed = isinstance(evaluator.func, list)
    for index, (name, result, expected, options) in enumerate(evaluator.metrics()):
        at = f"[{index}]" if listed else ""
        if name not in metrics.known():
            found.append(f"evaluator.func{at}: unknown metric {name!r}{_hint(name, metrics.known())}")
        for key, spec in (("result", result), ("expected", expected)):
            if spec is not None and spec.type not in getters.known():
                where = f"evaluator.{key}{at if isinstance(getattr(evaluator, key), list) else ''}.type"
                found.append(f"{where}: unknown getter {spec.type!r}{_hint(spec.type, getters.known())}")
        where = f"evaluator.options{at if isinstance(evaluator.options, list) else ''}"
        found += [f"{where}.{key}: unknown option of {name}"
                  + (_hint(key, sorted(allowed)) if allowed else " (it takes none)")
                  for key, allowed in _unknown_options(name, options)]
    return found


def _steps(where: str, steps: Iterable[StepSpec]) -> list[str]:
    known = sorted(set(STEPS) | OSWORLD_STEPS)
    return [f"{where}[{index}].type: unknown step {step.type!r}{_hint(step.type, known)}"
            for index, step in enumerate(steps) if step.type not in known]


def _unknown_options(name: str, options: dict[str, object]) -> list[tuple[str, frozenset[str]]]:
    """Each option key neither vdesk's metric ``name`` nor OSWorld's takes, with those it takes.
    A metric vdesk lacks is skipped whatever its options are."""
    metric = metrics.registered().get(name)
    if metric is None:
        return []
    allowed = metric.options | metrics.OSWORLD_OPTIONS.get(name, frozenset())
    return [(key, allowed) for key in options
            if key not in allowed and not (metric.comments and key.startswith("_"))]


def _hint(name: str, known: Iterable[str]) -> str:
    return did_you_mean(name, sorted(known), listed=False)



KEY_CUTOFF = 0.8  # a key this close to a field's name is that field misspelt (OSWorld's files hold other keys too)


def misspelt_keys(data: Any) -> list[str]:
    """Each key of a task file's object, or of its evaluator, that is a near miss of a field's
    name (``evalutor``, ``confg``, ``optoins``): OSWorld's files carry keys of their own, which
    are kept, but a near miss would leave the field it meant at its default."""
    if not isinstance(data, dict):
        return []
    found = _near_misses("", data, OSWorldTask.model_fields)
    if isinstance(data.get("evaluator"), dict):
        found += _near_misses("evaluator.", data["evaluator"], EvaluatorSpec.model_fields)
    return found


def near_field(key: str, fields: Iterable[str]) -> str | None:
    """The field ``key`` misspells, if any."""
    close = difflib.get_close_matches(key, list(fields), n=1, cutoff=KEY_CUTOFF)
    return close[0] if close else None


def _near_misses(where: str, data: dict[Any, Any], fields: Iterable[str]) -> list[str]:
    fields = list(fields)
    return [f"{where}{key}: unknown key (did you mean {field!r}?)" for key in data
            if isinstance(key, str) and key not in fields and (field := near_field(key, fields)) is not None]

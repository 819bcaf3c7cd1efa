"""OSWorld's evaluator, scored as the reference scores it.

1. The ``postconfig`` steps run first (saving documents, closing programs), and what they
   started is waited for until it shows its windows and settles (:mod:`vdesk.started`), as the
   first frame of a task is; what had not settled within the bound is in the detail's notes.
2. ``infeasible`` (the whole ``func``, a string): 1 when the agent's last action was FAIL, else
   0. Any other task: 0 when the agent's last action was FAIL. Inside a list of metrics
   ``infeasible`` is no metric: the reference calls it with a result and raises, so vdesk skips
   such a task for an unsupported metric.
3. Each metric gets its ``result`` getter's value, its ``expected`` getter's value (when it
   has one) and its ``options``. A ``result`` file that is not there (``FileNotFoundError``)
   scores 0.
4. ``conj`` ``and`` (the default): 0 at the first metric scoring 0, else the mean; ``or``: 1 at
   the first metric scoring 1, else the highest score.

:func:`unsupported_all` names every metric, option and getter of a task vdesk does not
implement (:func:`unsupported` the first): the task is then skipped with those reasons before
any desktop starts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vdesk.errors import InvalidArgument, UnsupportedGetter, UnsupportedMetric, VdeskError
from vdesk.osworld.format import EvaluatorSpec, GetterSpec, Skip, SkipKind
from vdesk.osworld.getters import check_relative_time, getter
# The module, not its names: the metrics read documents through vdesk.harness, whose package
# imports the environment, which imports this; names are looked up when a task is judged.
from vdesk.osworld import metrics
from vdesk.osworld.steps import Context, run_steps
from vdesk.started import PROBE_TIMEOUT, START_TIMEOUT, snapshot, wait_started

INFEASIBLE = "infeasible"


@dataclass(frozen=True)
class Evaluation:
    """A score in [0, 1] and one line saying how it came."""

    score: float
    detail: str


def unsupported(evaluator: EvaluatorSpec) -> str | None:
    """Why vdesk cannot judge this evaluator (the first metric, option or getter it lacks), or None."""
    found = unsupported_all(evaluator)
    return found[0].reason if found else None


def unsupported_all(evaluator: EvaluatorSpec) -> list[Skip]:
    """Every metric, option and getter of this evaluator vdesk lacks, each once, in order."""
    found: list[Skip] = []
    if evaluator.func == INFEASIBLE:
        return found
    for name, result, expected, options in evaluator.metrics():
        lacking = _lacking("metric", lambda: metrics.lookup(name))
        # A metric vdesk lacks has no options to check.
        found += lacking or _lacking("option", lambda: metrics.lookup(name).check_options(options))
        for spec in (result, expected):
            if spec is not None:
                found += _lacking("getter", lambda: _check_getter(spec))
    return list(dict.fromkeys(found))


def _check_getter(spec: GetterSpec) -> None:
    getter(spec.type)
    if spec.type == "rule_relativeTime":
        check_relative_time(spec.settings)


def _lacking(kind: SkipKind, check: Callable[[], object]) -> list[Skip]:
    """The reason ``check`` gives for what vdesk lacks, as a :class:`Skip` of ``kind``, or none."""
    try:
        check()
    except (UnsupportedMetric, UnsupportedGetter) as error:
        return [Skip(kind=kind, reason=str(error))]
    return []


def evaluate(context: Context, agent_failed: bool) -> Evaluation:
    """Run the postconfig steps, then score the task (see the module's docstring)."""
    evaluator = context.spec.file.evaluator
    if evaluator.postconfig:
        before = context.call(snapshot, timeout=PROBE_TIMEOUT + 10)
        run_steps(context, evaluator.postconfig, "postconfig")
        started = context.call(wait_started, before, START_TIMEOUT, timeout=START_TIMEOUT + PROBE_TIMEOUT + 10)
        context.notes.extend(started.notes)
    entries = evaluator.metrics()
    if evaluator.func == INFEASIBLE:
        return Evaluation(1.0 if agent_failed else 0.0,
                          "infeasible: the agent said FAIL" if agent_failed else "infeasible, but the agent did not say FAIL")
    if agent_failed:
        return Evaluation(0.0, "the agent said FAIL on a feasible task")
    scores: list[float] = []
    parts: list[str] = []
    for name, result, expected, options in entries:
        try:
            got = _get(context, result)
        except FileNotFoundError as error:
            return Evaluation(0.0, _line(parts + [f"{name}: result file missing ({error})"], context))
        wanted = _get(context, expected)
        score = metrics.lookup(name)(got, wanted, **options) if expected is not None else metrics.lookup(name)(got, **options)
        scores.append(score)
        parts.append(f"{name}={score:g}")
        if evaluator.conj == "and" and score == 0:
            return Evaluation(0.0, _line(parts, context))
        if evaluator.conj == "or" and score == 1:
            return Evaluation(1.0, _line(parts, context))
    total = (sum(scores) / len(scores) if evaluator.conj == "and" else max(scores)) if scores else 0.0
    return Evaluation(total, _line(parts, context))


def _get(context: Context, spec: GetterSpec | None) -> Any:
    if spec is None:
        return None
    try:
        return getter(spec.type)(context, spec.settings)
    except KeyError as error:
        raise InvalidArgument(f"the {spec.type} getter needs the key {error}") from None


def _line(parts: list[str], context: Context) -> str:
    notes = f" (notes: {'; '.join(context.notes)})" if context.notes else ""
    return ", ".join(parts) + notes


def safe_evaluate(context: Context, agent_failed: bool) -> Evaluation:
    """:func:`evaluate`, with a step or getter that failed scoring 0 and saying why."""
    try:
        return evaluate(context, agent_failed)
    except (VdeskError, OSError, ValueError, TypeError) as error:
        return Evaluation(0.0, f"could not evaluate: {type(error).__name__}: {error}")

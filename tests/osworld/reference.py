"""OSWorld's own metrics as a test oracle: a case scored by the reference implementation itself.

The reference (``desktop_env.evaluators.metrics`` of the pinned ``desktop-env`` package) lives in
``.venv-osworld`` (`make osworld-venv`), whose pins clash with vdesk's, so it runs in a child
process of that interpreter, which scores batches of cases (importing the reference costs
seconds):

    cases = [Case("exact_match", "a", {"expected": "a"}), ...]
    assert vdesk_scores(cases) == reference_scores(cases)

The child is started at the first batch and kept until the test process ends.

A case's ``result`` / ``expected`` are what the getters would hand the metric: JSON values, or
paths of files the test wrote (under ``tmp_path``, readable by both).
"""

from __future__ import annotations

import atexit
import json
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
OSWORLD_PYTHON = REPO / ".venv-osworld" / "bin" / "python"

# Runs in .venv-osworld: reads one batch of cases a line (JSON) on stdin and answers each with one
# line of scores (or errors). What the reference prints goes to stderr, never into the answers.
_CHILD = r"""
import json, sys, math, logging, os
answers = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
logging.disable(logging.CRITICAL)
from desktop_env.evaluators import metrics
for line in sys.stdin:
    out = []
    for case in json.loads(line):
        try:
            score = getattr(metrics, case["metric"])(case["result"], case["expected"], **case["options"]) \
                if case["expected"] is not None or case["pass_expected"] else \
                getattr(metrics, case["metric"])(case["result"], **case["options"])
            score = float(score)
            out.append({"score": None if math.isnan(score) else score})
        except Exception as error:  # the reference raising is a verdict too: the runner scores it 0
            out.append({"error": f"{type(error).__name__}: {error}"[:300]})
    answers.write(json.dumps(out) + "\n")
    answers.flush()
"""


class _Oracle:
    """The reference's child, started at the first batch and kept for the test process: importing
    its metrics costs seconds of CPU, once instead of once a batch."""

    def __init__(self) -> None:
        self._child: subprocess.Popen[str] | None = None
        self._errors = tempfile.TemporaryFile("w+")

    def scores(self, payload: str, timeout: float) -> list[dict[str, Any]]:
        child = self._start()
        timer = threading.Timer(timeout, child.kill)  # a hung metric must not hang the suite
        timer.start()
        try:
            assert child.stdin is not None and child.stdout is not None
            child.stdin.write(payload + "\n")
            child.stdin.flush()
            answer = child.stdout.readline()
        except BrokenPipeError:
            answer = ""
        finally:
            timer.cancel()
        if not answer:
            self._child = None
            self._errors.seek(0)
            raise AssertionError(f"the reference's child ended: {self._errors.read()[-2000:]}")
        return json.loads(answer)

    def _start(self) -> subprocess.Popen[str]:
        if self._child is None or self._child.poll() is not None:
            self._child = subprocess.Popen([str(reference_python()), "-c", _CHILD], stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=self._errors, text=True, cwd=REPO)
            atexit.register(self._child.kill)
        return self._child


_ORACLE = _Oracle()


@dataclass(frozen=True)
class Case:
    """One input to one metric: ``metric(result, expected, **options)``."""

    metric: str
    result: Any
    expected: Any = None
    options: dict[str, Any] = field(default_factory=dict)
    pass_expected: bool = True   # False: the metric takes no expected argument (``infeasible``)
    label: str = ""

    def __str__(self) -> str:
        return f"{self.metric}[{self.label or repr(self.result)[:40]}]"


def reference_python() -> Path:
    if not OSWORLD_PYTHON.is_file():
        pytest.fail(f"{OSWORLD_PYTHON} is missing: `make osworld-venv` builds it (`make test` does)")
    return OSWORLD_PYTHON


def reference_scores(cases: list[Case], timeout: float = 600) -> list[float]:
    """Each case's score by OSWorld's own code; a case it raises on scores 0, as its runner does."""
    return [0.0 if verdict.score is None else verdict.score for verdict in reference_verdicts(cases, timeout)]


def vdesk_scores(cases: list[Case]) -> list[float]:
    """Each case's score by vdesk's metric of that name; a metric raising on a bad file scores 0."""
    from vdesk.osworld.metrics import lookup
    scores = []
    for case in cases:
        metric = lookup(case.metric)
        try:
            scores.append(metric(case.result, case.expected, **case.options) if case.pass_expected
                          else metric(case.result, **case.options))
        except (OSError, ValueError):
            scores.append(0.0)
    return scores


def assert_same_verdicts(cases: list[Case]) -> None:
    """Every case scored the same by both, to 1e-6; the failure lists every case that differs."""
    ours, theirs = vdesk_scores(cases), reference_scores(cases)
    differ = [f"{case}: vdesk {a!r}, reference {b!r}" for case, a, b in zip(cases, ours, theirs)
              if abs(a - b) > 1e-6]
    assert not differ, "verdicts differ from OSWorld's own code:\n" + "\n".join(differ)


@dataclass(frozen=True)
class Verdict:
    """What one side gave for a case: a score, or the text of the error it raised (OSWorld's
    harness records an error there, not a score)."""

    score: float | None = None
    error: str | None = None

    def agrees(self, other: Verdict) -> bool:
        if self.score is None or other.score is None:
            return self.score is None and other.score is None
        return abs(self.score - other.score) <= 1e-6

    def __str__(self) -> str:
        return f"error ({self.error})" if self.error is not None else repr(self.score)


def reference_verdicts(cases: list[Case], timeout: float = 600) -> list[Verdict]:
    """Each case's verdict by OSWorld's own code: its score (None for NaN), or the error it raised."""
    payload = json.dumps([{"metric": c.metric, "result": c.result, "expected": c.expected,
                           "options": c.options, "pass_expected": c.pass_expected} for c in cases])
    return [Verdict(error=a["error"]) if "error" in a else Verdict(score=a["score"])
            for a in _ORACLE.scores(payload, timeout)]


def vdesk_verdicts(cases: list[Case]) -> list[Verdict]:
    """Each case's verdict by vdesk's metric: its score, or the error it raised (those
    :func:`vdesk.osworld.evaluator.safe_evaluate` reports instead of a score)."""
    from vdesk.errors import VdeskError
    from vdesk.osworld.metrics import lookup
    verdicts = []
    for case in cases:
        metric = lookup(case.metric)
        try:
            score = metric(case.result, case.expected, **case.options) if case.pass_expected \
                else metric(case.result, **case.options)
            verdicts.append(Verdict(score=score))
        except (VdeskError, OSError, ValueError, TypeError) as error:
            verdicts.append(Verdict(error=f"{type(error).__name__}: {error}"[:300]))
    return verdicts


def assert_same_outcomes(cases: list[Case]) -> list[tuple[Case, Verdict, Verdict]]:
    """Every case given the same verdict by both: the same score, or an error on both sides;
    the failure lists every case that differs, with both sides' error texts. Returns each case
    with vdesk's and the reference's verdicts, the errors' texts kept."""
    both = list(zip(cases, vdesk_verdicts(cases), reference_verdicts(cases)))
    differ = [f"{case}: vdesk {ours}, reference {theirs}" for case, ours, theirs in both if not ours.agrees(theirs)]
    assert not differ, f"{len(differ)} of {len(cases)} verdicts differ from OSWorld's own code:\n" + "\n".join(differ)
    return both


def write_file(path: Path, data: str | bytes) -> str:
    """A case's input file: ``data`` (text as UTF-8) at ``path``; its path as the metrics take it."""
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return str(path)

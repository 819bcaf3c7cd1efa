"""OSWorld's own metrics as a test oracle: a case scored by the reference implementation itself.

The reference (``desktop_env.evaluators.metrics`` of the pinned ``desktop-env`` package) lives in
``.venv-osworld`` (`make osworld-venv`), whose pins clash with vdesk's, so it runs in a child
process of that interpreter. One child scores a whole batch of cases, since importing the
reference costs seconds:

    cases = [Case("exact_match", "a", {"expected": "a"}), ...]
    assert vdesk_scores(cases) == reference_scores(cases)

A case's ``result`` / ``expected`` are what the getters would hand the metric: JSON values, or
paths of files the test wrote (under ``tmp_path``, readable by both).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
OSWORLD_PYTHON = REPO / ".venv-osworld" / "bin" / "python"

# Runs in .venv-osworld: reads the cases as JSON on stdin, prints one score (or error) per case.
_CHILD = r"""
import json, sys, math, logging
logging.disable(logging.CRITICAL)
from desktop_env.evaluators import metrics
out = []
for case in json.load(sys.stdin):
    try:
        score = getattr(metrics, case["metric"])(case["result"], case["expected"], **case["options"]) \
            if case["expected"] is not None or case["pass_expected"] else \
            getattr(metrics, case["metric"])(case["result"], **case["options"])
        score = float(score)
        out.append({"score": None if math.isnan(score) else score})
    except Exception as error:  # the reference raising is a verdict too: the runner scores it 0
        out.append({"error": f"{type(error).__name__}: {error}"[:300]})
print(json.dumps(out))
"""


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
    payload = json.dumps([{"metric": c.metric, "result": c.result, "expected": c.expected,
                           "options": c.options, "pass_expected": c.pass_expected} for c in cases])
    done = subprocess.run([str(reference_python()), "-c", _CHILD], input=payload, capture_output=True,
                          text=True, timeout=timeout, cwd=REPO)
    if done.returncode != 0:
        raise AssertionError(f"the reference's child failed: {done.stderr[-2000:]}")
    answers = json.loads(done.stdout.strip().splitlines()[-1])
    return [0.0 if "error" in a or a["score"] is None else a["score"] for a in answers]


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

"""The episode engine: a batch of actions played against an episode's limits, and what ends the
episode and what it earns, decided once for the episode loop (:mod:`vdesk.harness.loop`) and
its Gymnasium face (:meth:`vdesk.harness.env.DesktopEnv.step`).

    episode = Episode(execute, EpisodeLimits(max_steps=15, time_limit=300))
    played = episode.play(actions, cancel)     # runs them as one batch, one step
    if played.status is not None: ...          # the episode ended with this step

How an episode ends (:class:`Status`): an action ``finished`` (OSWorld's DONE, and FAIL, which
is ``finished`` with content ``"FAIL"``: :attr:`Played.failed`) or ``call_user`` ends it; after
a step, the step cap (``max_steps``) or the time limit (``timeout``, counted from the end of
setup) cuts it short; ``cancel``, or the time running out, stops it between two bursts of a
step. A step's actions, up to the first that finishes or calls the user, go to the desktop as
one batch (:meth:`vdesk.input.DesktopInput.execute`: validated once, adjacent input chained into
one burst); they run in order and stop at the first that fails (the agent hears of it in its
next observation). Each action that ran has its own result (:func:`each_action`).

What it earns: its checks' lowest score (:func:`reward`): an OSWorld evaluator's score may lie
between 0 and 1, every other check scores 1 or 0. It succeeded when it has checks and every
one passed (a reward of 1). ``call_user`` pauses an episode and is not judged.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum

from vdesk.actions import ActionType, BaseAction, Cancel, ExecuteResult


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check (:mod:`vdesk.harness.checks`, or a task extension's evaluator):
    what the engine judges an episode by."""

    kind: str
    passed: bool
    detail: str
    score: float | None = None  # an evaluator's score in [0, 1] (OSWorld's)


class Status(str, Enum):
    FINISHED = "finished"
    NO_ACTIONS = "no_actions"
    MAX_STEPS = "max_steps"
    TIMEOUT = "timeout"
    CALL_USER = "call_user"
    CANCELLED = "cancelled"
    ERROR = "error"
    SKIPPED = "skipped"  # never run: the task needs what vdesk cannot offer (the reason in ``error``)


JUDGED = {Status.FINISHED, Status.NO_ACTIONS, Status.MAX_STEPS, Status.TIMEOUT}  # the checks run after these
TRUNCATED = {Status.MAX_STEPS, Status.TIMEOUT}


@dataclass
class EpisodeLimits:
    """An episode's step cap and time limit, the steps taken and when its clock started."""

    max_steps: int
    time_limit: float
    steps: int = 0
    started: float = field(default_factory=time.monotonic)

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def timed_out(self) -> bool:
        return self.elapsed() > self.time_limit

    def reached(self) -> Status | None:
        """``max_steps`` or ``timeout`` once the episode is past its cap or its time, else None."""
        if self.steps >= self.max_steps:
            return Status.MAX_STEPS
        return Status.TIMEOUT if self.timed_out() else None


@dataclass(frozen=True)
class Played:
    """One step: the results of the actions run, and how the episode ended with it (None: it goes on)."""

    results: list[ExecuteResult]
    status: Status | None = None
    request: str | None = None  # call_user's question
    failed: bool = False        # the last action run was FAIL

    @property
    def terminated(self) -> bool:
        return self.status in (Status.FINISHED, Status.CALL_USER)

    @property
    def truncated(self) -> bool:
        return self.status in TRUNCATED


# Runs a step's batch, stopping between two bursts once the stop is set; a result per action
# that ran, the failing one last (it never raises).
Execute = Callable[[Sequence[BaseAction], Cancel], list[ExecuteResult]]
ENDING = (ActionType.FINISHED, ActionType.CALL_USER)


@dataclass(frozen=True)
class Stop:
    """What stops a step's batch between two bursts: the caller's cancel, or the episode's time
    running out."""

    cancel: threading.Event | None
    limits: EpisodeLimits

    def is_set(self) -> bool:
        return (self.cancel is not None and self.cancel.is_set()) or self.limits.timed_out()


class Episode:
    """The engine of one episode: plays each step's actions through ``execute`` as one batch
    and keeps the limits."""

    def __init__(self, execute: Execute, limits: EpisodeLimits) -> None:
        self.execute, self.limits = execute, limits
        self.failed = False  # the last action run was FAIL, what an OSWorld evaluator reads

    def interrupted(self, cancel: threading.Event | None = None) -> Status | None:
        """``cancelled`` once ``cancel`` is set, ``timeout`` once the time is up, else None."""
        if cancel is not None and cancel.is_set():
            return Status.CANCELLED
        return Status.TIMEOUT if self.limits.timed_out() else None

    def play(self, actions: Sequence[BaseAction], cancel: threading.Event | None = None) -> Played:
        """Run ``actions`` as one step (see the module's docstring)."""
        batch = through_ending(actions)
        status = self.interrupted(cancel)
        results = self.execute(batch, Stop(cancel, self.limits)) if status is None and batch else []
        request: str | None = None
        for result in results:
            self.failed = said_fail(result)
            if result.finished:
                status = Status.FINISHED
            elif result.call_user is not None:
                status, request = Status.CALL_USER, result.call_user
        if status is None and len(results) < len(batch) and all(r.status == "success" for r in results):
            status = self.interrupted(cancel)  # stopped between two bursts
        self.limits.steps += 1
        return Played(results, status or self.limits.reached(), request, self.failed)

    def failed_step(self, result: ExecuteResult) -> Played:
        """A step whose actions could not be read: nothing ran, and it counts."""
        self.limits.steps += 1
        return Played([result], self.limits.reached())


def through_ending(actions: Sequence[BaseAction]) -> list[BaseAction]:
    """``actions`` up to the first that finishes or calls the user: what comes after never runs."""
    ending = next((i for i, action in enumerate(actions) if action.type in ENDING), len(actions) - 1)
    return list(actions[:ending + 1])


def each_action(result: ExecuteResult, batch: Sequence[BaseAction], stopped: bool) -> list[ExecuteResult]:
    """A batch's result as a result per action that ran (each action's time is from the one
    before it completed; chained actions complete together), and the one that failed, if one
    did; a batch ``stopped`` between two bursts has no failed action."""
    results, before = [], 0.0
    for action, done in zip(batch, result.completed_ms):
        ending = action.type in ENDING
        results.append(ExecuteResult(
            executed=1, completed_ms=[done - before], elapsed_ms=done - before,
            finished=result.finished and ending, finished_content=result.finished_content if ending else None,
            call_user=result.call_user if ending else None))
        before = done
    if result.status != "success" and not (stopped and len(results) < len(batch)):
        results.append(ExecuteResult(status="failed", error_message=result.error_message,
                                     elapsed_ms=max(result.elapsed_ms - before, 0.0)))
    return results


def said_fail(result: ExecuteResult) -> bool:
    """Whether ``result`` is OSWorld's FAIL: ``finished`` with the content "FAIL" (any case)."""
    return result.finished and (result.finished_content or "").upper() == "FAIL"


def reward(checks: Sequence[CheckResult]) -> float:
    """The lowest score of ``checks`` (a check without a score: 1 or 0); 0 with none."""
    return min((c.score if c.score is not None else float(c.passed) for c in checks), default=0.0)


def succeeded(checks: Sequence[CheckResult]) -> bool:
    """Whether an episode judged by ``checks`` succeeded: it had some, and every one passed."""
    return bool(checks) and all(c.passed for c in checks)

"""The episode loop: observe, ask the agent, execute, feed the results back, until it ends.

    result = run_episode(ScriptedAgent(), task, out=Path("runs/one"))
    print(result.status, result.success)

How an episode ends (:class:`~vdesk.harness.episode.Status`; the episode engine,
:mod:`vdesk.harness.episode`, decides it for this loop and for the Gymnasium environment alike):

* ``finished`` — the agent sent ``finished``; ``no_actions`` — it replied with nothing;
* ``max_steps`` — the step cap was reached; ``timeout`` — the time limit ran out;
* (the checks run after each of those four and decide ``success``)
* ``call_user`` — the agent asked for a person: the episode is *paused* with its desktop up;
  ``result.paused.resume("answer")`` goes on, ``result.paused.close()`` gives up;
* ``cancelled`` — the ``cancel`` event was set (checked between actions);
* ``error`` — setup, the agent or the desktop failed; ``result.error`` says how.

The desktop is always released when the episode ends, however it ends, except while paused.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from vdesk.actions import ExecuteResult
from vdesk.errors import VdeskError
from vdesk.harness.agents.base import Agent, AgentReply
from vdesk.harness.episode import CheckResult
from vdesk.harness.env import DesktopEnv, Observation, Opening
from vdesk.harness.episode import JUDGED, Status, succeeded
from vdesk.harness.record import CheckRecord, Outcome, Recorder, RunInfo, StepRecord, frame_hash
from vdesk.harness.tasks import Task
from vdesk.images import DEFAULT as DEFAULT_IMAGE


@dataclass
class EpisodeResult:
    """How an episode went. ``paused`` is set (and owns the desktop) only after ``call_user``."""

    outcome: Outcome
    run_dir: Path | None = None
    paused: PausedEpisode | None = None

    @property
    def status(self) -> Status:
        return Status(self.outcome.status)

    @property
    def success(self) -> bool:
        return self.outcome.success

    @property
    def request(self) -> str | None:
        return self.outcome.request


@dataclass
class _Clock:
    """Where an episode's time went: asking the agent and executing its actions."""

    agent_s: float = 0.0
    execute_s: float = 0.0


class _Episode:
    """The state of one episode between steps; :meth:`drive` runs it until it ends or pauses.
    Its steps are played by the environment's episode engine (``env.play``)."""

    def __init__(self, agent: Agent, task: Task, env: DesktopEnv, recorder: Recorder | None,
                 cancel: threading.Event) -> None:
        self.agent, self.task, self.env, self.recorder, self.cancel = agent, task, env, recorder, cancel
        self.clock = _Clock()
        self.opened: dict[str, float | str] = {}  # how its desktop came to be (Outcome's setup_s, fork_s, forked_from, setup_note)

    def drive(self, observation: Observation) -> tuple[Status, str | None]:
        """Step until the episode ends; returns the status and call_user's request."""
        engine = self.env.episode
        while (stop := engine.interrupted(self.cancel)) is None:
            reply, agent_ms = self._ask(observation)
            if engine.interrupted() is Status.TIMEOUT or not reply.actions:
                self._record(observation, reply, [], agent_ms)  # what it said, though nothing ran
                return (Status.NO_ACTIONS if not reply.actions else Status.TIMEOUT), None
            played = self.env.play(reply.actions, self.cancel)
            self.clock.execute_s += sum(r.elapsed_ms for r in played.results) / 1000
            self._record(observation, reply, played.results, agent_ms)
            if played.status is not None:
                return played.status, played.request
            observation = self.env.observe(played.results)
        return stop, None

    def _ask(self, observation: Observation) -> tuple[AgentReply, float]:
        """The agent's reply and how long it took, in milliseconds."""
        started = time.monotonic()
        try:
            return self.agent.act(observation), (time.monotonic() - started) * 1000
        finally:
            self.clock.agent_s += time.monotonic() - started

    def _record(self, observation: Observation, reply: AgentReply, results: list[ExecuteResult],
                agent_ms: float) -> None:
        if self.recorder is None:
            return
        name, digest = self.recorder.frame(observation.step, observation.frame)
        self.recorder.step(StepRecord(
            step=observation.step, frame=name, frame_hash=digest, actions=reply.actions, results=results,
            raw_reply=reply.raw, thought=reply.thought, user_reply=observation.user_reply, observed=observation.text,
            agent_ms=round(agent_ms, 3), execute_ms=round(sum(r.elapsed_ms for r in results), 3),
            at_s=round(self.env.episode.limits.elapsed(), 3)))

    def outcome(self, status: Status, request: str | None = None, error: str | None = None) -> Outcome:
        """Judge the episode (for the statuses that are judged) and write its outcome."""
        checks: list[CheckResult] = []
        final: Image.Image | None = None
        if status in JUDGED or status is Status.CALL_USER:
            final = self.env.final_frame()
        engine = self.env.episode
        if status in JUDGED:
            checks = self.env.evaluate(final, agent_failed=engine.failed)
        outcome = Outcome(
            task_id=self.task.id, agent=self.agent.name, status=status.value,
            success=status in JUDGED and succeeded(checks),
            steps=engine.limits.steps, elapsed_s=round(engine.limits.elapsed(), 3), agent_s=round(self.clock.agent_s, 3),
            execute_s=round(self.clock.execute_s, 3), request=request, error=error,
            checks=[CheckRecord(kind=c.kind, passed=c.passed, detail=c.detail, score=c.score) for c in checks],
            **self.opened)
        if self.recorder is not None:
            return self.recorder.finish(outcome, final)
        return outcome.model_copy(update={"final_hash": frame_hash(final)}) if final is not None else outcome


@dataclass
class PausedEpisode:
    """An episode stopped by ``call_user``: its desktop stays up until resumed or closed."""

    _episode: _Episode
    request: str
    run_dir: Path | None

    @property
    def env(self) -> DesktopEnv:
        return self._episode.env

    def resume(self, user_reply: str | None = None, *, cancel: threading.Event | None = None) -> EpisodeResult:
        """Go on from the next step; the agent sees ``user_reply`` in its next observation."""
        episode = self._episode
        if cancel is not None:
            episode.cancel = cancel
        return _finish(episode, self.run_dir, lambda: episode.drive(episode.env.observe(user_reply=user_reply)))

    def close(self) -> None:
        """Give up on the episode and release its desktop."""
        self._episode.env.close()
        self._episode.agent.close()


def run_episode(agent: Agent, task: Task, *, max_steps: int | None = None, timeout: float | None = None,
                cancel: threading.Event | None = None, out: Path | None = None,
                image: str = DEFAULT_IMAGE, env: DesktopEnv | None = None) -> EpisodeResult:
    """Run one episode of ``task`` with ``agent`` on a fresh desktop.

    ``max_steps`` and ``timeout`` (seconds, counted from the end of setup) default to the
    task's own. With ``out`` the run folder is written there. The desktop is released when the
    episode ends (see :class:`Status`), including on an exception or KeyboardInterrupt.
    """
    env = env or DesktopEnv(image=image)
    cancel = cancel or threading.Event()
    recorder: Recorder | None = None
    episode: _Episode | None = None
    settings = task.desktop
    try:
        agent.reset(task)
        screen = settings.screen
        space = agent.image_space(screen) or screen.image()
        if out is not None:
            info = RunInfo(task_id=task.id, agent=agent.name, image_size=space.size, screen_size=screen.size,
                           scale=screen.scale)
            recorder = Recorder(out, task, info)
        episode = _Episode(agent, task, env, recorder, cancel)
        # The time limit counts from the end of setup: the agent's time, not the setup's.
        observation = env.open(task, image_space=space, max_steps=max_steps or task.max_steps,
                               time_limit=timeout or task.time_limit)
        if env.opening is not None:
            episode.opened = opening_record(env.opening)
    except BaseException as error:
        env.close()
        agent.close()
        if isinstance(error, (VdeskError, OSError)):
            return _failed(agent, task, recorder, out, error)
        raise
    return _finish(episode, out, lambda: episode.drive(observation))


def _finish(episode: _Episode, out: Path | None, drive: Callable[[], tuple[Status, str | None]]) -> EpisodeResult:
    """Drive the episode, write its outcome, and release the desktop unless it paused."""
    paused = False
    try:
        try:
            status, request = drive()
            outcome = episode.outcome(status, request=request)
        except (VdeskError, OSError) as error:
            # outcome(ERROR) does not touch the desktop, which may be what failed.
            return EpisodeResult(episode.outcome(Status.ERROR, error=f"{type(error).__name__}: {error}"), out)
        if status is Status.CALL_USER:
            paused = True
            return EpisodeResult(outcome, out, PausedEpisode(episode, request or "", out))
        return EpisodeResult(outcome, out)
    finally:
        if not paused:
            episode.env.close()
            episode.agent.close()


def opening_record(opening: Opening) -> dict[str, float | str]:
    """An :class:`Opening` as the fields of an :class:`Outcome` (those it has)."""
    fields = {"setup_s": opening.setup_s, "fork_s": opening.fork_s, "forked_from": opening.checkpoint,
              "setup_note": opening.setup_note}
    return {key: value for key, value in fields.items() if value is not None}


def _failed(agent: Agent, task: Task, recorder: Recorder | None, out: Path | None, error: BaseException) -> EpisodeResult:
    outcome = Outcome(task_id=task.id, agent=agent.name, status=Status.ERROR.value, success=False, steps=0,
                      elapsed_s=0.0, error=f"{type(error).__name__}: {error}")
    if recorder is not None:
        outcome = recorder.finish(outcome, None)
    return EpisodeResult(outcome, out)

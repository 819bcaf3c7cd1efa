"""The Gymnasium environment over a desktop, registered as ``vdesk/Desktop-v0``.

    import gymnasium, vdesk.harness.env  # importing the module registers the id

    env = gymnasium.make("vdesk/Desktop-v0", task="examples/suite/terminal-echo.yaml")
    observation, info = env.reset(seed=0)        # or reset(options={"task": ...}) for another task
    action = json.dumps([{"type": "type", "inputs": {"content": "echo hello\\n"}}])
    observation, reward, terminated, truncated, info = env.step(action)
    env.close()                                  # the desktop goes away

Each ``reset`` opens a fresh desktop for the task (releasing the previous one), runs the task's
setup and observes once the programs the setup started show their windows and have settled
(:mod:`vdesk.started`; ``info["setup_note"]`` names what had not within the bound) and the
screen has settled; with ``video`` the screen is recorded into that file until the desktop is
released.

From a checkpoint (``DesktopEnv(checkpoint=...)`` or ``reset(options={"checkpoint": ...})``, a
:class:`~vdesk.forks.Checkpoint` or its name) no setup runs: the checkpoint is the state the
episode starts from. The first such reset starts a fork of it; later ones restore the same
desktop to it in place (a restore, where setup can take tens of seconds), which is the reset an RL
loop wants: whatever the last episode changed is gone. :meth:`DesktopEnv.save_checkpoint`
takes one of the environment's desktop, e.g. right after a reset::

    env.reset()                                   # setup runs once
    start = env.save_checkpoint()
    for episode in range(8):
        env.reset(options={"checkpoint": start})  # back to the state after setup

The desktop may live elsewhere (see
:mod:`vdesk.harness.hosts`): setup, actions, settle waits and checks run next to it through
``DesktopHost.call``; frames travel to this process.

The episode loop (:mod:`vdesk.harness.loop`) drives the same class through its finer steps
(:meth:`DesktopEnv.open`, :meth:`~DesktopEnv.execute`, :meth:`~DesktopEnv.observe`,
:meth:`~DesktopEnv.evaluate`): one environment, two ways in.
"""

from __future__ import annotations

import base64
import string
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, SupportsFloat

import gymnasium
import numpy as np
from gymnasium import spaces
from PIL import Image

from vdesk.accessibility.osworld_xml import linearize
from vdesk.actions import MAX_TYPED_CHARS, BaseAction, Cancel, ExecuteResult, parse_batch
from vdesk.adapters.formats import model_format, parse_payloads
from vdesk.coords import ImageSpace
from vdesk.desktop import Desktop
from vdesk.input import XDOTOOL_TIMEOUT
from vdesk.programs import WM_READY_TIMEOUT
from vdesk.errors import DesktopTimeout, InvalidArgument, ResetNeeded, SetupError, VdeskError
from vdesk.forks import START_TIMEOUT as FORK_TIMEOUT, Checkpoint
from vdesk.harness.checks import argv_of, run_checks
from vdesk.harness.extension import ExtensionSession
from vdesk.harness.episode import JUDGED, CheckResult, Episode, EpisodeLimits, Played, each_action, reward
from vdesk.harness.hosts import DesktopHost, DesktopSource, ForkSource, fresh_desktops, local_forks
from vdesk.harness.desktop_files import pack, unpack_into
from vdesk.harness.tasks import (BrowserStep, RunStep, ServeStep, SetupStep, StartStep, Task,
                                 UploadStep, WaitIdleStep, WaitWindowStep, WriteStep, in_home, load_task, parse_task)
from vdesk.idle import wait_idle
from vdesk.images import DEFAULT as DEFAULT_IMAGE
from vdesk.encoding import encode
from vdesk.integrations.operator import ScreenContext, screen_context
from vdesk.spec import DesktopSpec
from vdesk.started import PROBE_TIMEOUT, START_TIMEOUT, Before, snapshot, wait_started
from vdesk.video import record

ENV_ID = "vdesk/Desktop-v0"
# How long the screen must stay unchanged before a frame counts as settled: short between
# steps (an agent can look again), long before the final frame, whose hash replays compare.
STEP_QUIET = 0.1
FINAL_QUIET = 0.5
SETUP_QUIET = 0.3
SETTLE_TIMEOUT = 10.0
JUDGE_IDLE_QUIET = 1.0      # seconds a task's judge_when_idle program must stay idle
JUDGE_IDLE_TIMEOUT = 60.0   # at most, before it is judged as it is
OBSERVATIONS = ("screenshot", "a11y_tree", "screenshot_a11y_tree", "som")  # OSWorld's names
OBSERVE_TIMEOUT = 30.0  # a frame and a tree
STEP_TIMEOUT = 60.0  # for a setup step that has no timeout of its own (start, write)
# The longest action text the action space holds: a batch typing BaseAction's most characters,
# each escaped as JSON may escape it (\uXXXX is six characters).
MAX_ACTION_CHARS = 6 * MAX_TYPED_CHARS + 10_000
# JSON as json.dumps writes it by default (ensure_ascii): printable ASCII, whatever it types.
ACTION_CHARSET = string.printable
NO_TASK_LIMITS = (15, 300.0)  # max steps, seconds: a task's defaults, for a desktop without one
SERVE_ROOT = "/tmp/vdesk-serve"  # out of the home, where a file manager would show it
# A bound on a checkpoint or a restore through DesktopHost.call: a browser's desktop holds
# hundreds of MB, which can take minutes on a loaded machine.
CHECKPOINT_TIMEOUT = FORK_TIMEOUT + 60.0


@dataclass(frozen=True)
class Opening:
    """How the current episode's desktop came to be, for the results: ``setup_s`` from asking
    for a desktop to the task set up, the programs its setup started settled (see
    :mod:`vdesk.started`) and the screen settled (None when it started from a checkpoint, which
    holds the setup), ``fork_s`` the fork (or the restore in place) of ``checkpoint`` until the
    screen settled; ``setup_note`` what of the setup's programs had not settled within the bound."""

    setup_s: float | None = None
    fork_s: float | None = None
    checkpoint: str | None = None
    setup_note: str | None = None


@dataclass(frozen=True)
class Observation:
    """What an agent sees before each step."""

    frame: Image.Image                     # at the agent's image size
    screen: ScreenContext
    instruction: str
    step: int                              # the step this observation is for, from 1
    results: tuple[ExecuteResult, ...] = ()  # what the previous step's actions did
    user_reply: str | None = None          # a person's answer after call_user
    accessibility_tree: str | None = None  # a11y modes: the linearized tree (OSWorld's table)
    marks: str | None = None               # som: the marks' table; ``frame`` has their boxes drawn
    mark_centres: tuple[tuple[float, float], ...] = ()  # som: mark N's centre at [N - 1], in frame pixels

    @property
    def tags(self) -> dict[str, tuple[float, float]]:
        """OSWorld's set-of-marks names for the marks' centres: ``tag_1``, ``tag_2``, …"""
        return {f"tag_{number}": centre for number, centre in enumerate(self.mark_centres, start=1)}

    @property
    def text(self) -> str | None:
        """What the observation says beside the frame, for a prompt (or None)."""
        if self.marks is not None:
            return f"Numbered elements on the screenshot (act on one with element: N):\n{self.marks}"
        if self.accessibility_tree is not None:
            return f"Accessibility tree of the screen:\n{self.accessibility_tree}"
        return None

    def frame_png(self) -> bytes:
        return encode(self.frame, "png")

    def frame_base64(self) -> str:
        return base64.b64encode(self.frame_png()).decode()

    @property
    def image_space(self) -> ImageSpace:
        return ImageSpace(self.frame.width, self.frame.height)


@dataclass(frozen=True)
class ObservationMode:
    """One key of the Gymnasium observation: its space (for the agent's image size) and its
    value, read from an :class:`Observation`. A new mode (the accessibility tree, text on
    screen) is one entry of :data:`OBSERVATION_MODES`; what it needs gathered from the desktop
    is added to :class:`Observation` by :meth:`DesktopEnv.observe`."""

    space: Callable[[ImageSpace], spaces.Space[Any]]
    value: Callable[[Observation], Any]


def _frame_space(image: ImageSpace) -> spaces.Box:
    return spaces.Box(0, 255, shape=(image.height, image.width, 3), dtype=np.uint8)


def _frame_array(observation: Observation) -> np.ndarray:
    return np.array(observation.frame.convert("RGB"), dtype=np.uint8)  # a new array every time


# A text key's value: any Unicode, but a Gymnasium Text space holds a finite charset, so what
# lies outside printable ASCII is written as Python escapes (\u00e9); cut to MAX_TEXT_CHARS.
MAX_TEXT_CHARS = 200_000


def _text_space(image: ImageSpace) -> spaces.Text:
    return spaces.Text(max_length=MAX_TEXT_CHARS, min_length=0, charset=ACTION_CHARSET)


def _ascii(text: str | None) -> str:
    escaped = (text or "").encode("ascii", "backslashreplace").decode("ascii")
    return "".join(c if c in ACTION_CHARSET else f"\\x{ord(c):02x}" for c in escaped)[:MAX_TEXT_CHARS]


OBSERVATION_MODES: dict[str, ObservationMode] = {
    "screenshot": ObservationMode(_frame_space, _frame_array),
    "a11y_tree": ObservationMode(_text_space, lambda observation: _ascii(observation.accessibility_tree)),
    "marks": ObservationMode(_text_space, lambda observation: _ascii(observation.marks)),
}
# The keys of the Gymnasium observation for each of OSWorld's observation types.
GYM_KEYS = {"screenshot": ("screenshot",), "a11y_tree": ("a11y_tree",),
            "screenshot_a11y_tree": ("screenshot", "a11y_tree"), "som": ("screenshot", "marks")}


class DesktopEnv(gymnasium.Env[dict[str, Any], str]):
    """A desktop prepared for a task, as a Gymnasium environment (``vdesk/Desktop-v0``).

    **Task.** ``task`` (a :class:`Task`, a task file's path, or a task as a mapping) is the
    default; ``reset(options={"task": ...})`` gives another for that episode. Without one the
    desktop is blank, nothing is judged and the reward is always 0.

    **Observation.** ``observation`` is OSWorld's choice of what an agent sees: ``screenshot``,
    ``a11y_tree`` (the linearized accessibility tree), ``screenshot_a11y_tree`` (both) or ``som``
    (the frame with numbered marks drawn, and the marks' table). The Gymnasium observation is a
    :class:`gymnasium.spaces.Dict` with the keys of :data:`GYM_KEYS` for it: ``"screenshot"`` is
    the settled frame as a ``Box`` of uint8, ``(height, width, 3)`` at ``image_size`` (default:
    the task's logical screen, else 1280x800; a screen of another size is scaled to it, and
    points are pixels of it); ``"a11y_tree"`` and ``"marks"`` are ``Text`` (see
    :data:`MAX_TEXT_CHARS`). The instruction, the step and what the last actions did are in ``info``.

    **Action.** ``spaces.Text`` holding one JSON document: a BaseAction object or a list of them
    (``action_format`` names another format of :mod:`vdesk.adapters.formats`, e.g.
    ``"pyautogui"`` or ``"anthropic"``, read from the same text). Why text and not a structured
    space: a BaseAction batch has a variable number of actions whose inputs depend on the type
    and include free text to type; a ``Dict``/``Sequence`` of spaces cannot say that without
    losing what the schema checks, while text carries every format vdesk reads, validated by the
    same parser as everywhere else. Its charset is printable ASCII because ``json.dumps``
    escapes every other character. A list of BaseAction or dicts is accepted too, for Python
    callers. An action that cannot be read runs nothing; the step still counts, and
    ``info["results"]`` says what was wrong.

    **Episode.** Each step is played by the episode engine (:mod:`vdesk.harness.episode`), the
    same one the episode loop drives. ``terminated`` when an action is ``finished`` (OSWorld's
    DONE, and FAIL, which is ``finished`` with content ``"FAIL"``) or ``call_user``;
    ``truncated`` at ``max_steps`` or after ``time_limit`` seconds (default: the task's). When
    the episode ends the task's checks run: the reward is their lowest score (1.0 when all pass,
    0.0 when one fails; an OSWorld evaluator's score may lie between), ``call_user`` is not
    judged, and ``info["checks"]`` has each one. ``render()`` is the last frame
    (``render_mode="rgb_array"``).

    **Checkpoints.** With ``checkpoint`` (or ``reset(options={"checkpoint": ...})``) episodes
    start from it and the task's setup does not run (its checks still judge): the first reset
    forks it (``forks`` says where: this machine's engine by default), later ones restore the
    same desktop to it in place, recording and all. ``info["fork_s"]`` says how long that took.
    """

    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 1}

    def __init__(self, task: Task | str | Path | Mapping[str, Any] | None = None, *,
                 image_size: tuple[int, int] | None = None, render_mode: str | None = None,
                 observation: str = "screenshot", action_format: str = "base",
                 max_steps: int | None = None, time_limit: float | None = None, image: str = DEFAULT_IMAGE,
                 source: DesktopSource | None = None, environment: Mapping[str, str] | None = None,
                 step_quiet: float = STEP_QUIET, final_quiet: float = FINAL_QUIET,
                 video: Path | None = None, checkpoint: Checkpoint | str | None = None,
                 forks: ForkSource | None = None) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise InvalidArgument(f"render_mode {render_mode!r}: use 'rgb_array' or None")
        if observation not in OBSERVATIONS:
            raise InvalidArgument(f"observation {observation!r}: choose one of {', '.join(OBSERVATIONS)}")
        model_format(action_format)  # an unknown name fails here, listing the known ones
        self.default_task = as_task(task)
        self.render_mode = render_mode
        self.observation = observation
        self.observations = GYM_KEYS[observation]
        self.action_format = action_format
        self.max_steps, self.time_limit = max_steps, time_limit
        self.source = source or fresh_desktops(image, environment)
        self.checkpoint = checkpoint
        self.forks = forks or local_forks()
        self.video = video
        self.step_quiet = step_quiet
        self.final_quiet = final_quiet
        settings = self.default_task.desktop if self.default_task else DesktopSpec()
        self.gym_image = ImageSpace(*image_size) if image_size else settings.screen.image()
        self.action_space = spaces.Text(max_length=MAX_ACTION_CHARS, min_length=0, charset=ACTION_CHARSET)
        self.observation_space = self._observation_space(self.gym_image)
        self._opened = ExitStack()  # the desktop and its recording
        self._task_parts = ExitStack()  # what belongs to the task's episode (its extension's session)
        self.opening: Opening | None = None
        self._desktop: DesktopHost | None = None
        self._image: ImageSpace | None = None
        self._task: Task | None = None
        self._extension: ExtensionSession | None = None
        self._step = 0
        self._episode: Episode | None = None
        self._last: Observation | None = None

    # -- the Gymnasium surface ----------------------------------------------------------------
    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """A fresh desktop for the task (``options["task"]``, else the environment's), set up;
        or, from a checkpoint (``options["checkpoint"]``, else the environment's), the desktop
        at it: a fork the first time, the same desktop restored in place after that. The
        desktop needs no seed: its setup is the same every time."""
        super().reset(seed=seed)
        options = options or {}
        task = as_task(options.get("task")) or self.default_task
        observation = self.open(task, image_space=self.gym_image, checkpoint=options.get("checkpoint"))
        info = self._info(observation)
        if self.opening is not None and self.opening.fork_s is not None:
            info["fork_s"] = self.opening.fork_s
        if self.opening is not None and self.opening.setup_note is not None:
            info["setup_note"] = self.opening.setup_note
        return self._gym_observation(observation), info

    def step(self, action: str | Sequence[BaseAction | dict[str, Any]]
             ) -> tuple[dict[str, Any], SupportsFloat, bool, bool, dict[str, Any]]:
        """Play the action batch as one step of the episode (:mod:`vdesk.harness.episode`:
        in order, stopping at the first failure), observe, and judge the episode if it ended."""
        self.desktop  # raises the clear error before reset
        played = self._play_text(action)
        observation = self.observe(played.results)
        info = self._info(observation)
        score = 0.0
        if played.status in JUDGED:
            checks = self.evaluate(self.final_frame(), agent_failed=played.failed)
            score = reward(checks)
            info["checks"] = [{"kind": c.kind, "passed": c.passed, "detail": c.detail} for c in checks]
        return self._gym_observation(observation), score, played.terminated, played.truncated, info

    def render(self) -> np.ndarray | None:  # type: ignore[override]
        """The last frame as an RGB array (``render_mode="rgb_array"``); None otherwise."""
        if self.render_mode != "rgb_array" or self._last is None:
            return None
        return _frame_array(self._last)

    def close(self) -> None:
        """Release the desktop (idempotent)."""
        self._desktop, self._image, self._last, self._osworld, self.opening = None, None, None, None, None
        self._episode = None
        self._task_parts.close()
        self._opened.close()

    def save_checkpoint(self, name: str | None = None) -> Checkpoint:
        """Checkpoint the environment's desktop as it is now (it keeps running), where it lives:
        a start for later resets (``reset(options={"checkpoint": ...})``) or for forks."""
        return self.desktop.call(take_checkpoint, name, timeout=CHECKPOINT_TIMEOUT)

    # -- finer steps, for the episode loop ----------------------------------------------------
    def open(self, task: Task | None, *, image_space: ImageSpace | None = None,
             checkpoint: Checkpoint | str | None = None, max_steps: int | None = None,
             time_limit: float | None = None) -> Observation:
        """A desktop for ``task``, set up, and its first observation; ``image_space`` is the size
        of the frames the agent is shown (default: the logical screen), and what its ``raw``
        points refer to. From ``checkpoint`` (else the environment's, if any) the desktop is
        the checkpoint's and no setup runs: a fork of it, or, when a desktop is open already,
        that desktop restored to it in place. :attr:`opening` says how long it took. The
        episode's limits: ``max_steps`` and ``time_limit`` (seconds from now), else the
        environment's, else the task's."""
        start = checkpoint if checkpoint is not None else self.checkpoint
        began = time.monotonic()
        if start is not None and self._desktop is not None:
            self._task_parts.close()
            self._extension = None
            self._desktop.call(restore_desktop, start, timeout=CHECKPOINT_TIMEOUT)
        else:
            self.close()
            opened = self.source(task.desktop if task else DesktopSpec()) if start is None else self.forks(start)
            self._desktop = self._opened.enter_context(opened)
            if self.video is not None:
                self._record(self._desktop, self.video)
        self._image = image_space or self._desktop.screen.image()
        self._task, self._step = task, 0
        note = None
        if start is None:
            note = self._set_up(self._desktop, task)
        elif task is not None and task.extension is not None:  # its own setup ran before the checkpoint
            self._open_extension(self._desktop, task).resume()
        self._settle(SETUP_QUIET)
        took = round(time.monotonic() - began, 3)
        name = start if isinstance(start, str) else start.name if start is not None else None
        self.opening = (Opening(setup_s=took, checkpoint=name, setup_note=note) if start is None
                        else Opening(fork_s=took, checkpoint=name))
        steps, limit = (task.max_steps, task.time_limit) if task else NO_TASK_LIMITS
        self._episode = Episode(self.execute, EpisodeLimits(max_steps or self.max_steps or steps,
                                                     time_limit or self.time_limit or limit))
        return self.observe()

    @property
    def desktop(self) -> DesktopHost:
        if self._desktop is None:
            raise ResetNeeded("the environment has no desktop: call reset() first")
        return self._desktop

    @property
    def task(self) -> Task:
        if self._task is None:
            raise ResetNeeded("the environment has no task: give one to reset()")
        return self._task

    @property
    def image_space(self) -> ImageSpace:
        """The size of the frames the agent is shown; its ``raw`` points are pixels of it."""
        self.desktop  # raises the clear error when there is none
        assert self._image is not None
        return self._image

    @property
    def episode(self) -> Episode:
        """The current episode's engine: its limits, steps and whether the agent said FAIL."""
        if self._episode is None:
            raise ResetNeeded("no episode is open: call reset() first")
        return self._episode

    def play(self, actions: Sequence[BaseAction | Mapping[str, object]], cancel: threading.Event | None = None) -> Played:
        """Play ``actions`` as one step of the episode (see :mod:`vdesk.harness.episode`); a batch
        that does not read as actions is a step in which nothing ran."""
        try:
            batch = parse_batch(list(actions))
        except VdeskError as error:
            return self.episode.failed_step(ExecuteResult(status="failed", error_message=str(error)))
        return self.episode.play(batch, cancel)

    def execute(self, actions: Sequence[BaseAction | dict[str, Any]], stop: Cancel | None = None) -> list[ExecuteResult]:
        """Run ``actions`` as one batch, in one call to the desktop (see
        :meth:`vdesk.input.DesktopInput.execute`): a result for each action that ran, the
        failing one last; failures come back in the results, never as an exception. ``stop``
        stops the batch between two bursts on a desktop of this process (a remote desktop's
        batch runs whole, within its actions' timeouts)."""
        try:
            batch = parse_batch(list(actions))
            here = stop if self.desktop.in_process else None  # a stop set later cannot travel
            return self.desktop.call(execute_batch, self.image_space, batch, here,
                                     timeout=sum(action_timeout(action) for action in batch))
        except VdeskError as error:  # an invalid action, or a desktop that could not be reached
            return [ExecuteResult(status="failed", error_message=str(error))]

    def observe(self, results: Sequence[ExecuteResult] = (), user_reply: str | None = None) -> Observation:
        """Wait for the screen to settle, then take the next observation."""
        self._settle(self.step_quiet)
        self._step += 1
        if self.observation == "screenshot":
            frame, tree, marks, centres = self.desktop.screen.shot(self.image_space.size, fresh=True), None, None, ()
        else:
            frame, tree, marks, centres = self.desktop.call(observe_screen, self.observation, self.image_space,
                                                            timeout=OBSERVE_TIMEOUT)
        instruction = self._task.instruction if self._task else ""
        self._last = Observation(frame, screen_context(self.desktop.screen.geometry), instruction, self._step,
                                 tuple(results), user_reply, tree, marks, centres)
        return self._last

    def final_frame(self) -> Image.Image:
        """The settled screen at the logical size: what checks and replays compare. First the
        task's ``judge_when_idle`` programs go idle (or end), for :data:`JUDGE_IDLE_TIMEOUT` at
        most each: past it the episode is judged as it is."""
        for name in self._task.judge_when_idle if self._task else ():
            self.desktop.call(idle_before_judging, name, timeout=JUDGE_IDLE_TIMEOUT + 15)
        self._settle(self.final_quiet)
        return self.desktop.screen.shot(fresh=True)

    def evaluate(self, final_frame: Image.Image | None = None, *, agent_failed: bool = False) -> list[CheckResult]:
        """Run the task's checks against the desktop as it is now, and its extension's evaluator
        (``agent_failed``: the agent's last action was FAIL); none without a task."""
        if self._task is None:
            return []
        results = run_checks(self.desktop, self._task, final_frame) if self._task.checks else []
        if self._extension is not None:
            results.append(self._extension.evaluate(agent_failed))
        return results

    # -- inside -------------------------------------------------------------------------------
    def _set_up(self, desktop: DesktopHost, task: Task | None) -> str | None:
        """The window manager, then the task's setup and its extension's own steps, then a wait
        for the programs they started to show their windows and settle, as the first frame of
        OSWorld's machine shows them (:mod:`vdesk.started`); what had not settled, or None."""
        if task is None:
            desktop.call(prepare_blank, timeout=WM_READY_TIMEOUT + 10)
            return None
        before = desktop.call(prepare, task, packed(task), timeout=setup_timeout(task))
        if task.extension is not None:  # e.g. an OSWorld task's config steps, run from here
            self._open_extension(desktop, task).setup()
        return desktop.call(wait_started, before, START_TIMEOUT, timeout=START_TIMEOUT + PROBE_TIMEOUT + 10).note

    def _open_extension(self, desktop: DesktopHost, task: Task) -> ExtensionSession:
        assert task.extension is not None
        self._extension = session = task.extension.open(desktop, task.base_dir)
        self._task_parts.callback(session.close)
        return session

    def _play_text(self, action: str | Sequence[BaseAction | dict[str, Any]]) -> Played:
        """A step from the Gymnasium action: text in ``action_format``, or a list of actions."""
        if not isinstance(action, str):
            return self.play(action)
        try:
            batch = parse_payloads(self.action_format, [action], self.image_space)
        except VdeskError as error:
            return self.episode.failed_step(ExecuteResult(status="failed", error_message=str(error)))
        return self.play(batch)

    def _observation_space(self, image: ImageSpace) -> spaces.Dict:
        return spaces.Dict({name: OBSERVATION_MODES[name].space(image) for name in self.observations})

    def _gym_observation(self, observation: Observation) -> dict[str, Any]:
        return {name: OBSERVATION_MODES[name].value(observation) for name in self.observations}

    def _info(self, observation: Observation) -> dict[str, Any]:
        """What goes with an observation; nothing timed, so equal steps give equal infos."""
        return {"step": observation.step, "instruction": observation.instruction,
                "results": [{"status": r.status, "error": r.error_message, "finished": r.finished,
                             "finished_content": r.finished_content, "call_user": r.call_user}
                            for r in observation.results]}

    def _record(self, desktop: DesktopHost, path: Path) -> None:
        """Record ``desktop`` into ``path`` until it is released (frames travel like screenshots)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self._opened.enter_context(record(lambda: desktop.screen.shot(fresh=True), path, size=desktop.screen.size))

    def _settle(self, quiet: float) -> None:
        self.desktop.call(settle, quiet, SETTLE_TIMEOUT, timeout=SETTLE_TIMEOUT)


def as_task(task: Task | str | Path | Mapping[str, Any] | None) -> Task | None:
    """A task from what ``reset`` options and the constructor accept: a Task, a task file's
    path, or a task as a mapping."""
    if task is None or isinstance(task, Task):
        return task
    if isinstance(task, (str, Path)):
        return load_task(task)
    if isinstance(task, Mapping):
        return parse_task(dict(task))
    raise InvalidArgument(f"task: give a Task, a task file's path or a mapping, not {type(task).__name__}")


# A real desktop's frames are the same for the same task as far as the image pins them (see
# vdesk.harness.replay), not bit for bit by a seed: declared nondeterministic.
gymnasium.register(id=ENV_ID, entry_point="vdesk.harness.env:DesktopEnv", nondeterministic=True)


# -- what runs next to the desktop (through DesktopHost.call) ---------------------------------
def observe_screen(desktop: Desktop, mode: str, image: ImageSpace
                   ) -> tuple[Image.Image, str | None, str | None, tuple[tuple[float, float], ...]]:
    """The frame at ``image``'s size and, by ``mode``, the linearized tree or the marks' table
    and centres in ``image``'s pixels (``som``: the frame is the marked screenshot; the marks
    stay on the desktop for the actions that name them)."""
    if mode == "som":
        marks = desktop.elements.marks()
        sx, sy = image.width / desktop.screen.size[0], image.height / desktop.screen.size[1]
        centres = tuple((mark.centre[0] * sx, mark.centre[1] * sy) for mark in marks.marks)
        return desktop.screen.to_image(marks.image, image), None, marks.table(), centres
    frame = desktop.screen.shot(image.size, fresh=True)
    return frame, linearize(desktop.elements.tree()), None, ()


def prepare(desktop: Desktop, task: Task, files: Mapping[str, bytes] | None = None) -> Before:
    """Get a fresh desktop ready for ``task``: the window manager, then the task's setup;
    ``files`` are what its serve and upload steps copy in (see :func:`packed`). What ran
    before the setup comes back, for :func:`~vdesk.started.wait_started`."""
    desktop.programs.wait_for_window_manager(WM_READY_TIMEOUT)
    before = snapshot(desktop)
    run_setup(desktop, task, files or {})
    return before


def prepare_blank(desktop: Desktop) -> None:
    """Get a fresh desktop ready without a task: the window manager only."""
    desktop.programs.wait_for_window_manager(WM_READY_TIMEOUT)


def packed(task: Task) -> dict[str, bytes]:
    """The files and folders of the task its setup copies in, packed here, where the task's
    folder is (the desktop may live on another machine)."""
    return {name: pack(task.base_dir / name) for name in task.copied_in()}


def take_checkpoint(desktop: Desktop, name: str | None) -> Checkpoint:
    """Checkpoint ``desktop`` where it runs (see :meth:`Desktop.checkpoint`)."""
    return desktop.checkpoint(name)


def restore_desktop(desktop: Desktop, checkpoint: Checkpoint | str) -> None:
    """Put ``desktop`` back to ``checkpoint`` in place (see :meth:`Desktop.restore`)."""
    desktop.restore(checkpoint)


def idle_before_judging(desktop: Desktop, name: str) -> None:
    """Wait until the programs called ``name`` are idle or gone; past the bound, go on."""
    try:
        wait_idle(desktop, name, quiet=JUDGE_IDLE_QUIET, timeout=JUDGE_IDLE_TIMEOUT, absent_is_idle=True)
    except DesktopTimeout:
        pass  # a program that never settles (a video playing) is judged as it is


def settle(desktop: Desktop, quiet: float, timeout: float) -> None:
    """Return once the screen has not changed for ``quiet`` seconds, or after ``timeout``."""
    desktop.screen.settle(quiet=quiet, timeout=timeout)


def execute_batch(desktop: Desktop, image: ImageSpace, batch: list[BaseAction], stop: Cancel | None
                  ) -> list[ExecuteResult]:
    """Run a step's ``batch`` through the desktop's one door, its ``raw`` points read as pixels
    of ``image`` (no receipt: the loop observes the settled screen next), as a result per action."""
    result = desktop.input.execute(batch, image=image, receipt=False, cancel=stop)
    return each_action(result, batch, stopped=stop is not None and stop.is_set())


def setup_timeout(task: Task) -> float:
    """A bound on :func:`prepare`: the window manager's wait, a look at what runs, then each
    step's own."""
    return WM_READY_TIMEOUT + PROBE_TIMEOUT + 10 + sum(getattr(step, "timeout", STEP_TIMEOUT) for step in task.setup)


def action_timeout(action: BaseAction) -> float:
    """A bound on running one action: what it waits or holds, and its typing, beyond xdotool's own."""
    text = action.inputs.content or ""
    return 2 * XDOTOOL_TIMEOUT + (action.inputs.time or 0.0) + len(text) / 100


def run_setup(desktop: Desktop, task: Task, files: Mapping[str, bytes] | None = None) -> None:
    """Run the task's setup steps in order; raises :class:`SetupError` naming the failed one."""
    files = files if files is not None else packed(task)
    for index, step in enumerate(task.setup):
        try:
            _setup_step(desktop, step, files)
        except VdeskError as error:
            raise SetupError(f"task {task.id}: setup step {index} ({_describe(step)}) failed: {error}") from None


def _setup_step(desktop: Desktop, step: SetupStep, files: Mapping[str, bytes]) -> None:
    if isinstance(step, RunStep):
        desktop.programs.run(argv_of(step.run), wait=True, timeout=step.timeout).check()
    elif isinstance(step, StartStep):
        # exec: the program replaces the shell, so it is the process that keeps running.
        argv = ["sh", "-c", f"cd && exec {step.start}"] if isinstance(step.start, str) else step.start
        desktop.programs.run(argv)
    elif isinstance(step, WriteStep):
        script = 'cd && mkdir -p -- "$(dirname -- "$1")" && cat > "$1"'
        desktop.programs.run(["sh", "-c", script, "sh", in_home(step.write)], wait=True, stdin=step.content).check()
    elif isinstance(step, WaitWindowStep):
        desktop.windows.wait_for(step.wait_window, regex=step.regex, timeout=step.timeout)
    elif isinstance(step, UploadStep):
        unpack_into(desktop, files[step.upload], in_home(step.to), timeout=step.timeout)
    elif isinstance(step, ServeStep):
        serve(desktop, files[step.serve], step)
    elif isinstance(step, BrowserStep):
        desktop.browser.open(step.browser, timeout=step.timeout)
    elif isinstance(step, WaitIdleStep):
        wait_idle(desktop, step.wait_idle, quiet=step.quiet, timeout=step.timeout)


def serve(desktop: Desktop, archive: bytes, step: ServeStep) -> None:
    """Serve a task folder over HTTP on the desktop's loopback; return once it answers."""
    root = f"{SERVE_ROOT}/{step.port}"
    unpack_into(desktop, archive, root, timeout=step.timeout)
    folder = f"{root}/{Path(step.serve).name}"
    desktop.programs.run(["python3", "-m", "http.server", str(step.port), "--bind", "127.0.0.1", "--directory", folder])
    deadline = time.monotonic() + step.timeout
    probe = ["socat", "-u", "OPEN:/dev/null", f"TCP:127.0.0.1:{step.port}"]
    while desktop.programs.run(probe, wait=True, timeout=5).returncode != 0:
        if time.monotonic() > deadline:
            raise DesktopTimeout(f"the server of {step.serve!r} did not answer on port {step.port} within {step.timeout:g} s")
        time.sleep(0.05)


def _describe(step: SetupStep) -> str:
    for kind in ("run", "start", "write", "wait_window", "upload", "serve", "browser", "wait_idle"):
        if hasattr(step, kind):
            return f"{kind}: {getattr(step, kind)!r}"[:120]
    return type(step).__name__

"""A Gymnasium-style environment over a desktop: ``reset(task)``, ``step(actions)``, ``close()``.

    with DesktopEnv() as env:
        observation = env.reset(task)
        observation = env.step([{"type": "type", "inputs": {"content": "ls\\n"}}])
        print(env.evaluate())

Each :meth:`DesktopEnv.reset` opens a desktop for the task (a fresh local one by default,
releasing the previous one), runs the task's setup and returns the first observation once the
screen has settled; with ``video`` the desktop's screen is recorded into that file from then
until the desktop is released. The desktop may live elsewhere (see :mod:`vdesk.harness.hosts`): what needs
the real desktop — setup, actions, settle waits, checks — runs next to it through
``DesktopHost.call``; frames travel to this process.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from dataclasses import dataclass
from typing import Any

from PIL import Image

from vdesk.actions import BaseAction, ExecuteResult, parse_batch
from vdesk.coords import ImageSpace
from vdesk.desktop import WM_READY_TIMEOUT, XDOTOOL_TIMEOUT, Desktop
from vdesk.errors import DesktopGone, DesktopTimeout, InvalidAction, SetupError, VdeskError
from vdesk.harness.checks import CheckResult, argv_of, run_checks
from vdesk.harness.hosts import DesktopHost, DesktopSource, fresh_desktops
from vdesk.harness.desktop_files import pack, unpack_into
from vdesk.harness.tasks import (BrowserStep, RunStep, ServeStep, SetupStep, StartStep, Task, UploadStep,
                                 WaitIdleStep, WaitWindowStep, WriteStep, in_home)
from vdesk.images import IMAGE
from vdesk.operator import Operator, ScreenContext, encode, screen_context
from vdesk.osworld.session import OSWorldSession
from vdesk.video import record

# How long the screen must stay unchanged before a frame counts as settled: short between
# steps (an agent can look again), long before the final frame, whose hash replays compare.
STEP_QUIET = 0.1
FINAL_QUIET = 0.5
SETUP_QUIET = 0.3
SETTLE_TIMEOUT = 10.0
STEP_TIMEOUT = 60.0  # for a setup step that has no timeout of its own (start, write)
SERVE_ROOT = "/tmp/vdesk-serve"  # out of the home, where a file manager would show it
IDLE_SHARE = 0.03  # of one CPU: a program using less than this is idle (a blinking caret, a timer)
# Runs in the desktop: sums the CPU time of every process of the name from /proc, and exits 0
# once it grew by less than IDLE_SHARE of the quiet period over one quiet period.
WAIT_IDLE = f"""
import os, sys, time
name, quiet, timeout = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
tick = os.sysconf("SC_CLK_TCK")
def used():
    total, found = 0, False
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{{pid}}/stat") as stat:
                fields = stat.read().rsplit(")", 1)
            if fields[0].split("(", 1)[1] == name:
                found = True
                parts = fields[1].split()
                total += int(parts[11]) + int(parts[12])
        except (OSError, IndexError, ValueError):
            pass
    return total / tick if found else None
deadline = time.monotonic() + timeout
before = used()
while time.monotonic() < deadline:
    time.sleep(quiet)
    now = used()
    if before is not None and now is not None and now - before < {IDLE_SHARE} * quiet:
        sys.exit(0)
    before = now
sys.exit(f"{{name}} did not go idle within {{timeout:g}} s")
"""


@dataclass(frozen=True)
class Observation:
    """What an agent sees before each step."""

    frame: Image.Image                     # at the agent's image size
    screen: ScreenContext
    instruction: str
    step: int                              # the step this observation is for, from 1
    results: tuple[ExecuteResult, ...] = ()  # what the previous step's actions did
    user_reply: str | None = None          # a person's answer after call_user

    def frame_png(self) -> bytes:
        return encode(self.frame, "png")

    def frame_base64(self) -> str:
        return base64.b64encode(self.frame_png()).decode()

    @property
    def image_space(self) -> ImageSpace:
        return ImageSpace(self.frame.width, self.frame.height)


class DesktopEnv:
    """One desktop at a time, prepared for a task. Use as a context manager.

    ``source`` opens the desktop for each task (default: a fresh local desktop of ``image``,
    with ``environment`` in its environment); see :mod:`vdesk.harness.hosts`.
    """

    def __init__(self, *, image: str = IMAGE, source: DesktopSource | None = None,
                 environment: Mapping[str, str] | None = None, step_quiet: float = STEP_QUIET,
                 final_quiet: float = FINAL_QUIET, video: Path | None = None) -> None:
        self.source = source or fresh_desktops(image, environment)
        self.video = video
        self.step_quiet = step_quiet
        self.final_quiet = final_quiet
        self._opened = ExitStack()
        self._desktop: DesktopHost | None = None
        self._image: ImageSpace | None = None
        self._task: Task | None = None
        self._osworld: OSWorldSession | None = None
        self._step = 0

    # -- the Gymnasium-style surface ----------------------------------------------------------
    def reset(self, task: Task, *, image_space: ImageSpace | None = None) -> Observation:
        """A desktop for ``task``, set up; ``image_space`` is the size of the frames the agent
        is shown (default: the logical screen), and what its ``raw`` points refer to."""
        self.close()
        self._desktop = self._opened.enter_context(self.source(task.desktop))
        if self.video is not None:
            self._record(self._desktop, self.video)
        self._image = image_space or self._desktop.screen.image()
        self._task, self._step = task, 0
        self._desktop.call(prepare, task, packed(task), timeout=setup_timeout(task))
        if task.osworld is not None:  # an OSWorld task's own steps, run from here (see vdesk.osworld)
            self._osworld = OSWorldSession(self._desktop, task)
            self._opened.callback(self._osworld.close)
            self._osworld.setup()
        self._settle(SETUP_QUIET)
        return self.observe()

    def step(self, actions: Any) -> Observation:
        """Run a batch of actions in order (stopping at the first failure) and observe."""
        results = []
        for action in parse_batch(actions):
            result = self.execute(action)
            results.append(result)
            if result.status != "success":
                break
        return self.observe(results)

    def close(self) -> None:
        """Release the desktop (idempotent)."""
        self._desktop, self._image, self._osworld = None, None, None
        self._opened.close()

    def __enter__(self) -> DesktopEnv:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- finer steps, for the episode loop ----------------------------------------------------
    @property
    def desktop(self) -> DesktopHost:
        if self._desktop is None:
            raise DesktopGone("the environment has no desktop: call reset(task) first")
        return self._desktop

    @property
    def task(self) -> Task:
        if self._task is None:
            raise InvalidAction("the environment has no task: call reset(task) first")
        return self._task

    @property
    def image_space(self) -> ImageSpace:
        """The size of the frames the agent is shown; its ``raw`` points are pixels of it."""
        self.desktop  # raises the clear error when there is none
        assert self._image is not None
        return self._image

    def execute(self, action: BaseAction | dict[str, Any]) -> ExecuteResult:
        """Run one action; failures come back in the result, never as an exception."""
        try:
            parsed = parse_batch([action])[0]
            return self.desktop.call(execute_action, self.image_space, parsed, timeout=action_timeout(parsed))
        except VdeskError as error:  # an invalid action, or a desktop that could not be reached
            return ExecuteResult(status="failed", error_message=str(error))

    def observe(self, results: Sequence[ExecuteResult] = (), user_reply: str | None = None) -> Observation:
        """Wait for the screen to settle, then take the next observation."""
        self._settle(self.step_quiet)
        self._step += 1
        frame = self.desktop.screenshot(self.image_space.size, fresh=True)
        return Observation(frame, screen_context(self.desktop.screen), self.task.instruction, self._step,
                           tuple(results), user_reply)

    def final_frame(self) -> Image.Image:
        """The settled screen at the logical size: what checks and replays compare."""
        self._settle(self.final_quiet)
        return self.desktop.screenshot(fresh=True)

    def evaluate(self, final_frame: Image.Image | None = None, *, agent_failed: bool = False) -> list[CheckResult]:
        """Run the task's checks against the desktop as it is now, and an OSWorld task's
        evaluator (``agent_failed``: the agent's last action was FAIL)."""
        results = run_checks(self.desktop, self.task, final_frame) if self.task.checks else []
        if self._osworld is not None:
            results.append(self._osworld.evaluate(agent_failed))
        return results

    def _record(self, desktop: DesktopHost, path: Path) -> None:
        """Record ``desktop`` into ``path`` until it is released (frames travel like screenshots)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self._opened.enter_context(record(lambda: desktop.screenshot(fresh=True), path, size=desktop.screen.size))

    def _settle(self, quiet: float) -> None:
        self.desktop.call(settle, quiet, SETTLE_TIMEOUT, timeout=SETTLE_TIMEOUT)


# -- what runs next to the desktop (through DesktopHost.call) ---------------------------------
def prepare(desktop: Desktop, task: Task, files: Mapping[str, bytes] | None = None) -> None:
    """Get a fresh desktop ready for ``task``: the window manager, then the task's setup;
    ``files`` are what its serve and upload steps copy in (see :func:`packed`)."""
    desktop.wait_for_window_manager(WM_READY_TIMEOUT)
    run_setup(desktop, task, files or {})


def packed(task: Task) -> dict[str, bytes]:
    """The files and folders of the task its setup copies in, packed here, where the task's
    folder is (the desktop may live on another machine)."""
    return {name: pack(task.base_dir / name) for name in task.copied_in()}


def settle(desktop: Desktop, quiet: float, timeout: float) -> None:
    """Return once the screen has not changed for ``quiet`` seconds, or after ``timeout``."""
    desktop.settle(quiet=quiet, timeout=timeout)


def execute_action(desktop: Desktop, image: ImageSpace, action: BaseAction) -> ExecuteResult:
    """Run one action, its ``raw`` points read as pixels of ``image``."""
    return Operator(desktop, image).execute({"actions": [action]})


def setup_timeout(task: Task) -> float:
    """A bound on :func:`prepare`: the window manager's wait, then each step's own."""
    return WM_READY_TIMEOUT + 10 + sum(getattr(step, "timeout", STEP_TIMEOUT) for step in task.setup)


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
        desktop.run(argv_of(step.run), wait=True, timeout=step.timeout).check()
    elif isinstance(step, StartStep):
        # exec: the program replaces the shell, so it is the process that keeps running.
        argv = ["sh", "-c", f"cd && exec {step.start}"] if isinstance(step.start, str) else step.start
        desktop.run(argv)
    elif isinstance(step, WriteStep):
        script = 'cd && mkdir -p -- "$(dirname -- "$1")" && cat > "$1"'
        desktop.run(["sh", "-c", script, "sh", in_home(step.write)], wait=True, stdin=step.content).check()
    elif isinstance(step, WaitWindowStep):
        desktop.windows.wait_for(step.wait_window, regex=step.regex, timeout=step.timeout)
    elif isinstance(step, UploadStep):
        unpack_into(desktop, files[step.upload], in_home(step.to), timeout=step.timeout)
    elif isinstance(step, ServeStep):
        serve(desktop, files[step.serve], step)
    elif isinstance(step, BrowserStep):
        desktop.browser.open(step.browser, timeout=step.timeout)
    elif isinstance(step, WaitIdleStep):
        argv = ["python3", "-c", WAIT_IDLE, step.wait_idle, str(step.quiet), str(step.timeout)]
        # vdesk's own probe, not the task's program: on the desktop's real clock.
        done = desktop.run(argv, wait=True, timeout=step.timeout + 5, clock=False)
        if done.returncode != 0:
            raise DesktopTimeout(done.stderr.strip() or f"{step.wait_idle} did not go idle within {step.timeout:g} s")


def serve(desktop: Desktop, archive: bytes, step: ServeStep) -> None:
    """Serve a task folder over HTTP on the desktop's loopback; return once it answers."""
    root = f"{SERVE_ROOT}/{step.port}"
    unpack_into(desktop, archive, root, timeout=step.timeout)
    folder = f"{root}/{Path(step.serve).name}"
    desktop.run(["python3", "-m", "http.server", str(step.port), "--bind", "127.0.0.1", "--directory", folder])
    deadline = time.monotonic() + step.timeout
    probe = ["socat", "-u", "OPEN:/dev/null", f"TCP:127.0.0.1:{step.port}"]
    while desktop.run(probe, wait=True, timeout=5).returncode != 0:
        if time.monotonic() > deadline:
            raise DesktopTimeout(f"the server of {step.serve!r} did not answer on port {step.port} within {step.timeout:g} s")
        time.sleep(0.05)


def _describe(step: SetupStep) -> str:
    for kind in ("run", "start", "write", "wait_window", "upload", "serve", "browser", "wait_idle"):
        if hasattr(step, kind):
            return f"{kind}: {getattr(step, kind)!r}"[:120]
    return type(step).__name__

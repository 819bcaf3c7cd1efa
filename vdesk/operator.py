"""The operator: the agent-facing contract over a desktop.

It follows the reference GUI-agent SDK: ``initialize()`` once, ``screenshot()`` that never
raises, ``execute({"actions": [...], ...})`` that validates the whole batch (names, inputs,
keys, coordinates against the real screen) before anything runs, then runs it in order through
the desktop's persistent channel. Consecutive pointer and key actions are chained into one
xdotool invocation; text is typed from stdin, so no user text ever becomes an argument.
"""

from __future__ import annotations

import base64
import io
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from vdesk.actions import (DEFAULT_SCROLL_AMOUNT, DEFAULT_WAIT_SECONDS, ActionType, BaseAction,
                           parse_batch)
from vdesk.coords import ImageSpace, PhysicalPoint, Screen
from vdesk.errors import InvalidAction, VdeskError
from vdesk.keyboard import normalise

if TYPE_CHECKING:
    from vdesk.desktop import Desktop

BUTTONS = {"left": "1", "middle": "2", "right": "3"}
SCROLL_BUTTONS = {"up": "4", "down": "5", "left": "6", "right": "7"}
CLICK_BUTTON = {ActionType.CLICK: "1", ActionType.DOUBLE_CLICK: "1", ActionType.TRIPLE_CLICK: "1",
                ActionType.RIGHT_CLICK: "3", ActionType.MIDDLE_CLICK: "2"}
CLICK_REPEAT = {ActionType.DOUBLE_CLICK: 2, ActionType.TRIPLE_CLICK: 3}
DRAG_STEPS = 4  # intermediate motion events, so toolkits recognise a drag
DRAG_PAUSE = "0.02"  # seconds between a drag's events
XDOTOOL_TIMEOUT = 30.0


class ScreenshotOutput(BaseModel):
    """A frame for an agent: base64 image data, or ``status="failed"`` and why."""

    model_config = ConfigDict(frozen=True)
    base64: str = ""
    content_type: str = "image/png"
    status: Literal["success", "failed"] = "success"
    error_message: str | None = None
    width: int = 0
    height: int = 0


class ExecuteResult(BaseModel):
    """The outcome of a batch. ``finished`` / ``call_user`` report those actions to the loop."""

    status: Literal["success", "failed"] = "success"
    error_message: str | None = None
    executed: int = 0  # how many actions ran to completion
    finished: bool = False
    finished_content: str | None = None
    call_user: str | None = None
    elapsed_ms: float = 0.0


class ScreenContext(BaseModel):
    screen_width: int
    screen_height: int
    scale_x: float
    scale_y: float


def screen_context(screen: Screen) -> ScreenContext:
    """What an agent is told of the screen."""
    return ScreenContext(screen_width=screen.width, screen_height=screen.height,
                         scale_x=screen.scale, scale_y=screen.scale)


# -- the plan: what a batch turns into -------------------------------------------------------
# Each step remembers the index of the action it belongs to, so a failure can say how many
# actions completed even after steps of several actions were chained into one.
@dataclass(frozen=True)
class Xdo:
    """xdotool arguments; consecutive ones are chained into one invocation."""

    args: tuple[str, ...]
    action: int = field(default=0, compare=False)


@dataclass(frozen=True)
class TypeText:
    text: str
    action: int = field(default=0, compare=False)
    paste: bool = False  # through the clipboard instead of key by key


@dataclass(frozen=True)
class Sleep:
    seconds: float
    action: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Mark:
    kind: Literal["finished", "call_user"]
    content: str | None
    action: int = field(default=0, compare=False)


Step = Xdo | TypeText | Sleep | Mark


@dataclass
class Plan:
    steps: list[Step] = field(default_factory=list)
    action: int = 0  # the index of the action being planned

    def add(self, *steps: Step) -> None:
        self.steps.extend(replace(step, action=self.action) for step in steps)


class Operator:
    """Drives one desktop for an agent.

    ``image`` is the size of the screenshots the agent is shown (default: the logical screen);
    ``raw`` coordinates it sends back are pixels of that image and are mapped to the screen.
    """

    def __init__(self, desktop: Desktop, image: ImageSpace | None = None) -> None:
        self.desktop = desktop
        self.image = image or desktop.screen.image()
        self._initialized = False
        self._init_lock = threading.Lock()

    def initialize(self) -> None:
        """Make sure the desktop answers; runs once even when called concurrently."""
        with self._init_lock:
            if not self._initialized:
                self.desktop.frames.latest()
                self._initialized = True

    # -- observation --------------------------------------------------------------------------
    def screen_context(self) -> ScreenContext:
        return screen_context(self.desktop.screen)

    def screenshot(self, format: Literal["png", "jpeg"] = "png", quality: int = 85,
                   fresh: bool = True) -> ScreenshotOutput:
        """The screen at the agent's image size, encoded; never raises."""
        content_type = f"image/{format}"
        try:
            frame = self.desktop.screenshot(self.image, fresh=fresh)
            return ScreenshotOutput(base64=base64.b64encode(encode(frame, format, quality)).decode(),
                                    content_type=content_type, width=frame.width, height=frame.height)
        except Exception as error:  # the contract: fold every failure into the result
            return ScreenshotOutput(content_type=content_type, status="failed",
                                    error_message=f"{type(error).__name__}: {error}")

    @staticmethod
    def supported_actions() -> list[str]:
        return [kind.value for kind in ActionType]

    # -- actions ------------------------------------------------------------------------------
    def execute(self, params: Any, *, settle: bool = False) -> ExecuteResult:
        """Validate ``params["actions"]`` (extra fields may ride along), then run them in order.

        A malformed action fails the whole batch before anything runs. With ``settle=True``
        it returns once the screen has stopped changing after the last action.
        """
        started = time.perf_counter()
        actions_data = params.get("actions", []) if isinstance(params, dict) else params
        try:
            plan = self.plan(parse_batch(actions_data))
        except InvalidAction as error:
            return ExecuteResult(status="failed", error_message=str(error))
        result = ExecuteResult()
        try:
            for step in self._run(plan):
                result.executed = step.action + 1
                if isinstance(step, Mark) and step.kind == "finished":
                    result.finished, result.finished_content = True, step.content
                elif isinstance(step, Mark):
                    result.call_user = step.content or ""
            if settle:
                self.desktop.wait_until_settled()
        except VdeskError as error:
            result.status, result.error_message = "failed", str(error)
        result.elapsed_ms = (time.perf_counter() - started) * 1000
        return result

    def plan(self, actions: list[BaseAction]) -> Plan:
        """Turn validated actions into steps, resolving every coordinate first."""
        plan = Plan()
        for index, action in enumerate(actions):
            plan.action = index
            try:
                self._plan_one(action, plan)
            except InvalidAction as error:
                raise InvalidAction(f"action {index} ({action.type.value}): {error}") from None
        return plan

    def _point(self, action: BaseAction, which: str = "point") -> PhysicalPoint | None:
        coordinates = getattr(action.inputs, which)
        return coordinates.resolve(self.desktop.screen, self.image) if coordinates else None

    def _plan_one(self, action: BaseAction, plan: Plan) -> None:
        kind, inputs = action.type, action.inputs
        point = self._point(action)
        move = ("mousemove", str(point.x), str(point.y)) if point else ()
        press_mods, release_mods = _key_downs(inputs.modifier_keysyms), _key_ups(inputs.modifier_keysyms)
        if kind in CLICK_BUTTON:
            clicks = _presses(CLICK_BUTTON[kind], CLICK_REPEAT.get(kind, 1))
            plan.add(Xdo(move + press_mods + clicks + release_mods))
        elif kind is ActionType.MOUSE_MOVE:
            plan.add(Xdo(move))
        elif kind in (ActionType.MOUSE_DOWN, ActionType.MOUSE_UP):
            verb = "mousedown" if kind is ActionType.MOUSE_DOWN else "mouseup"
            plan.add(Xdo(move + (verb, BUTTONS[inputs.button or "left"])))
        elif kind is ActionType.DRAG:
            plan.add(Xdo(self._drag(self._point(action, "start"), self._point(action, "end"))))  # type: ignore[arg-type]
        elif kind is ActionType.SCROLL:
            notches = _presses(SCROLL_BUTTONS[inputs.direction or "down"], inputs.amount or DEFAULT_SCROLL_AMOUNT)
            plan.add(Xdo(move + press_mods + notches + release_mods))
        elif kind is ActionType.TYPE:
            plan.add(TypeText(normalise(inputs.content or ""), paste=inputs.method == "paste"))
        elif kind is ActionType.HOTKEY:
            plan.add(Xdo(_key_downs(inputs.keysyms) + _key_ups(inputs.keysyms)))
        elif kind is ActionType.PRESS:
            plan.add(Xdo(_key_downs(inputs.keysyms)))
        elif kind is ActionType.RELEASE:
            plan.add(Xdo(_key_ups(inputs.keysyms)))
        elif kind is ActionType.HOLD_KEY:
            plan.add(Xdo(_key_downs(inputs.keysyms)), Sleep(inputs.time or 0.5), Xdo(_key_ups(inputs.keysyms)))
        elif kind is ActionType.WAIT:
            plan.add(Sleep(DEFAULT_WAIT_SECONDS if inputs.time is None else inputs.time))
        elif kind in (ActionType.FINISHED, ActionType.CALL_USER):
            plan.add(Mark(kind.value, inputs.content))  # type: ignore[arg-type]
        # SCREENSHOT: nothing to do on the desktop; the caller takes frames.

    @staticmethod
    def _drag(start: PhysicalPoint, end: PhysicalPoint) -> tuple[str, ...]:
        # Short pauses let a window manager or toolkit see the press and each move as a drag.
        args: tuple[str, ...] = ("mousemove", str(start.x), str(start.y), "mousedown", "1", "sleep", DRAG_PAUSE)
        for step in range(1, DRAG_STEPS + 1):
            x = start.x + (end.x - start.x) * step // DRAG_STEPS
            y = start.y + (end.y - start.y) * step // DRAG_STEPS
            args += ("mousemove", str(x), str(y), "sleep", DRAG_PAUSE)
        return args + ("mouseup", "1")

    def _run(self, plan: Plan) -> Iterator[Step]:
        for batch in _chained(plan.steps):
            if isinstance(batch, Xdo):
                self.desktop.channel.run(["xdotool", *batch.args], timeout=XDOTOOL_TIMEOUT).check()
            elif isinstance(batch, TypeText) and batch.paste:
                self.desktop.clipboard.paste(batch.text)
            elif isinstance(batch, TypeText):
                self._type(batch.text)
            elif isinstance(batch, Sleep):
                time.sleep(batch.seconds)
            yield batch

    def _type(self, text: str) -> None:
        # The text travels on stdin: a leading '-', quotes and shell characters are just text.
        for kind, piece in self.desktop.keymap.segments(text):
            if kind == "key":
                argv = ["xdotool", "key", "--delay", "0", piece]
                self.desktop.channel.run(argv, timeout=XDOTOOL_TIMEOUT).check()
            else:
                argv = ["xdotool", "type", "--delay", "0", "--clearmodifiers", "--file", "-"]
                self.desktop.channel.run(argv, stdin=piece, timeout=XDOTOOL_TIMEOUT + len(piece) / 100).check()


# xdotool waits 12 ms after each keydown/keyup unless told otherwise.
def _key_downs(keysyms: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(arg for sym in keysyms for arg in ("keydown", "--delay", "0", sym))


def _key_ups(keysyms: tuple[str, ...]) -> tuple[str, ...]:
    # Released in reverse, as a person lets go of a chord.
    return tuple(arg for sym in reversed(keysyms) for arg in ("keyup", "--delay", "0", sym))


def _presses(button: str, times: int) -> tuple[str, ...]:
    # xdotool's `click` sleeps 100 ms after every click; bare down/up events do not.
    return ("mousedown", button, "mouseup", button) * times


def _chained(steps: list[Step]) -> Iterator[Step]:
    """Merge runs of consecutive xdotool steps into one."""
    pending: list[str] = []
    last = 0
    for step in steps:
        if isinstance(step, Xdo):
            pending.extend(step.args)
            last = step.action
            continue
        if pending:
            yield Xdo(tuple(pending), last)
            pending = []
        yield step
    if pending:
        yield Xdo(tuple(pending), last)


def encode(image: Any, format: Literal["png", "jpeg"] = "png", quality: int = 85) -> bytes:
    """Encode a frame; PNG favours speed over size (compress_level 1)."""
    buffer = io.BytesIO()
    if format == "png":
        image.save(buffer, format="PNG", compress_level=1)
    elif format == "jpeg":
        image.save(buffer, format="JPEG", quality=quality)
    else:
        raise InvalidAction(f"format must be png or jpeg, got {format!r}")
    return buffer.getvalue()

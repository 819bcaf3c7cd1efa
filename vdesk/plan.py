"""The planner: validated actions → the input commands that perform them. Pure: it resolves
every coordinate against a screen and builds steps, and touches no desktop.

Consecutive pointer and key steps are chained into one xdotool invocation (:func:`chained`);
text becomes a typing step whose text travels on stdin, so no user text ever becomes an
argument. :meth:`vdesk.desktop.Desktop.execute` runs a plan.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Literal

from vdesk.actions import DEFAULT_SCROLL_AMOUNT, DEFAULT_WAIT_SECONDS, ActionType, BaseAction
from vdesk.coords import ImageSpace, PhysicalPoint, Screen
from vdesk.errors import InvalidAction
from vdesk.keymap import normalise

BUTTONS = {"left": "1", "middle": "2", "right": "3"}
SCROLL_BUTTONS = {"up": "4", "down": "5", "left": "6", "right": "7"}
CLICK_BUTTON = {ActionType.CLICK: "1", ActionType.DOUBLE_CLICK: "1", ActionType.TRIPLE_CLICK: "1",
                ActionType.RIGHT_CLICK: "3", ActionType.MIDDLE_CLICK: "2"}
CLICK_REPEAT = {ActionType.DOUBLE_CLICK: 2, ActionType.TRIPLE_CLICK: 3}
DRAG_STEPS = 4  # intermediate motion events, so toolkits recognise a drag
DRAG_PAUSE = "0.02"  # seconds between a drag's events


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
    """An action that reports to the caller (``finished``, ``call_user``) and sends no input."""

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


def plan(actions: list[BaseAction], screen: Screen, image: ImageSpace | None = None) -> Plan:
    """Turn validated actions into steps, resolving every coordinate first: ``raw`` points are
    pixels of ``image`` (default: a screenshot at the logical size). A point off the screen
    raises :class:`InvalidAction` naming the action."""
    planner = _Planner(screen, image or screen.image())
    result = Plan()
    for index, action in enumerate(actions):
        result.action = index
        try:
            planner.add(action, result)
        except InvalidAction as error:
            raise InvalidAction(f"action {index} ({action.type.value}): {error}") from None
    return result


@dataclass(frozen=True)
class _Planner:
    screen: Screen
    image: ImageSpace

    def point(self, action: BaseAction, which: str = "point") -> PhysicalPoint | None:
        coordinates = getattr(action.inputs, which)
        if which == "point" and action.inputs.element is not None:
            raise InvalidAction("an element action is resolved against a desktop's tree: run it with Desktop.execute")
        return coordinates.resolve(self.screen, self.image) if coordinates else None

    def add(self, action: BaseAction, plan: Plan) -> None:
        kind, inputs = action.type, action.inputs
        point = self.point(action)
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
            plan.add(Xdo(_drag(self.point(action, "start"), self.point(action, "end"))))  # type: ignore[arg-type]
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


def _drag(start: PhysicalPoint, end: PhysicalPoint) -> tuple[str, ...]:
    # Short pauses let a window manager or toolkit see the press and each move as a drag.
    args: tuple[str, ...] = ("mousemove", str(start.x), str(start.y), "mousedown", "1", "sleep", DRAG_PAUSE)
    for step in range(1, DRAG_STEPS + 1):
        x = start.x + (end.x - start.x) * step // DRAG_STEPS
        y = start.y + (end.y - start.y) * step // DRAG_STEPS
        args += ("mousemove", str(x), str(y), "sleep", DRAG_PAUSE)
    return args + ("mouseup", "1")


# xdotool waits 12 ms after each keydown/keyup unless told otherwise.
def _key_downs(keysyms: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(arg for sym in keysyms for arg in ("keydown", "--delay", "0", sym))


def _key_ups(keysyms: tuple[str, ...]) -> tuple[str, ...]:
    # Released in reverse, as a person lets go of a chord.
    return tuple(arg for sym in reversed(keysyms) for arg in ("keyup", "--delay", "0", sym))


def _presses(button: str, times: int) -> tuple[str, ...]:
    # xdotool's `click` sleeps 100 ms after every click; bare down/up events do not.
    return ("mousedown", button, "mouseup", button) * times


def chained(steps: list[Step]) -> Iterator[Step]:
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

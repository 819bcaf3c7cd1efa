"""The planner: validated actions → the input that performs them. Pure: it resolves every
coordinate against a screen and builds steps, and touches no desktop.

Pointer and key actions become :class:`Input` steps of typed events (motion to a pixel, a button
or key going down or up, a drag's short pause); consecutive ones are chained into one
(:func:`chained`), which :mod:`vdesk.xtest` sends. Text becomes typing steps whose text travels
on stdin, so no user text ever becomes an argument. :meth:`vdesk.input.DesktopInput.execute` runs a
plan.

A text's control characters are keys, pressed between the typed pieces (:func:`typing`): a line
end (``\\n``, ``\\r\\n`` or ``\\r``) is Return and a tab is Tab, as a person presses them
(backspace, escape and delete are their keys too). Typed as characters, xdotool sends a line end
as Linefeed, which only xterm and Chromium take as Enter. The cost: a text of N lines is N typing
runs instead of one (a round trip each). A pasted text keeps its line ends and tabs inside the
paste, exact and in one go whatever its length (multi-line editors take them as line breaks);
only the line ends and tabs that end it are pressed, so a pasted line submits as a typed one does.
The keys that end a text wait :data:`SUBMIT_PAUSE` after it, as a person's would: a toolkit may
still be reacting to the text (GTK's file chooser drops a Return that comes too soon).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Literal

from vdesk.actions import DEFAULT_SCROLL_AMOUNT, DEFAULT_WAIT_SECONDS, ActionType, BaseAction
from vdesk.coords import ImageSpace, PhysicalPoint, Screen
from vdesk.errors import InvalidAction
from vdesk.keymap import TYPED_IN_TEXT, TYPED_KEYS, normalise

BUTTONS = {"left": 1, "middle": 2, "right": 3}
SCROLL_BUTTONS = {"up": 4, "down": 5, "left": 6, "right": 7}  # X's scroll notches are buttons
CLICK_BUTTON = {ActionType.CLICK: 1, ActionType.DOUBLE_CLICK: 1, ActionType.TRIPLE_CLICK: 1,
                ActionType.RIGHT_CLICK: 3, ActionType.MIDDLE_CLICK: 2}
CLICK_REPEAT = {ActionType.DOUBLE_CLICK: 2, ActionType.TRIPLE_CLICK: 3}
DRAG_STEPS = 4  # intermediate motion events, so toolkits recognise a drag
DRAG_PAUSE = 0.02  # seconds between a drag's events
# Seconds a drag rests at its end before the release, as a hand does. Evince works out a text
# selection in an idle callback after each move and drops one still pending at the release:
# beside two CPU hogs a drag across a sentence copied it without its last words.
DRAG_HOLD = 0.2
# Between a text and the line ends or tabs that end it (its submit). GTK's file chooser checks a
# typed path for a moment and drops a Return that comes sooner: a Save dialog stayed open with
# the path in it at 0.05 s, closed at 0.2 s (measured at a load of 10 on 2 cores).
SUBMIT_PAUSE = 0.3


@dataclass(frozen=True)
class Motion:
    """The pointer moves to a physical pixel of the screen."""

    x: int
    y: int


@dataclass(frozen=True)
class Button:
    """A pointer button goes down or up: 1 left, 2 middle, 3 right, 4-7 scroll up, down, left, right."""

    number: int
    down: bool


@dataclass(frozen=True)
class Key:
    """A key goes down or up, named by its X keysym (as :mod:`vdesk.keys` spells it)."""

    keysym: str
    down: bool


@dataclass(frozen=True)
class Pause:
    """A short wait between input events, so a window manager or toolkit sees a drag."""

    seconds: float


InputEvent = Motion | Button | Key | Pause


# Each step remembers the index of the action it belongs to, so a failure can say how many
# actions completed even after steps of several actions were chained into one.
@dataclass(frozen=True)
class Input:
    """Pointer and key events, in order; consecutive ones are chained into one step."""

    events: tuple[InputEvent, ...]
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
class Report:
    """An action that reports to the caller (``finished``, ``call_user``) and sends no input."""

    kind: Literal["finished", "call_user"]
    content: str | None
    action: int = field(default=0, compare=False)


Step = Input | TypeText | Sleep | Report


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
            raise InvalidAction("an element action is resolved against a desktop's tree: run it with desktop.input.execute")
        return coordinates.resolve(self.screen, self.image) if coordinates else None

    def add(self, action: BaseAction, plan: Plan) -> None:
        kind, inputs = action.type, action.inputs
        point = self.point(action)
        move: tuple[InputEvent, ...] = (Motion(point.x, point.y),) if point else ()
        press_mods, release_mods = _key_downs(inputs.modifier_keysyms), _key_ups(inputs.modifier_keysyms)
        if kind in CLICK_BUTTON:
            clicks = _presses(CLICK_BUTTON[kind], CLICK_REPEAT.get(kind, 1))
            plan.add(Input(move + press_mods + clicks + release_mods))
        elif kind is ActionType.MOUSE_MOVE:
            plan.add(Input(move))
        elif kind in (ActionType.MOUSE_DOWN, ActionType.MOUSE_UP):
            plan.add(Input(move + (Button(BUTTONS[inputs.button or "left"], kind is ActionType.MOUSE_DOWN),)))
        elif kind is ActionType.DRAG:
            plan.add(Input(_drag(self.point(action, "start"), self.point(action, "end"))))  # type: ignore[arg-type]
        elif kind is ActionType.SCROLL:
            notches = _presses(SCROLL_BUTTONS[inputs.direction or "down"], inputs.amount or DEFAULT_SCROLL_AMOUNT)
            plan.add(Input(move + press_mods + notches + release_mods))
        elif kind is ActionType.TYPE:
            plan.add(*typing(normalise(inputs.content or ""), paste=inputs.method == "paste"))
        elif kind is ActionType.HOTKEY:
            plan.add(Input(_key_downs(inputs.keysyms) + _key_ups(inputs.keysyms)))
        elif kind is ActionType.PRESS:
            plan.add(Input(_key_downs(inputs.keysyms)))
        elif kind is ActionType.RELEASE:
            plan.add(Input(_key_ups(inputs.keysyms)))
        elif kind is ActionType.HOLD_KEY:
            plan.add(Input(_key_downs(inputs.keysyms)), Sleep(inputs.time or 0.5), Input(_key_ups(inputs.keysyms)))
        elif kind is ActionType.WAIT:
            plan.add(Sleep(DEFAULT_WAIT_SECONDS if inputs.time is None else inputs.time))
        elif kind in (ActionType.FINISHED, ActionType.CALL_USER):
            plan.add(Report(kind.value, inputs.content))
        # SCREENSHOT: nothing to do on the desktop; the caller takes frames.


def typing(text: str, paste: bool = False) -> list[Step]:
    """The steps that type a normalised ``text``: its pieces typed (or pasted) and its
    :data:`~vdesk.keymap.TYPED_KEYS` pressed between them. Line ends and tabs inside a typed
    piece stay in it, as ``\\r`` and ``\\t``, which ``xdotool type`` sends as the Return and Tab
    keys (its ``\\n`` is Linefeed): one typing run for many lines, where a run a line cost about
    40 ms each. Pasted, the line ends and tabs inside travel in the paste as they are. The run of
    line ends and tabs that ends the text is pressed after it, :data:`SUBMIT_PAUSE` later."""
    body = text.rstrip("\n\t")
    ending = [_press(char) for char in text[len(body):]]
    if body and ending:
        ending[0] = Input((Pause(SUBMIT_PAUSE),) + ending[0].events)
    if paste:
        pasted: list[Step] = [TypeText(body, paste=True)] if body else []
        return pasted + ending
    steps: list[Step] = []
    piece = ""
    for char in body:
        if char in TYPED_IN_TEXT:
            piece += TYPED_IN_TEXT[char]
        elif char in TYPED_KEYS:
            steps += [TypeText(piece), _press(char)] if piece else [_press(char)]
            piece = ""
        else:
            piece += char
    if piece:
        steps.append(TypeText(piece))
    return steps + ending


def _press(char: str) -> Input:
    keysym = TYPED_KEYS[char]
    return Input((Key(keysym, down=True), Key(keysym, down=False)))


def _drag(start: PhysicalPoint, end: PhysicalPoint) -> tuple[InputEvent, ...]:
    # Short pauses let a window manager or toolkit see the press and each move as a drag.
    events: tuple[InputEvent, ...] = (Motion(start.x, start.y), Button(1, down=True), Pause(DRAG_PAUSE))
    for step in range(1, DRAG_STEPS + 1):
        x = start.x + (end.x - start.x) * step // DRAG_STEPS
        y = start.y + (end.y - start.y) * step // DRAG_STEPS
        events += (Motion(x, y), Pause(DRAG_PAUSE if step < DRAG_STEPS else DRAG_HOLD))
    return events + (Button(1, down=False),)


def _key_downs(keysyms: tuple[str, ...]) -> tuple[Key, ...]:
    return tuple(Key(sym, down=True) for sym in keysyms)


def _key_ups(keysyms: tuple[str, ...]) -> tuple[Key, ...]:
    # Released in reverse, as a person lets go of a chord.
    return tuple(Key(sym, down=False) for sym in reversed(keysyms))


def _presses(button: int, times: int) -> tuple[Button, ...]:
    return (Button(button, down=True), Button(button, down=False)) * times


def chained(steps: list[Step]) -> Iterator[Step]:
    """Merge runs of consecutive input steps into one, which carries the index of the first
    action among them: the actions before it have completed once the steps before it ran (its
    first events may end an action begun earlier: a ``hold_key``'s release)."""
    pending: list[InputEvent] = []
    first: int | None = None
    for step in steps:
        if isinstance(step, Input):
            pending.extend(step.events)
            first = step.action if first is None else first
            continue
        if first is not None:
            yield Input(tuple(pending), first)
            pending, first = [], None
        yield step
    if first is not None:
        yield Input(tuple(pending), first)

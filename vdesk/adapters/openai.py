"""OpenAI computer use (``computer_call`` actions) → BaseActions.

An OpenAI model asks for one action per ``computer_call`` item, e.g.
``{"type": "click", "button": "left", "x": 640, "y": 400}`` (newer responses may carry a batch
in ``actions``). :func:`translate` turns one action into vdesk
:class:`~vdesk.actions.BaseAction` values; :func:`translate_call` takes the whole item. Both are
pure: no desktop, no I/O.

``x``/``y`` are pixels of the screenshot the model was shown, emitted unchanged as ``raw``
coordinates; vdesk's operator maps them from that image to the screen.

Decisions beyond the wire format:

* ``click`` with ``button`` ``back``/``forward`` (mouse buttons 8 and 9) is rejected: BaseAction
  has no such buttons, and faking them with keys would do different things in different apps.
* ``drag`` with two points is one ``drag``; with more it is ``mouse_down`` at the first point,
  ``mouse_move`` through the middle ones and ``mouse_up`` at the last.
* ``scroll`` deltas are pixels; they become wheel notches at :data:`PIXELS_PER_NOTCH` pixels per
  notch, rounded half up, at least one for any non-zero delta, at most
  :data:`MAX_SCROLL_NOTCHES` (more is rejected). Vertical scrolls come before horizontal ones.
  A scroll of (0, 0) scrolls nothing but still moves the pointer to ``(x, y)``, where the
  model pointed.
* ``wait`` has no duration on the wire; it waits :data:`WAIT_SECONDS`.
* An optional ``keys`` list on ``click``, ``double_click`` and ``scroll`` is taken as keys held
  during the action. Other unknown fields are rejected by name.

:class:`OpenAIComputer` runs those actions end to end against a desktop and answers each with
a screenshot, as the OpenAI loop expects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError

from vdesk import keys
from vdesk.actions import BaseAction, validation_message
from vdesk.coords import ImageSpace
from vdesk.errors import ActionFailed, InvalidAction, VdeskError
from vdesk.integrations.operator import ExecuteRequest, Operator, ScreenshotOutput

if TYPE_CHECKING:
    from vdesk.desktop import Desktop

__all__ = [
    "MAX_SCROLL_NOTCHES",
    "PIXELS_PER_NOTCH",
    "WAIT_SECONDS",
    "OpenAICall",
    "OpenAIComputer",
    "call_output",
    "first_input",
    "notches",
    "responses_request",
    "screenshot_output",
    "tool_definition",
    "translate",
    "translate_call",
]

#: Pixels of scroll delta per mouse-wheel notch (about what one notch scrolls in a browser).
PIXELS_PER_NOTCH = 100
#: The most notches one scroll may ask for (BaseAction's limit on ``amount``).
MAX_SCROLL_NOTCHES = 100
#: How long an OpenAI ``wait`` (which carries no duration) waits, in seconds.
WAIT_SECONDS = 1.0

Pixel = Annotated[int, Strict(), Field(ge=0)]
Delta = Annotated[int, Strict()]
KeyName = Annotated[str, Strict(), Field(min_length=1)]
HeldKeys = list[KeyName] | None


class _Action(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    type: str


class Click(_Action):
    """``click {button, x, y}``."""

    button: Literal["left", "right", "wheel", "back", "forward"]
    x: Pixel
    y: Pixel
    keys: HeldKeys = None


class DoubleClick(_Action):
    """``double_click {x, y}``."""

    x: Pixel
    y: Pixel
    button: Literal["left"] | None = None
    keys: HeldKeys = None


class PathPoint(BaseModel):
    """One ``{x, y}`` point of a drag path."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    x: Pixel
    y: Pixel


class Drag(_Action):
    """``drag {path: [{x, y}, ...]}``: press at the first point, move through the rest,
    release at the last."""

    path: list[PathPoint] = Field(min_length=2)


class Keypress(_Action):
    """``keypress {keys: ["CTRL", "L"]}``: one combination."""

    keys: list[KeyName] = Field(min_length=1)


class Move(_Action):
    """``move {x, y}``."""

    x: Pixel
    y: Pixel


class Scroll(_Action):
    """``scroll {x, y, scroll_x, scroll_y}``: pixel deltas, positive ``scroll_y`` is down."""

    x: Pixel
    y: Pixel
    scroll_x: Delta
    scroll_y: Delta
    keys: HeldKeys = None


class TypeText(_Action):
    """``type {text}``."""

    text: Annotated[str, Strict()]


class Wait(_Action):
    """``wait {}``."""


class Screenshot(_Action):
    """``screenshot {}``."""


_MODELS: dict[str, type[_Action]] = {
    "click": Click, "double_click": DoubleClick, "drag": Drag, "keypress": Keypress,
    "move": Move, "scroll": Scroll, "type": TypeText, "wait": Wait, "screenshot": Screenshot,
}


@dataclass(frozen=True)
class OpenAICall:
    """What a ``computer_call`` asks for: actions to run, then whether to send a screenshot.

    Every ``computer_call`` is answered with a screenshot anyway; ``observation`` says the
    model asked for nothing but one.
    """

    actions: list[BaseAction]
    observation: Literal["screenshot"] | None = None


def translate(action: dict[str, Any]) -> OpenAICall:
    """Translate one ``computer_call`` action into BaseActions.

    Raises :class:`InvalidAction` naming the offending action type or field.

    Examples:
        >>> translate({"type": "click", "button": "right", "x": 5, "y": 6}).actions[0].type.value
        'right_click'
    """
    parsed = _validate(action)
    try:
        return _build(parsed)
    except InvalidAction as error:
        raise InvalidAction(f"{parsed.type}: {error}") from None


def translate_call(call: dict[str, Any]) -> OpenAICall:
    """Translate a whole ``computer_call`` item, with its ``action`` or its ``actions`` batch."""
    if not isinstance(call, dict):
        raise InvalidAction(f"computer_call must be an object, got {type(call).__name__}")
    if "actions" in call and call["actions"] is not None:
        return _batch(call["actions"])
    if "action" not in call:
        raise InvalidAction("computer_call has neither action nor actions")
    return translate(call["action"])


def _batch(items: Any) -> OpenAICall:
    if not isinstance(items, list):
        raise InvalidAction(f"actions must be a list, got {type(items).__name__}")
    actions: list[BaseAction] = []
    screenshot = False
    for index, item in enumerate(items):
        try:
            step = translate(item)
        except InvalidAction as error:
            raise InvalidAction(f"actions[{index}]: {error}") from None
        actions.extend(step.actions)
        screenshot = screenshot or step.observation == "screenshot"
    return OpenAICall(actions, "screenshot" if screenshot else None)


# --- validation -------------------------------------------------------------------------------


def _validate(action: Any) -> _Action:
    if not isinstance(action, dict):
        raise InvalidAction(f"computer action must be an object, got {type(action).__name__}")
    kind = action.get("type")
    if kind is None:
        raise InvalidAction("computer action has no type")
    if not isinstance(kind, str) or kind not in _MODELS:
        raise InvalidAction(f"unknown computer action type {kind!r}")
    try:
        return _MODELS[kind].model_validate(action)
    except ValidationError as error:
        raise InvalidAction(f"{kind}: {validation_message(error)}") from None


def _held(names: list[str] | None) -> list[str]:
    for name in names or ():
        _known([name])
    return list(names or ())


def _known(names: list[str]) -> None:
    try:
        keys.combination(names)
    except InvalidAction as error:
        raise InvalidAction(f"keys: {error}") from None


# --- building actions -------------------------------------------------------------------------


def _raw(x: int, y: int) -> dict[str, Any]:
    return {"raw": {"x": x, "y": y}}


def _build(action: _Action) -> OpenAICall:
    if isinstance(action, Screenshot):
        return OpenAICall([], observation="screenshot")
    return OpenAICall(_BUILDERS[type(action)](action))


_CLICK_TYPES = {"left": "click", "right": "right_click", "wheel": "middle_click"}


def _click(action: Click) -> list[BaseAction]:
    if action.button not in _CLICK_TYPES:
        raise InvalidAction(
            f"button {action.button!r} is not supported (vdesk clicks left, right and wheel)"
        )
    kind = _CLICK_TYPES[action.button]
    return [BaseAction.of(kind, point=_raw(action.x, action.y), modifiers=_held(action.keys))]


def _double_click(action: DoubleClick) -> list[BaseAction]:
    point = _raw(action.x, action.y)
    return [BaseAction.of("double_click", point=point, modifiers=_held(action.keys))]


def _drag(action: Drag) -> list[BaseAction]:
    points = [_raw(p.x, p.y) for p in action.path]
    if len(points) == 2:
        return [BaseAction.of("drag", start=points[0], end=points[1])]
    return (
        [BaseAction.of("mouse_down", point=points[0], button="left")]
        + [BaseAction.of("mouse_move", point=point) for point in points[1:-1]]
        + [BaseAction.of("mouse_up", point=points[-1], button="left")]
    )


def _keypress(action: Keypress) -> list[BaseAction]:
    _known(action.keys)
    return [BaseAction.of("hotkey", key=list(action.keys))]


def _move(action: Move) -> list[BaseAction]:
    return [BaseAction.of("mouse_move", point=_raw(action.x, action.y))]


def notches(pixels: int) -> int:
    """Wheel notches for a scroll of ``pixels`` (either sign): rounded half up, at least 1
    for any non-zero delta, 0 for none."""
    if pixels == 0:
        return 0
    return max(1, (abs(pixels) + PIXELS_PER_NOTCH // 2) // PIXELS_PER_NOTCH)


def _scroll(action: Scroll) -> list[BaseAction]:
    point = _raw(action.x, action.y)
    steps = _scroll_steps(action)
    if not steps:
        return [BaseAction.of("mouse_move", point=point)]
    held = _held(action.keys)
    return [
        BaseAction.of("scroll", point=point, direction=direction, amount=amount, modifiers=held)
        for direction, amount in steps
    ]


def _scroll_steps(action: Scroll) -> list[tuple[str, int]]:
    """(direction, notches) for the vertical, then the horizontal delta; none for zero."""
    steps = []
    for field, delta, forward, backward in (
        ("scroll_y", action.scroll_y, "down", "up"),
        ("scroll_x", action.scroll_x, "right", "left"),
    ):
        amount = notches(delta)
        if amount > MAX_SCROLL_NOTCHES:
            limit = MAX_SCROLL_NOTCHES * PIXELS_PER_NOTCH
            raise InvalidAction(
                f"{field}: {delta} px is more than {limit} px ({MAX_SCROLL_NOTCHES} notches)"
            )
        if amount:
            steps.append((forward if delta > 0 else backward, amount))
    return steps


def _type(action: TypeText) -> list[BaseAction]:
    return [BaseAction.of("type", content=action.text)]


def _wait(action: Wait) -> list[BaseAction]:
    return [BaseAction.of("wait", time=WAIT_SECONDS)]


_BUILDERS: dict[type[_Action], Any] = {
    Click: _click, DoubleClick: _double_click, Drag: _drag, Keypress: _keypress,
    Move: _move, Scroll: _scroll, TypeText: _type, Wait: _wait,
}


# --- running actions against a desktop --------------------------------------------------------


class OpenAIComputer:
    """Runs OpenAI ``computer_call`` actions on a desktop and answers with a screenshot.

    ``image`` is the size of the screenshots the model is shown (default: the logical screen);
    ``x``/``y`` it sends are pixels of that image.

    Errors are split by whose they are:

    * the **model's** — an unknown action or field, a bad key name, a point outside the
      screenshot — raise :class:`InvalidAction` naming the field or quoting the value, before
      anything reaches the desktop; the caller tells the model (the wire format has no error
      field for a ``computer_call_output``);
    * the **desktop's** — the action or the screenshot failed while running — come back as a
      :class:`~vdesk.integrations.operator.ScreenshotOutput` with ``status="failed"`` and ``error_message``,
      as the operator contract folds them.

        computer = OpenAIComputer(desktop)
        shot = computer(item["action"])  # for each computer_call item
        next_input.append(call_output(item["call_id"], shot))
    """

    environment = "linux"

    def __init__(self, desktop: Desktop, image: ImageSpace | None = None, *,
                 settle_timeout: float = 5.0) -> None:
        self.desktop = desktop
        self.operator = Operator(desktop, image=image)
        self.image = self.operator.image
        self.settle_timeout = settle_timeout

    def tool_definition(self) -> dict[str, Any]:
        """The ``computer_use_preview`` tool spec, with the screenshot size as the display."""
        return tool_definition(self.image, self.environment)

    def __call__(self, action: dict[str, Any]) -> ScreenshotOutput:
        """Run one action (``{"type": ...}``) or a whole ``computer_call`` item (with
        ``action`` or ``actions``), then return the screen it led to."""
        is_item = isinstance(action, dict) and (
            action.get("type") == "computer_call" or "action" in action or "actions" in action)
        call = translate_call(action) if is_item else translate(action)
        self.operator.plan(call.actions)  # resolves every point: raises before anything runs
        if call.actions:
            request = ExecuteRequest(actions=call.actions)
            result = self.operator.execute(request)
            if result.status != "success":
                return ScreenshotOutput(status="failed", error_message=result.error_message)
            try:
                self.desktop.screen.settle(timeout=self.settle_timeout)
            except VdeskError as error:  # the desktop went away: folded, as the contract says
                return ScreenshotOutput(status="failed", error_message=f"{type(error).__name__}: {error}")
        return self.operator.screenshot()


def call_output(call_id: str, shot: ScreenshotOutput) -> dict[str, Any]:
    """The ``computer_call_output`` input item that answers ``call_id`` with ``shot``."""
    if shot.status != "success":
        raise ActionFailed(f"no screenshot to send: {shot.error_message}")
    return screenshot_output(call_id, f"data:{shot.content_type};base64,{shot.base64}")


# --- the Responses API's messages -------------------------------------------------------------


def tool_definition(image: ImageSpace, environment: str = "linux") -> dict[str, Any]:
    """The ``computer_use_preview`` tool spec for screenshots of size ``image``."""
    return {"type": "computer_use_preview", "display_width": image.width, "display_height": image.height,
            "environment": environment}


def screenshot_output(call_id: str, image_url: str,
                      acknowledged_safety_checks: list[Any] | None = None) -> dict[str, Any]:
    """The ``computer_call_output`` input item that answers ``call_id`` with the screenshot at
    ``image_url`` (a data URL), acknowledging the call's pending safety checks when given."""
    item: dict[str, Any] = {"type": "computer_call_output", "call_id": call_id}
    if acknowledged_safety_checks is not None:
        item["acknowledged_safety_checks"] = acknowledged_safety_checks
    item["output"] = {"type": "computer_screenshot", "image_url": image_url}
    return item


def first_input(instruction: str, image_url: str) -> list[dict[str, Any]]:
    """The input of a conversation's first request: the instruction and the first screenshot."""
    return [{"role": "user", "content": [{"type": "input_text", "text": instruction},
                                         {"type": "input_image", "image_url": image_url}]}]


def responses_request(model: str, tool: dict[str, Any], input: list[dict[str, Any]],
                      previous_response_id: str | None = None) -> dict[str, Any]:
    """The body of a Responses API request offering the computer tool ``tool`` (from
    :func:`tool_definition`), continuing ``previous_response_id`` when given."""
    request: dict[str, Any] = {"model": model, "tools": [tool], "truncation": "auto"}
    if previous_response_id is not None:
        request["previous_response_id"] = previous_response_id
    request["input"] = input
    return request

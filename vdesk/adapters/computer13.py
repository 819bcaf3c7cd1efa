"""OSWorld's ``computer_13`` action space → vdesk BaseActions.

An action is ``{"action_type": NAME, "parameters": {...}}``, or one of the bare strings
``"WAIT"``, ``"FAIL"`` and ``"DONE"``; a reply is one action or a list (JSON text or parsed):

=============== ================================================ =================================
action_type     parameters                                       becomes
=============== ================================================ =================================
MOVE_TO         x, y                                             mouse_move
CLICK           x?, y?, button? (left), num_clicks? (1..3)       click / double / triple / right …
MOUSE_DOWN/UP   button? (left)                                   mouse_down / mouse_up at the pointer
RIGHT_CLICK     x?, y?                                           right_click
DOUBLE_CLICK    x?, y?                                           double_click
DRAG_TO         x, y                                             drag from the pointer
SCROLL          dx?, dy? (notches; dy > 0 is up, dx > 0 right)   scroll
TYPING          text                                             type
PRESS           key                                              hotkey of that key
KEY_DOWN/UP     key                                              press / release
HOTKEY          keys (list)                                      hotkey
WAIT            —                                                a 2 s wait
FAIL / DONE     —                                                finished ("FAIL" / none)
=============== ================================================ =================================

Coordinates are pixels of the screenshot the agent saw. The operations are the pyautogui
adapter's :class:`~vdesk.adapters.pyautogui.Translator`, so both spaces mean the same thing by
each name (and track the pointer the same way). Every problem raises
:class:`~vdesk.errors.ParseError` naming the action's index and field.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vdesk.actions import validation_message
from vdesk.adapters.pyautogui import PyAutoGUIReply, Translator, parse as parse_code
from vdesk.errors import InvalidAction, ParseError

__all__ = ["parse"]

Coordinate = Annotated[float, Field(allow_inf_nan=False)]
Button = Literal["left", "right", "middle"]


class _Action(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Point(_Action):
    x: Coordinate | None = None
    y: Coordinate | None = None

    def point(self) -> tuple[float, float] | None:
        if (self.x is None) != (self.y is None):
            raise ValueError("give both x and y, or neither")
        return None if self.x is None or self.y is None else (self.x, self.y)


class _Target(_Action):
    x: Coordinate
    y: Coordinate


class _Click(_Point):
    button: Button = "left"
    num_clicks: int = Field(default=1, ge=1, le=3)


class _Button(_Action):
    button: Button = "left"


class _Scroll(_Action):
    dx: int = Field(default=0, ge=-10_000, le=10_000)
    dy: int = Field(default=0, ge=-10_000, le=10_000)


class _Typing(_Action):
    text: str


class _Key(_Action):
    key: str


class _Hotkey(_Action):
    keys: list[str] = Field(min_length=1)


class _Empty(_Action):
    pass


_PARAMETERS: dict[str, type[_Action]] = {
    "MOVE_TO": _Target, "CLICK": _Click, "MOUSE_DOWN": _Button, "MOUSE_UP": _Button,
    "RIGHT_CLICK": _Point, "DOUBLE_CLICK": _Point, "DRAG_TO": _Target, "SCROLL": _Scroll,
    "TYPING": _Typing, "PRESS": _Key, "KEY_DOWN": _Key, "KEY_UP": _Key, "HOTKEY": _Hotkey,
    "WAIT": _Empty, "FAIL": _Empty, "DONE": _Empty,
}
_SPECIAL = ("WAIT", "FAIL", "DONE")


class _Envelope(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action_type: str
    parameters: dict[str, Any] = Field(default_factory=dict)


def parse(reply: Any, *, pointer: tuple[float, float] | None = None) -> PyAutoGUIReply:
    """Parse a ``computer_13`` reply (JSON text, a dict, a string such as ``"DONE"``, or a list).

    ``pointer`` is where the mouse is, for DRAG_TO and clicks without a point.
    """
    items = _items(reply)
    translator = Translator(pointer)
    verdict = None
    for index, item in enumerate(items):
        name, parameters = (item, {}) if isinstance(item, str) else (item.action_type, item.parameters)
        name = name.strip().upper()
        if verdict is not None:
            raise ParseError(f"action {index}: {name} comes after {verdict.upper()}, which ends the episode")
        try:
            special = _apply(translator, name, parameters)
        except (ValidationError, ValueError, InvalidAction) as error:
            message = validation_message(error) if isinstance(error, ValidationError) else str(error)
            raise ParseError(f"action {index} ({name}): {message.removeprefix('action 0: ')}") from None
        if special is not None:
            translator.actions.extend(special.actions)
            verdict = special.verdict
    return PyAutoGUIReply(translator.actions, verdict, json.dumps([_plain(i) for i in items]))


def _items(reply: Any) -> list[_Envelope | str]:
    if isinstance(reply, (str, bytes)):
        text = reply.decode(errors="replace") if isinstance(reply, bytes) else reply
        if text.strip().upper() in _SPECIAL:
            return [text.strip().upper()]
        try:
            reply = json.loads(text)
        except json.JSONDecodeError as error:
            raise ParseError(f"not a computer_13 action (JSON, or WAIT/FAIL/DONE): {error}") from None
    raw = reply if isinstance(reply, list) else [reply]
    if not raw:
        raise ParseError("no action in an empty list")
    items: list[_Envelope | str] = []
    for index, item in enumerate(raw):
        if isinstance(item, str):
            items.append(item)
            continue
        if not isinstance(item, dict):
            raise ParseError(f"action {index}: a computer_13 action is an object with action_type and "
                             f"parameters, or WAIT/FAIL/DONE; got {type(item).__name__}")
        try:
            items.append(_Envelope.model_validate(item))
        except ValidationError as error:
            raise ParseError(f"action {index}: {validation_message(error)}") from None
    return items


def _apply(translator: Translator, name: str, parameters: dict[str, Any]) -> PyAutoGUIReply | None:
    model = _PARAMETERS.get(name)
    if model is None:
        raise ValueError(f"unknown action_type {name!r}; known: {', '.join(_PARAMETERS)}")
    p: Any = model.model_validate(parameters)
    if name in _SPECIAL:
        return parse_code(name)
    if name == "MOVE_TO":
        translator.move((p.x, p.y))
    elif name == "CLICK":
        translator.click(p.point(), p.button, p.num_clicks)
    elif name in ("MOUSE_DOWN", "MOUSE_UP"):
        translator.button(name == "MOUSE_DOWN", None, p.button)
    elif name == "RIGHT_CLICK":
        translator.click(p.point(), "right")
    elif name == "DOUBLE_CLICK":
        translator.click(p.point(), "left", 2)
    elif name == "DRAG_TO":
        translator.drag((p.x, p.y))
    elif name == "SCROLL":
        if p.dx:
            translator.scroll(p.dx, None, horizontal=True)
        if p.dy:
            translator.scroll(p.dy, None)
    elif name == "TYPING":
        translator.write(p.text)
    elif name == "PRESS":
        translator.hotkey([p.key])
    elif name in ("KEY_DOWN", "KEY_UP"):
        translator.key(name == "KEY_DOWN", p.key)
    else:  # HOTKEY
        translator.hotkey(p.keys)
    return None


def _plain(item: _Envelope | str) -> Any:
    return item if isinstance(item, str) else item.model_dump()

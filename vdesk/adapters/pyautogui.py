"""pyautogui code, as OSWorld agents write it → vdesk BaseActions. The code is parsed, never run.

OSWorld's default action space is Python source that calls pyautogui, e.g.
``pyautogui.click(100, 200); pyautogui.write('hello')``. :func:`parse` reads it in this order,
one function each:

1. :func:`_special`: a reply that is only ``DONE``, ``FAIL`` or ``WAIT`` (OSWorld's special
   actions) becomes ``finished``, ``finished`` with content ``"FAIL"``, or a 2 s ``wait``.
2. :func:`_code`: the code itself — the fenced blocks (```` ```python … ``` ````) when the reply
   has any, otherwise the whole reply.
3. :func:`_statements`: :mod:`ast` parses it (never ``eval``/``exec``); each statement must be
   ``import pyautogui`` or ``import time``, an assignment of a literal to ``pyautogui.FAILSAFE``
   or ``pyautogui.PAUSE`` (no effect here), or a call of ``pyautogui.<function>`` or
   ``time.sleep``.
4. :func:`_arguments`: every argument is a literal — a number, string, boolean, ``None``, a
   tuple or list of literals — or arithmetic (``+ - * / // %``, unary ``-``) on numbers; with
   set-of-marks, ``tag_N`` names the centre of mark N (OSWorld's som agents write
   ``pyautogui.click(tag_3)``) when the caller gives the marks' centres.
5. :class:`Translator` binds the arguments to the function's pyautogui signature and builds the
   BaseActions, tracking the pointer so that ``moveRel``, ``dragTo`` and ``click()`` without a
   point know where they start.

Anything else — another module, a loop, a name, an attribute outside pyautogui, a call inside
an argument — raises :class:`~vdesk.errors.ParseError` quoting the statement; nothing runs.
Coordinates are pixels of the screenshot the agent saw (``raw``), as in pyautogui on the
reference VM, where screenshots are taken at the screen's size.
"""

from __future__ import annotations

import ast
import inspect
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from vdesk.actions import BaseAction
from vdesk.errors import InvalidAction, ParseError

__all__ = ["WAIT_SECONDS", "PyAutoGUIReply", "Translator", "Verdict", "parse"]

Verdict = Literal["done", "fail"]
Point = tuple[float, float]

WAIT_SECONDS = 2.0
"""How long the special action ``WAIT`` waits: the reference environment's pause per step."""

MAX_REPLY_CHARS = 100_000
"""Longer replies are refused before parsing: no agent writes that much code for one step."""

MAX_SCROLL_PER_ACTION = 100
"""A BaseAction scrolls at most this many notches; a longer pyautogui scroll becomes several."""

# pyautogui's key names that vdesk's key table spells differently (the rest it knows as they are).
_KEY_NAMES: dict[str, str] = {
    "shiftleft": "Shift_L", "shiftright": "Shift_R", "ctrlleft": "Control_L",
    "ctrlright": "Control_R", "altleft": "Alt_L", "altright": "Alt_R", "winleft": "Super_L",
    "winright": "Super_R", "optionleft": "Alt_L", "optionright": "Alt_R",
    "add": "KP_Add", "subtract": "KP_Subtract", "multiply": "KP_Multiply",
    "divide": "KP_Divide", "decimal": "KP_Decimal", "separator": "KP_Separator",
    "prntscrn": "Print", "prtscr": "Print", "playpause": "XF86AudioPlay",
    "nexttrack": "XF86AudioNext", "prevtrack": "XF86AudioPrev", "stop": "XF86AudioStop",
    "browserback": "XF86Back", "browserforward": "XF86Forward", "browserrefresh": "XF86Refresh",
    "browserhome": "XF86HomePage", "browsersearch": "XF86Search", "launchmail": "XF86Mail",
    "hanguel": "Hangul", "hangul": "Hangul", "hanja": "Hangul_Hanja", "kana": "Katakana",
    "kanji": "Kanji", "yen": "yen", "\r": "Return", "\n": "Return", "\t": "Tab",
    **{f"num{n}": f"KP_{n}" for n in range(10)},
}
_MODULES = frozenset({"pyautogui", "time"})
_SETTINGS = frozenset({"FAILSAFE", "PAUSE"})
_FENCE = re.compile(r"```[ \t]*(?:python|py)?[ \t]*\n(.*?)```", re.S | re.I)
_SPECIAL = re.compile(r"[`\s]*(DONE|FAIL|WAIT)[`\s.]*", re.I)


@dataclass(frozen=True)
class PyAutoGUIReply:
    """A parsed reply: the actions in order, and the agent's verdict when it said DONE or FAIL."""

    actions: list[BaseAction]
    verdict: Verdict | None
    code: str


def parse(text: str, *, pointer: Point | None = None, tags: Mapping[str, Point] | None = None) -> PyAutoGUIReply:
    """Parse one reply of pyautogui code into BaseActions without running any of it.

    ``pointer`` is where the mouse is (screenshot pixels), for calls that start from it
    (``moveRel``, ``dragTo``, ``click()`` with no point); without it they are an error.
    ``tags`` are the set-of-marks names the code may use as points (``{"tag_1": (x, y)}``,
    screenshot pixels); any other name is an error.
    Raises :class:`~vdesk.errors.ParseError` quoting the part at fault.
    """
    if not isinstance(text, str):
        raise ParseError(f"pyautogui code must be text, got {type(text).__name__}")
    if len(text) > MAX_REPLY_CHARS:
        raise ParseError(f"a reply of {len(text):,} characters is longer than the {MAX_REPLY_CHARS:,} read")
    special = _special(text)
    if special is not None:
        return special
    code = _code(text)
    translator = Translator(pointer)
    for statement in _statements(code):
        if isinstance(statement, ast.Expr):
            call = statement.value
            assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            positional, keywords = _arguments(call, code, tags or {})
            translator.call(_dotted(call.func), positional, keywords, ast.get_source_segment(code, statement) or "")
    return PyAutoGUIReply(translator.actions, None, code)


# --------------------------------------------------------------------------- 1. special replies


def _special(text: str) -> PyAutoGUIReply | None:
    match = _SPECIAL.fullmatch(text)
    if not match:
        return None
    word = match.group(1).upper()
    if word == "WAIT":
        return PyAutoGUIReply([BaseAction.of("wait", time=WAIT_SECONDS)], None, word)
    if word == "DONE":
        return PyAutoGUIReply([BaseAction.of("finished")], "done", word)
    return PyAutoGUIReply([BaseAction.of("finished", content="FAIL")], "fail", word)


# --------------------------------------------------------------------------- 2. the code


def _code(text: str) -> str:
    blocks = _FENCE.findall(text)
    code = "\n".join(blocks) if blocks else text
    if not code.strip():
        raise ParseError('empty reply: no pyautogui code in ""' if not text.strip() else
                         f"no pyautogui code in {_quote(text)}")
    return code


# --------------------------------------------------------------------------- 3. statements


def _statements(code: str) -> list[ast.stmt]:
    try:
        tree = ast.parse(code, mode="exec")
    except SyntaxError as error:
        where = f" (line {error.lineno}, column {error.offset})" if error.lineno else ""
        raise ParseError(f"not valid Python{where}: {error.msg}: {_quote(code)}") from None
    except (ValueError, RecursionError, MemoryError):  # null bytes, absurd nesting
        raise ParseError(f"not valid Python: {_quote(code)}") from None
    for statement in tree.body:
        _check_statement(statement, code)
    return tree.body


def _check_statement(statement: ast.stmt, code: str) -> None:
    source = _quote(ast.get_source_segment(code, statement) or ast.dump(statement))
    if isinstance(statement, ast.Import):
        others = [alias.name for alias in statement.names if alias.name not in _MODULES or alias.asname]
        if others:
            raise ParseError(f"only `import pyautogui` and `import time` are allowed, not {source}")
        return
    if isinstance(statement, ast.Assign):
        target = statement.targets[0] if len(statement.targets) == 1 else None
        if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                and _dotted(target) in {f"pyautogui.{s}" for s in _SETTINGS}
                and isinstance(statement.value, ast.Constant)):
            return  # FAILSAFE / PAUSE: settings of the real library, with no effect here
        raise ParseError(f"assignments are not allowed (only pyautogui.FAILSAFE/PAUSE = literal): {source}")
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id == "pyautogui" and func.attr in Translator.FUNCTIONS:
                return
            if func.value.id == "time" and func.attr == "sleep":
                return
        raise ParseError(f"only pyautogui's input functions and time.sleep can be called, not {source}")
    if isinstance(statement, ast.Pass):
        return
    kind = type(statement).__name__.lower()
    raise ParseError(f"only calls of pyautogui functions are allowed, not a {kind} statement: {source}")


def _dotted(node: ast.Attribute) -> str:
    assert isinstance(node.value, ast.Name)
    return f"{node.value.id}.{node.attr}"


# --------------------------------------------------------------------------- 4. arguments

_OPERATORS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
}


def _arguments(call: ast.Call, code: str, tags: Mapping[str, Point]) -> tuple[list[Any], dict[str, Any]]:
    source = ast.get_source_segment(code, call) or ""
    positional = []
    for node in call.args:
        if isinstance(node, ast.Starred):
            raise ParseError(f"*arguments are not allowed: {_quote(source)}")
        positional.append(_literal(node, source, tags))
    keywords = {}
    for keyword in call.keywords:
        if keyword.arg is None:
            raise ParseError(f"**arguments are not allowed: {_quote(source)}")
        keywords[keyword.arg] = _literal(keyword.value, source, tags)
    return positional, keywords


def _literal(node: ast.expr, source: str, tags: Mapping[str, Point]) -> Any:
    """The value of a literal argument (or a set-of-marks tag); anything that would need
    running code is refused."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool, type(None))):
        return node.value
    if isinstance(node, ast.Name) and node.id in tags:
        return list(tags[node.id])
    if isinstance(node, (ast.Tuple, ast.List)):
        return [_literal(item, source, tags) for item in node.elts]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _number(node.operand, source, tags)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _number(node.left, source, tags), _number(node.right, source, tags)
        try:
            value = _OPERATORS[type(node.op)](left, right)
        except ZeroDivisionError:
            raise ParseError(f"division by zero in {_quote(source)}") from None
        if not math.isfinite(value) or abs(value) > 1e9:
            raise ParseError(f"a number out of range in {_quote(source)}")
        return value
    raise ParseError(f"arguments must be literals (numbers, strings, lists), not "
                     f"{_quote(ast.unparse(node))} in {_quote(source)}")


def _number(node: ast.expr, source: str, tags: Mapping[str, Point]) -> int | float:
    value = _literal(node, source, tags)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParseError(f"arithmetic works on numbers only: {_quote(source)}")
    if not math.isfinite(value) or abs(value) > 1e9:
        raise ParseError(f"a number out of range in {_quote(source)}")
    return value


# --------------------------------------------------------------------------- 5. translation


def _signature(*names: str, required: int = 0, **defaults: Any) -> inspect.Signature:
    """A pyautogui function's parameters: ``names`` in order (the first ``required`` without a
    default, the rest defaulting to None unless given in ``defaults``)."""
    parameters = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                    **({} if i < required else {"default": defaults.get(n)}))
                  for i, n in enumerate(names)]
    return inspect.Signature(parameters)


# Parameters the real functions take that change nothing here (timing, logging, tweening).
_IGNORED = ("duration", "tween", "logScreenshot", "_pause", "interval", "mouseDownUp")
_POINT_CLICK = _signature("x", "y", "clicks", "interval", "button", "duration", "tween",
                          "logScreenshot", "_pause", clicks=1, button="left")
_POINT_BUTTON = _signature("x", "y", "interval", "button", "duration", "tween", "logScreenshot",
                           "_pause", button="left")
_POINT_ONLY = _signature("x", "y", "duration", "tween", "logScreenshot", "_pause")
_DRAG = _signature("x", "y", "duration", "tween", "button", "logScreenshot", "_pause", "mouseDownUp",
                   button="left")
_PRESS_BUTTON = _signature("x", "y", "button", "duration", "tween", "logScreenshot", "_pause",
                           button="left")
_SCROLL = _signature("clicks", "x", "y", "logScreenshot", "_pause", required=1)
_WRITE = _signature("message", "interval", "logScreenshot", "_pause", required=1)
_PRESS = _signature("keys", "presses", "interval", "logScreenshot", "_pause", required=1, presses=1)
_KEY = _signature("key", "logScreenshot", "_pause", required=1)
_SLEEP = _signature("seconds", required=1)


@dataclass
class Translator:
    """Builds BaseActions from pyautogui calls, tracking where the pointer is.

    Also the back end of the ``computer_13`` action space, which names the same operations.
    """

    pointer: Point | None = None
    actions: list[BaseAction] = field(default_factory=list)

    FUNCTIONS = frozenset({
        "click", "doubleClick", "tripleClick", "rightClick", "middleClick", "moveTo", "moveRel",
        "move", "dragTo", "dragRel", "drag", "mouseDown", "mouseUp", "scroll", "hscroll", "vscroll",
        "typewrite", "write", "press", "hotkey", "keyDown", "keyUp",
    })

    def call(self, name: str, positional: list[Any], keywords: dict[str, Any], source: str) -> None:
        """Translate ``pyautogui.click(...)``-style call ``name`` (dotted) with literal arguments."""
        try:
            if name == "time.sleep":
                self.sleep(self._bind(_SLEEP, positional, keywords)["seconds"])
            elif name == "pyautogui.hotkey":
                keywords = {k: v for k, v in keywords.items() if k not in _IGNORED}
                if keywords:
                    raise TypeError(f"unexpected keyword argument {next(iter(keywords))!r}")
                self.hotkey(positional)
            else:
                getattr(self, "_" + name.removeprefix("pyautogui."))(positional, keywords)
        except (TypeError, ValueError, InvalidAction) as error:
            message = str(error).removeprefix("action 0: ")
            raise ParseError(f"{message}: {_quote(source)}") from None

    # -- operations, shared with computer_13 -------------------------------------------------
    def click(self, point: Point | None, button: str = "left", clicks: int = 1) -> None:
        at = self._at(point, "a click")
        if clicks == 0:
            self.pointer = at
            return self.move(at)
        kind = {(1, "left"): "click", (2, "left"): "double_click", (3, "left"): "triple_click",
                (1, "right"): "right_click", (1, "middle"): "middle_click"}.get((clicks, _button(button)))
        if kind is None:
            raise ValueError(f"{clicks} clicks of the {button} button cannot be expressed; use 1 "
                             "(any button) or 2-3 (left)")
        self._add(kind, point=list(at))
        self.pointer = at

    def move(self, point: Point) -> None:
        self._add("mouse_move", point=list(point))
        self.pointer = point

    def drag(self, end: Point, button: str = "left") -> None:
        start = self._at(None, "a drag")
        if _button(button) == "left":
            self._add("drag", start=list(start), end=list(end))
        else:
            self._add("mouse_down", point=list(start), button=_button(button))
            self._add("mouse_move", point=list(end))
            self._add("mouse_up", point=list(end), button=_button(button))
        self.pointer = end

    def button(self, down: bool, point: Point | None, button: str = "left") -> None:
        inputs: dict[str, Any] = {"button": _button(button)}
        if point is not None:
            inputs["point"] = list(point)
            self.pointer = point
        self._add("mouse_down" if down else "mouse_up", **inputs)

    def scroll(self, notches: int, point: Point | None, horizontal: bool = False) -> None:
        if isinstance(notches, bool) or not isinstance(notches, int) and not float(notches).is_integer():
            raise ValueError(f"scroll clicks must be a whole number, got {notches!r}")
        notches = int(notches)
        if point is not None:
            self.pointer = point
        direction = ("right" if notches > 0 else "left") if horizontal else ("up" if notches > 0 else "down")
        remaining = abs(notches)
        while remaining:
            amount = min(remaining, MAX_SCROLL_PER_ACTION)
            inputs: dict[str, Any] = {"direction": direction, "amount": amount}
            if point is not None:
                inputs["point"] = list(point)
            self._add("scroll", **inputs)
            remaining -= amount

    def write(self, message: str | list[str]) -> None:
        if isinstance(message, list):  # a list is key names, pressed one after another
            for key in message:
                self.hotkey([key])
        elif not isinstance(message, str):
            raise ValueError(f"the message must be a string or a list of key names, got {message!r}")
        elif message:
            self._add("type", content=message)

    def hotkey(self, keys: list[Any]) -> None:
        self._add("hotkey", key=[_key(k) for k in keys] if keys else [])

    def key(self, down: bool, key: Any) -> None:
        self._add("press" if down else "release", key=_key(key))

    def sleep(self, seconds: Any) -> None:
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            raise ValueError(f"sleep takes a number of seconds, got {seconds!r}")
        self._add("wait", time=seconds)

    # -- pyautogui's functions ---------------------------------------------------------------
    def _click(self, positional: list[Any], keywords: dict[str, Any]) -> None:
        args = self._bind(_POINT_CLICK, positional, keywords)
        self.click(_point(args), args["button"], _count(args["clicks"]))

    def _doubleClick(self, positional: list[Any], keywords: dict[str, Any]) -> None:
        args = self._bind(_POINT_BUTTON, positional, keywords)
        self.click(_point(args), args["button"], 2)

    def _tripleClick(self, positional: list[Any], keywords: dict[str, Any]) -> None:
        args = self._bind(_POINT_BUTTON, positional, keywords)
        self.click(_point(args), args["button"], 3)

    def _rightClick(self, positional: list[Any], keywords: dict[str, Any]) -> None:
        self.click(_point(self._bind(_POINT_ONLY, positional, keywords)), "right")

    def _middleClick(self, positional: list[Any], keywords: dict[str, Any]) -> None:
        self.click(_point(self._bind(_POINT_ONLY, positional, keywords)), "middle")

    def _moveTo(self, positional: list[Any], keywords: dict[str, Any]) -> None:
        self.move(self._absolute(self._bind(_POINT_ONLY, positional, keywords), "moveTo"))

    def _moveRel(self, positional: list[Any], keywords: dict[str, Any]) -> None:
        self.move(self._relative(self._bind(_POINT_ONLY, positional, keywords), "moveRel"))

    _move = _moveRel

    def _dragTo(self, positional: list[Any], keywords: dict[str, Any]) -> None:
        args = self._bind(_DRAG, positional, keywords)
        self.drag(self._absolute(args, "dragTo"), args["button"])

    def _dragRel(self, positional: list[Any], keywords: dict[str, Any]) -> None:
        args = self._bind(_DRAG, positional, keywords)
        self.drag(self._relative(args, "dragRel"), args["button"])

    _drag = _dragRel

    def _mouseDown(self, positional: list[Any], keywords: dict[str, Any]) -> None:
        args = self._bind(_PRESS_BUTTON, positional, keywords)
        self.button(True, _point(args), args["button"])

    def _mouseUp(self, positional: list[Any], keywords: dict[str, Any]) -> None:
        args = self._bind(_PRESS_BUTTON, positional, keywords)
        self.button(False, _point(args), args["button"])

    def _scroll(self, positional: list[Any], keywords: dict[str, Any]) -> None:
        args = self._bind(_SCROLL, positional, keywords)
        self.scroll(args["clicks"], _point(args))

    _vscroll = _scroll

    def _hscroll(self, positional: list[Any], keywords: dict[str, Any]) -> None:
        args = self._bind(_SCROLL, positional, keywords)
        self.scroll(args["clicks"], _point(args), horizontal=True)

    def _typewrite(self, positional: list[Any], keywords: dict[str, Any]) -> None:
        self.write(self._bind(_WRITE, positional, keywords)["message"])

    _write = _typewrite

    def _press(self, positional: list[Any], keywords: dict[str, Any]) -> None:
        args = self._bind(_PRESS, positional, keywords)
        keys = args["keys"] if isinstance(args["keys"], list) else [args["keys"]]
        for _ in range(_count(args["presses"], limit=100)):
            for key in keys:
                self.hotkey([key])

    def _keyDown(self, positional: list[Any], keywords: dict[str, Any]) -> None:
        self.key(True, self._bind(_KEY, positional, keywords)["key"])

    def _keyUp(self, positional: list[Any], keywords: dict[str, Any]) -> None:
        self.key(False, self._bind(_KEY, positional, keywords)["key"])

    # -- helpers ------------------------------------------------------------------------------
    @staticmethod
    def _bind(signature: inspect.Signature, positional: list[Any], keywords: dict[str, Any]) -> dict[str, Any]:
        bound = signature.bind(*positional, **keywords)
        bound.apply_defaults()
        return dict(bound.arguments)

    def _at(self, point: Point | None, what: str) -> Point:
        if point is not None:
            return point
        if self.pointer is None:
            raise ValueError(f"{what} without x, y starts at the pointer, whose position is not known here")
        return self.pointer

    def _absolute(self, args: dict[str, Any], name: str) -> Point:
        """The target of moveTo/dragTo; like pyautogui, a missing x or y keeps the pointer's."""
        if isinstance(args["x"], list) or (args["x"] is not None and args["y"] is not None):
            point = _point(args)
            assert point is not None
            return point
        if self.pointer is None:
            raise ValueError(f"{name} without both x and y needs the pointer's position, not known here")
        x, y = args["x"], args["y"]
        return (self.pointer[0] if x is None else _coordinate(x, "x"),
                self.pointer[1] if y is None else _coordinate(y, "y"))

    def _relative(self, args: dict[str, Any], name: str) -> Point:
        if self.pointer is None:
            raise ValueError(f"{name} moves from the pointer, whose position is not known here")
        dx, dy = (_coordinate(args.get(k) or 0, k) for k in ("x", "y"))
        return (self.pointer[0] + dx, self.pointer[1] + dy)

    def _add(self, kind: str, **inputs: Any) -> None:
        self.actions.append(BaseAction.of(kind, **inputs))


def _point(args: dict[str, Any]) -> Point | None:
    """``x, y`` from bound arguments; ``x`` may itself be an ``(x, y)`` pair."""
    x, y = args.get("x"), args.get("y")
    if isinstance(x, str):
        raise ValueError("locating an image on the screen is not supported; give x and y")
    if isinstance(x, list):
        if len(x) != 2 or y is not None:
            raise ValueError(f"a point is two numbers, got {x!r}")
        x, y = x
    if x is None and y is None:
        return None
    if x is None or y is None:
        raise ValueError("give both x and y, or neither")
    return (_coordinate(x, "x"), _coordinate(y, "y"))


def _coordinate(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    return value


def _count(value: Any, limit: int = 3) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= limit:
        raise ValueError(f"a count must be a whole number from 0 to {limit}, got {value!r}")
    return value


def _button(name: Any) -> str:
    button = {"left": "left", "right": "right", "middle": "middle", "primary": "left",
              "secondary": "right"}.get(name.lower() if isinstance(name, str) else name)
    if button is None:
        raise ValueError(f"unknown mouse button {name!r}: use left, right or middle")
    return button


def _key(name: Any) -> str:
    if not isinstance(name, str) or not name:
        raise ValueError(f"a key name must be a non-empty string, got {name!r}")
    return _KEY_NAMES.get(name.lower() if len(name) > 1 else name, name)


def _quote(text: str, limit: int = 160) -> str:
    text = text.strip()
    return '"' + (text if len(text) <= limit else text[: limit - 1] + "…") + '"'


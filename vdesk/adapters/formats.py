"""The one registry of the formats vdesk reads actions in: name → parser to BaseActions.

    batch = parse_payloads("anthropic", ['{"action": "left_click", "coordinate": [10, 10]}'], image)

The command line (``vdesk exec --format``), the harness and the MCP server read this table, so
a new format is added here once. A payload is text: UI-TARS reply text, or JSON for the others
(one object or a list of them). Actions are numbered from 0 across all payloads, in the order
given, so "action 2" is the third action whichever payload it came in; every problem is an
:class:`InvalidAction` naming that number.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from vdesk.errors import InvalidAction, InvalidArgument, ParseError

if TYPE_CHECKING:  # types only: the table is read by `--help`, which validates no action
    from vdesk.actions import BaseAction
    from vdesk.coords import ImageSpace

Parser = Callable[[Any, "ImageSpace | None"], "list[BaseAction]"]


@dataclass(frozen=True)
class ModelFormat:
    """One format: its name, whether payloads are JSON, what it reads, and its parser.

    ``parse`` takes one item (a decoded JSON object for JSON formats, the text otherwise).
    """

    name: str
    is_json: bool
    help: str
    example: str
    parse: Parser


def _lazy(module: str, read: Callable[[ModuleType, Any, ImageSpace | None], list[BaseAction]]) -> Parser:
    """A parser that imports its adapter on first use: ``--help`` reads this table."""
    return lambda item, image: read(importlib.import_module(module), item, image)


FORMATS: dict[str, ModelFormat] = {f.name: f for f in (
    ModelFormat("base", True, "BaseAction JSON",
                '{"type": "click", "inputs": {"point": {"raw": {"x": 640, "y": 400}}}}',
                _lazy("vdesk.actions", lambda m, item, image: [m.BaseAction.parse(item)])),
    ModelFormat("uitars", False, "UI-TARS reply text (Thought: … Action: …)",
                "Action: click(start_box='(500,500)')",
                _lazy("vdesk.adapters.uitars", lambda m, text, image: m.parse(text, image=image).actions)),
    ModelFormat("anthropic", True, "Anthropic computer-tool input JSON (or a reply's whole tool_use block)",
                '{"action": "left_click", "coordinate": [640, 400]}',
                _lazy("vdesk.adapters.anthropic", lambda m, item, image: m.translate_any(item).actions)),
    ModelFormat("anthropic_toolset", True, "Anthropic computer toolset tool_use blocks (name and input)",
                '{"name": "left_click", "input": {"coordinate": [640, 400]}}',
                _lazy("vdesk.adapters.anthropic", lambda m, item, image: m.translate_tool_use(m.toolset_block(item)).actions)),
    ModelFormat("openai", True, "OpenAI computer-use action JSON",
                '{"type": "click", "button": "left", "x": 640, "y": 400}',
                _lazy("vdesk.adapters.openai", lambda m, item, image: m.translate(item).actions)),
    ModelFormat("pyautogui", False, "OSWorld's pyautogui code (parsed, never run)",
                "pyautogui.click(640, 400); pyautogui.write('hello')",
                _lazy("vdesk.adapters.pyautogui", lambda m, text, image: m.parse(text).actions)),
    ModelFormat("computer_13", False, "OSWorld's computer_13 action JSON (one object or a list)",
                '{"action_type": "CLICK", "parameters": {"x": 640, "y": 400}}',
                # Read whole, not item by item: DRAG_TO and clicks without a point start where
                # the actions before them left the pointer.
                _lazy("vdesk.adapters.computer13", lambda m, text, image: m.parse(text).actions)),
)}


def model_format(name: str) -> ModelFormat:
    """The format called ``name``; :class:`InvalidArgument` lists the known ones."""
    try:
        return FORMATS[name]
    except KeyError:
        raise InvalidArgument(f"unknown format {name!r}: use one of {', '.join(FORMATS)}") from None


def parse_payloads(format: str, payloads: Sequence[str], image: ImageSpace | None = None) -> list[BaseAction]:
    """Every payload's actions as one batch, numbered from 0 across payloads."""
    reader = model_format(format)
    if not payloads:
        raise InvalidAction("no actions given")
    items = [item for number, payload in enumerate(payloads, 1) for item in _items(reader, payload, number, len(payloads))]
    batch: list[BaseAction] = []
    for index, item in enumerate(items):
        try:
            batch += reader.parse(item, image)
        except InvalidAction as error:
            raise InvalidAction(f"action {index}: {error}") from None
        except RecursionError:
            raise InvalidAction(f"action {index}: nested too deeply to read") from None
    return batch


def _items(reader: ModelFormat, payload: str, number: int, count: int) -> list[Any]:
    if not reader.is_json:
        return [payload]
    where = f"payload {number} of {count}" if count > 1 else "the payload"
    try:
        data = json.loads(payload)
    except json.JSONDecodeError as error:
        raise ParseError(f"{where} is not valid JSON ({error.msg} at line {error.lineno} column {error.colno}): "
                            f"{_quote(payload)}") from None
    except RecursionError:
        raise ParseError(f"{where} is nested too deeply to read: {_quote(payload)}") from None
    return data if isinstance(data, list) else [data]


def _quote(payload: str) -> str:
    return repr(payload if len(payload) <= 80 else payload[:80] + "…")

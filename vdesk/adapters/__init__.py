"""Adapters: what models emit, turned into BaseActions."""

from __future__ import annotations

import json
from typing import Any, Literal, get_args

from vdesk.actions import BaseAction, parse_batch
from vdesk.coords import ImageSpace
from vdesk.errors import InvalidArgument, ParseError

Format = Literal["base", "uitars", "anthropic", "openai"]
FORMATS: tuple[str, ...] = get_args(Format)


def to_actions(format: Format, payload: str, image: ImageSpace | None = None) -> list[BaseAction]:
    """Turn one model output (text for UI-TARS, JSON for the others) into BaseActions.

    Anthropic and OpenAI payloads are one tool input / action object or a list of them.
    Observations they ask for (screenshot, zoom, cursor position) carry no desktop input and
    are left to the caller.
    """
    if format not in FORMATS:
        raise InvalidArgument(f"format must be {', '.join(FORMATS)}, got {format!r}")
    if format == "uitars":
        from vdesk.adapters import uitars

        return uitars.parse(payload, image=image).actions
    data = _json(payload)
    items = data if isinstance(data, list) else [data]
    if format == "base":
        return parse_batch(items)
    if format == "anthropic":
        from vdesk.adapters import anthropic

        return [a for item in items for a in anthropic.translate(item).actions]
    from vdesk.adapters import openai

    return [a for item in items for a in openai.translate(item).actions]


def _json(payload: str) -> Any:
    try:
        return json.loads(payload)
    except json.JSONDecodeError as error:
        raise ParseError(f"not valid JSON ({error.msg} at line {error.lineno} column {error.colno}): "
                         f"{payload[:80]!r}") from None
    except RecursionError:
        raise ParseError(f"actions nested too deeply to read: {payload[:80]!r}") from None

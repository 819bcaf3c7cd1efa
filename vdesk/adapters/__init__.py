"""Adapters: what models emit, turned into BaseActions."""

from __future__ import annotations

import json
from typing import Literal

from vdesk.actions import BaseAction, parse_batch
from vdesk.coords import ImageSpace

Format = Literal["base", "uitars", "anthropic", "openai"]


def to_actions(format: Format, payload: str, image: ImageSpace | None = None) -> list[BaseAction]:
    """Turn one model output (text for UI-TARS, JSON for the others) into BaseActions.

    Anthropic and OpenAI payloads are one tool input / action object or a list of them.
    Observations they ask for (screenshot, zoom, cursor position) carry no desktop input and
    are left to the caller.
    """
    if format == "uitars":
        from vdesk.adapters import uitars

        return uitars.parse(payload, image=image).actions
    data = json.loads(payload)
    items = data if isinstance(data, list) else [data]
    if format == "base":
        return parse_batch(items)
    if format == "anthropic":
        from vdesk.adapters import anthropic

        return [a for item in items for a in anthropic.translate(item).actions]
    from vdesk.adapters import openai

    return [a for item in items for a in openai.translate(item).actions]

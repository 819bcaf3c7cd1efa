"""OSWorld's written solutions as BaseActions: a step of an action space, parsed, never run.

A ``pyautogui`` step is Python code an OSWorld agent would send (:mod:`vdesk.adapters.pyautogui`
reads it as a program of calls and runs none of it); a ``computer_13`` step is one of that
space's action dicts (:mod:`vdesk.adapters.computer13`).
"""

from __future__ import annotations

from typing import Any

from vdesk.actions import BaseAction
from vdesk.adapters import computer13, pyautogui
from vdesk.errors import InvalidAction
from vdesk.osworld.format import ActionSpace


def parse_step(space: ActionSpace, step: Any) -> list[BaseAction]:
    """One solution step of ``space`` as BaseActions: pyautogui code is parsed, never run."""
    if space == "pyautogui":
        if not isinstance(step, str):
            raise InvalidAction(f"a pyautogui step is code (a string), got {type(step).__name__}")
        return pyautogui.parse(step).actions
    return computer13.parse(step).actions

"""Getters of commands' output and of the task's own values: ``vm_command_line``,
``vm_command_error``, ``vm_terminal_output``, ``rule``, ``rule_relativeTime``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from vdesk.errors import CommandFailed
from vdesk.osworld import inside, relative_time
from vdesk.osworld.getters.registry import getter
from vdesk.osworld.steps import COMMAND_TIMEOUT, Context

TERMINAL_TIMEOUT = 20.0  # reading the terminal's accessible text, on a busy machine


@getter("vm_command_line")
def vm_command_line(context: Context, settings: dict[str, Any]) -> str:
    argv = context.argv(settings["command"], bool(settings.get("shell", False)))
    return context.call(inside.run, argv, COMMAND_TIMEOUT, timeout=COMMAND_TIMEOUT + 10).stdout


@getter("vm_command_error")
def vm_command_error(context: Context, settings: dict[str, Any]) -> str:
    argv = context.argv(settings["command"], bool(settings.get("shell", False)))
    return context.call(inside.run, argv, COMMAND_TIMEOUT, timeout=COMMAND_TIMEOUT + 10).stderr


@getter("vm_terminal_output")
def vm_terminal_output(context: Context, settings: dict[str, Any]) -> str | None:
    """What GNOME Terminal shows in its focused tab of the active window, read over AT-SPI as the
    reference's ``/terminal`` reads it; None when no terminal window is active."""
    return context.call(inside.terminal_text, TERMINAL_TIMEOUT, timeout=TERMINAL_TIMEOUT + 20)


@getter("rule")
def rule(context: Context, settings: dict[str, Any]) -> Any:
    return settings["rules"]


@getter("rule_relativeTime")
def rule_relative_time(context: Context, settings: dict[str, Any]) -> Any:
    """The rule with the dates its ``relativeTime`` phrases name written into ``expected``
    (see :mod:`vdesk.osworld.relative_time`), counted from the desktop's "now": its clock, as
    the programs in it see it, not this machine's."""
    stamp = context.call(inside.run, ["date", "+%Y-%m-%dT%H:%M:%S%:z"], 30).stdout.strip()
    try:
        now = datetime.fromisoformat(stamp)
    except ValueError:
        raise CommandFailed(f"rule_relativeTime: the desktop's date printed {stamp[:80]!r}, not a time") from None
    return relative_time.fill(settings["rules"], now)

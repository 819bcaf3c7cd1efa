"""The exceptions vdesk raises. Catch :class:`VdeskError` to catch them all."""

from __future__ import annotations


class VdeskError(Exception):
    """Base class of every error vdesk raises on purpose."""


class EngineUnavailable(VdeskError):
    """No Docker engine answers (not installed, not running, or not reachable)."""


class ImageError(VdeskError):
    """The desktop image is missing or could not be built."""


class DesktopNotFound(VdeskError):
    """No desktop of that name exists."""


class DesktopGone(VdeskError):
    """The desktop's container went away (killed, removed, or its X server died)."""


class DesktopTimeout(VdeskError):
    """An operation on a desktop did not finish within its timeout."""


class InvalidArgument(VdeskError, ValueError):
    """An argument that is not an action is wrong (a size, a name, a path, an option); nothing was done."""


class InvalidAction(VdeskError, ValueError):
    """An action is malformed or cannot be honoured on a desktop; nothing was executed."""


class UnknownKey(InvalidAction):
    """A key name that vdesk does not know. The message names it."""


class CommandFailed(VdeskError):
    """A program run inside the desktop exited with an error."""


class ParseError(InvalidAction):
    """A model reply could not be parsed; the message quotes the offending part."""


class MissingDependency(VdeskError, ImportError):
    """An optional dependency is not installed (e.g. Ray for :mod:`vdesk.cluster`); the message
    says how to get it. An :class:`ImportError` too, for code that imports optional parts."""


def first_line(error: BaseException, limit: int = 300) -> str:
    """The first line of an error's message (at most ``limit`` characters), or its type's name
    when it has none: for one-line reports of errors whose text may run over many lines."""
    text = str(error).strip()
    return text.splitlines()[0][:limit] if text else type(error).__name__

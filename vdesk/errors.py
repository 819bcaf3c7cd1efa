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


class ChannelLost(VdeskError):
    """The command channel into a desktop that still runs broke (its helper was killed, or it
    sent more than its bound); the command's end is unknown. The next call opens a new channel."""


class TooLarge(VdeskError):
    """A value coming out of a desktop is past its bound; the message names the bound and the
    argument that raises it."""

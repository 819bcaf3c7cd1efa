"""Every exception vdesk raises on purpose. Catch :class:`VdeskError` to catch them all.

::

    VdeskError
    ├── EngineUnavailable     no Docker engine answers
    ├── ImageError            the desktop image is missing or could not be built
    ├── CheckpointError       a desktop could not be checkpointed or forked from a checkpoint
    │   └── CheckpointUnavailable  the engine cannot checkpoint at all (says what is missing)
    ├── DesktopNotFound       no desktop of that name
    ├── DesktopGone           the desktop's container went away
    │   └── DesktopLost       the Ray actor or node hosting it died
    ├── DesktopTimeout        an operation did not finish within its timeout
    ├── ChannelLost           the command channel (or X connection) of a living desktop broke
    ├── TooLarge              a value out of a desktop is past its bound
    ├── PasswordRefused       the VNC server refused the password
    ├── ForkedProcess         frames asked for in a process forked from one that held them
    ├── CommandFailed         a program run in the desktop exited with an error
    ├── InvalidArgument       a bad size, name, path, option (also a ValueError)
    ├── MissingDependency     an optional dependency is not installed (also an ImportError)
    ├── InvalidAction         a bad action (also a ValueError)
    │   ├── UnknownKey        a key name vdesk does not know
    │   └── ParseError        a model reply that could not be read
    ├── TaskError             a task file is missing or invalid
    ├── SetupError            a task's setup step failed
    ├── FetchError            a task's file could not be fetched from its URL
    ├── AgentError            a model agent got no usable reply
    ├── RunError              a run folder is missing or unreadable
    ├── ViewerUnavailable     noVNC is not installed
    ├── BrowserError          the desktop's browser could not be started, reached or asked
    ├── DocumentError         a document out of a desktop could not be read
    ├── UnsupportedMetric     an OSWorld metric, option or rule vdesk does not implement
    ├── UnsupportedGetter     an OSWorld getter (or a value of one) vdesk does not implement
    └── BenchError            the bench could not take a measurement

Nothing was done when an ``Invalid…`` error is raised: arguments and whole batches of actions
are checked before anything reaches a desktop.
"""

from __future__ import annotations


class VdeskError(Exception):
    """Base class of every error vdesk raises on purpose."""


class EngineUnavailable(VdeskError):
    """No Docker engine answers (not installed, not running, or not reachable)."""


class ImageError(VdeskError):
    """The desktop image is missing or could not be built."""


class CheckpointError(VdeskError):
    """A desktop could not be checkpointed, or a checkpoint could not be forked or restored;
    the message says why (CRIU's own error line when it has one)."""


class CheckpointUnavailable(CheckpointError):
    """The engine cannot checkpoint at all: the message names each missing piece (dockerd's
    ``--experimental``, CRIU >= 4.1, being root on the engine's host)."""


class DesktopNotFound(VdeskError):
    """No desktop of that name exists."""


class DesktopGone(VdeskError):
    """The desktop's container went away (killed, removed, or its X server died)."""


class DesktopLost(DesktopGone):
    """The actor hosting a desktop, its worker process or its node died."""


class DesktopTimeout(VdeskError):
    """An operation on a desktop did not finish within its timeout."""


class PasswordRefused(VdeskError):
    """The VNC server refused the password."""


class ForkedProcess(VdeskError):
    """This process was forked from one that already held a desktop's frames: their event loop
    cannot run in a forked child. Start such processes with multiprocessing's ``spawn``."""


class CommandFailed(VdeskError):
    """A program run inside the desktop exited with an error."""


class InvalidArgument(VdeskError, ValueError):
    """An argument that is not an action is wrong (a size, a name, a path, an option); nothing was done."""


class InvalidAction(VdeskError, ValueError):
    """An action is malformed or cannot be honoured on a desktop; nothing was executed."""


class UnknownKey(InvalidAction):
    """A key name that vdesk does not know. The message names it."""


class ParseError(InvalidAction):
    """A model reply could not be parsed; the message quotes the offending part."""


class MissingDependency(VdeskError, ImportError):
    """An optional dependency is not installed (e.g. Ray for :mod:`vdesk.cluster`); the message
    says how to get it. An :class:`ImportError` too, for code that imports optional parts."""


class TaskError(VdeskError):
    """A task file is missing, unreadable or invalid; the message names the file and field."""


class SetupError(VdeskError):
    """A task's setup step failed; the message names the step."""


class FetchError(VdeskError):
    """A task's file could not be fetched on the host; the message names the URL and what went
    wrong (an HTTP status, past the size bound, out of time, a scheme vdesk does not fetch)."""


class AgentError(VdeskError):
    """A model agent could not get or read a reply; the message quotes the server."""


class RunError(VdeskError):
    """A run folder is missing or unreadable; the message names the file."""


class ViewerUnavailable(VdeskError):
    """noVNC (the viewer's web page) is not installed on this machine."""


class BrowserError(VdeskError):
    """The desktop's browser could not be started, reached or asked; the message says which."""


class DocumentError(VdeskError):
    """A document could not be read: not of its format, damaged, or past a size limit."""


class UnsupportedGetter(VdeskError):
    """An OSWorld getter, or a value one is given, that vdesk does not implement; the message
    names it (a task using it is skipped with that reason)."""


class UnsupportedMetric(VdeskError):
    """An OSWorld metric, metric option or rule that vdesk does not implement; the message names
    it (a task using it is skipped with that reason)."""


class BenchError(VdeskError):
    """The bench could not take a measurement (an action failed, a desktop did not come up)."""


def first_line(error: BaseException | str, limit: int = 300) -> str:
    """The first non-blank line of an error's message, at most ``limit`` characters; the
    exception's type name when it says nothing. For one-line reports of long messages
    (engine answers, remote tracebacks)."""
    text = str(error)
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if not line:
        return type(error).__name__ if isinstance(error, BaseException) else ""
    return line[:limit]
class ChannelLost(VdeskError):
    """The command channel into a desktop that still runs broke (its helper was killed, or it
    sent more than its bound), or the X connection input was sent on; the command's end (how
    much input arrived) is unknown. The next call opens a new channel (connection)."""


class TooLarge(VdeskError):
    """A value coming out of a desktop is past its bound; the message names the bound and the
    argument that raises it."""

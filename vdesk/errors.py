"""Every exception vdesk raises on purpose, grouped by what a caller catches. Catch
:class:`VdeskError` to catch them all, or one group:

::

    VdeskError
    ├── UsageError            the caller's input is wrong; nothing was done (also a ValueError)
    │   ├── InvalidArgument       a bad size, name, path, option
    │   ├── InvalidAction         a bad action
    │   │   ├── UnknownKey            a key name vdesk does not know
    │   │   └── ParseError            a model reply that could not be read
    │   └── ResetNeeded           an environment used before reset() (or after close())
    ├── HostError             this machine lacks something vdesk needs
    │   ├── EngineUnavailable     no Docker engine answers
    │   ├── ImageError            the desktop image is missing or could not be built
    │   ├── MissingDependency     an optional dependency is not installed (also an ImportError)
    │   ├── ViewerUnavailable     noVNC is not installed
    │   └── CheckpointUnavailable the engine cannot checkpoint (no vdesk runtime, CRIU, or root)
    ├── DesktopError          a desktop could not do what was asked
    │   ├── DesktopNotFound       no desktop of that name
    │   ├── DesktopStartFailed    a desktop's container (or its node's) did not start
    │   ├── DesktopGone           the desktop's container went away
    │   │   └── DesktopLost           the Ray actor or node hosting it died
    │   ├── DesktopTimeout        an operation did not finish within its timeout
    │   ├── ChannelLost           the command channel (or X connection) of a living desktop broke
    │   ├── XServerError          the desktop's X server lacks what input needs, or cannot be reached
    │   ├── CommandFailed         a program run in the desktop exited with an error
    │   ├── ActionFailed          a batch of actions (or a screenshot) an integration asked for failed
    │   ├── TooLarge              a value out of a desktop is past its bound, or one into it past its room
    │   ├── RecordingError        a recording could not be written
    │   ├── StatsUnavailable      the engine reports no figures for a desktop
    │   ├── BrowserError          the desktop's browser could not be started, reached or asked
    │   ├── DocumentError         a document out of a desktop could not be read
    │   └── CheckpointError       a desktop could not be checkpointed, forked or restored
    ├── VNCError              the VNC connection (frames or the viewer) failed
    │   ├── VNCUnavailable        no VNC server answered as one, or it refused the connection
    │   ├── PasswordRefused       the VNC server refused the password
    │   ├── ViewerRefused         a viewer's browser did not speak RFB as offered
    │   └── ForkedProcess         frames asked for in a process forked from one that held them
    ├── HarnessError          an evaluation could not run as asked
    │   ├── TaskError             a task file is missing or invalid
    │   ├── SetupError            a task's setup step failed
    │   ├── AgentError            a model agent got no usable reply
    │   ├── RunError              a run folder is missing or unreadable
    │   └── BenchError            the bench could not take a measurement
    ├── OSWorldError          an OSWorld task's files or evaluator
    │   ├── FetchError            a task's file could not be fetched from its URL
    │   ├── UnsupportedMetric     an OSWorld metric, option or rule vdesk does not implement
    │   └── UnsupportedGetter     an OSWorld getter (or a value of one) vdesk does not implement
    └── ClusterError          the Ray cluster cannot be reached or joined

Nothing was done when a :class:`UsageError` is raised: arguments and whole batches of actions
are checked before anything reaches a desktop. The groups are what callers catch: a harness
retries a :class:`DesktopError` on a new desktop, reports a :class:`UsageError` to its user, and
installs what a :class:`HostError` names.
"""

from __future__ import annotations


class VdeskError(Exception):
    """Base class of every error vdesk raises on purpose."""


# -- the caller's input -----------------------------------------------------------------------
class UsageError(VdeskError, ValueError):
    """The caller's input is wrong; nothing was done. A :class:`ValueError` too."""


class InvalidArgument(UsageError):
    """An argument that is not an action is wrong (a size, a name, a path, an option); nothing was done."""


class InvalidAction(UsageError):
    """An action is malformed or cannot be honoured on a desktop; nothing was executed."""


class UnknownKey(InvalidAction):
    """A key name that vdesk does not know. The message names it."""


class ParseError(InvalidAction):
    """A model reply could not be parsed; the message quotes the offending part."""


class ResetNeeded(UsageError):
    """An environment was stepped or observed before :meth:`reset` (or after :meth:`close`)."""


# -- this machine ------------------------------------------------------------------------------
class HostError(VdeskError):
    """This machine lacks something vdesk needs; the message says what to install or start."""


class EngineUnavailable(HostError):
    """No Docker engine answers (not installed, not running, or not reachable)."""


class ImageError(HostError):
    """The desktop image is missing or could not be built."""


class MissingDependency(HostError, ImportError):
    """An optional dependency is not installed (e.g. Ray for :mod:`vdesk.cluster`); the message
    says how to get it. An :class:`ImportError` too, for code that imports optional parts."""


class ViewerUnavailable(HostError):
    """noVNC (the viewer's web page) is not installed on this machine."""


class CheckpointUnavailable(HostError):
    """The engine cannot checkpoint desktops at all: the message names each missing piece
    (dockerd's runtime ``vdesk``, CRIU >= 4.1, this process as root on the engine's host)."""


# -- a desktop ---------------------------------------------------------------------------------
class DesktopError(VdeskError):
    """A desktop could not do what was asked."""


class DesktopNotFound(DesktopError):
    """No desktop of that name exists."""


class DesktopStartFailed(DesktopError):
    """A desktop's container (on this engine, or on a cluster's node) did not start; the message
    gives the engine's reason."""


class DesktopGone(DesktopError):
    """The desktop's container went away (killed, removed, or its X server died)."""


class DesktopLost(DesktopGone):
    """The actor hosting a desktop, its worker process or its node died."""


class DesktopTimeout(DesktopError):
    """An operation on a desktop did not finish within its timeout."""


class ChannelLost(DesktopError):
    """The command channel into a desktop that still runs broke (its helper was killed, or it
    sent more than its bound), or the X connection input was sent on; the command's end (how
    much input arrived) is unknown. The next call opens a new channel (connection)."""


class XServerError(DesktopError):
    """The desktop's X server lacks what input needs (XTEST), or no tunnel to it could be made."""


class CommandFailed(DesktopError):
    """A program run inside the desktop exited with an error."""


class ActionFailed(DesktopError):
    """A batch of actions, or a screenshot, that an integration asked for on a caller's behalf
    failed; the message gives the desktop's error."""


class TooLarge(DesktopError):
    """A value coming out of a desktop is past its bound (the message names the bound and the
    argument that raises it), or files going into it do not fit in the room left there (the
    message names the filesystem, its size and its free bytes)."""


class RecordingError(DesktopError):
    """A recording of a desktop could not be written; the message names the file."""


class StatsUnavailable(DesktopError):
    """The engine reports no figures (memory, CPU) for a desktop."""


class BrowserError(DesktopError):
    """The desktop's browser could not be started, reached or asked; the message says which."""


class DocumentError(DesktopError):
    """A document could not be read: not of its format, damaged, or past a size limit."""


class CheckpointError(DesktopError):
    """A desktop could not be checkpointed, or a checkpoint could not be forked or restored;
    the message says why (CRIU's own error line when it has one)."""


# -- VNC ---------------------------------------------------------------------------------------
class VNCError(VdeskError):
    """The VNC connection, of the frames or of the viewer, failed."""


class VNCUnavailable(VNCError):
    """No VNC server answered as one (not a VNC server, the connection failed, no VNC
    authentication offered), or it refused the connection."""


class PasswordRefused(VNCError):
    """The VNC server refused the password."""


class ViewerRefused(VNCError):
    """The viewer's browser did not speak RFB, or chose what the bridge did not offer."""


class ForkedProcess(VNCError):
    """This process was forked from one that already held a desktop's frames: their event loop
    cannot run in a forked child. Start such processes with multiprocessing's ``spawn``."""


# -- evaluation --------------------------------------------------------------------------------
class HarnessError(VdeskError):
    """An evaluation (tasks, agents, runs, the bench) could not run as asked."""


class TaskError(HarnessError):
    """A task file is missing, unreadable or invalid; the message names the file and field."""


class SetupError(HarnessError):
    """A task's setup step failed; the message names the step."""


class AgentError(HarnessError):
    """A model agent could not get or read a reply; the message quotes the server."""


class RunError(HarnessError):
    """A run folder is missing or unreadable; the message names the file."""


class BenchError(HarnessError):
    """The bench could not take a measurement (an action failed, a desktop did not come up)."""


# -- OSWorld -----------------------------------------------------------------------------------
class OSWorldError(VdeskError):
    """An OSWorld task's files or evaluator could not be had."""


class FetchError(OSWorldError):
    """A task's file could not be fetched on the host; the message names the URL and what went
    wrong (an HTTP status, past the size bound, out of time, a scheme vdesk does not fetch)."""


class UnsupportedGetter(OSWorldError):
    """An OSWorld getter, or a value one is given, that vdesk does not implement; the message
    names it (a task using it is skipped with that reason)."""


class UnsupportedMetric(OSWorldError):
    """An OSWorld metric, metric option or rule that vdesk does not implement; the message names
    it (a task using it is skipped with that reason)."""


# -- the cluster -------------------------------------------------------------------------------
class ClusterError(VdeskError):
    """The Ray cluster cannot be reached or joined, or this process is not connected to it."""


def first_line(error: BaseException | str, limit: int = 300) -> str:
    """The first non-blank line of an error's message, at most ``limit`` characters; the
    exception's type name when it says nothing. For one-line reports of long messages
    (engine answers, remote tracebacks)."""
    text = str(error)
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if not line:
        return type(error).__name__ if isinstance(error, BaseException) else ""
    return line[:limit]

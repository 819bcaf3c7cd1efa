"""vdesk: disposable, sandboxed Linux desktops for GUI agents.

    from vdesk import Desktop

    with Desktop.up(size=(1280, 800)) as desktop:
        desktop.input.execute([{"type": "click", "inputs": {"point": {"raw": {"x": 10, "y": 10}}}}])
        desktop.screen.shot().save("shot.png")

The names below are the public surface. Each is imported on first use, so ``import vdesk`` (and
the ``vdesk`` command) stays quick; ``from vdesk import Desktop`` works as usual. No module of
vdesk imports this one: it only re-exports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vdesk.lazy import lazy_face
from vdesk.version import __version__

if TYPE_CHECKING:
    from vdesk.accessibility.text import TextBox
    from vdesk.actions import BaseAction, Coordinates, ExecuteResult, Receipt
    from vdesk.coords import Box, ImageSpace, Screen
    from vdesk.desktop import Desktop
    from vdesk.elements import DesktopElements
    from vdesk.input import DesktopInput
    from vdesk.programs import DesktopPrograms
    from vdesk.screen import DesktopScreen
    from vdesk.text import DesktopText
    from vdesk.vnc import DesktopVnc
    from vdesk.errors import (VdeskError, UsageError, InvalidArgument, InvalidAction, UnknownKey,
                              ParseError, ResetNeeded, HostError, EngineUnavailable, ImageError,
                              MissingDependency, ViewerUnavailable, DesktopError, DesktopNotFound,
                              DesktopStartFailed, DesktopGone, DesktopLost, DesktopTimeout, ChannelLost,
                              XServerError, CommandFailed, ActionFailed, TooLarge, RecordingError,
                              StatsUnavailable, BrowserError, DocumentError, VNCError, VNCUnavailable,
                              PasswordRefused, ViewerRefused, ForkedProcess, HarnessError, TaskError,
                              SetupError, AgentError, RunError, BenchError, OSWorldError, FetchError,
                              UnsupportedMetric, UnsupportedGetter, ClusterError, CheckpointUnavailable,
                              CheckpointError)
    from vdesk.forks import Checkpoint
    from vdesk.inventory import DesktopInfo
    from vdesk.integrations.operator import ExecuteRequest, Operator, ScreenContext, ScreenshotOutput
    from vdesk.spec import DesktopSpec, Limits, Network

__all__ = [
    "__version__",
    # the desktop
    "Desktop", "DesktopSpec", "DesktopInfo", "Limits", "Network", "Screen", "ImageSpace", "Box", "Checkpoint",
    # its parts
    "DesktopScreen", "DesktopInput", "DesktopText", "DesktopElements", "DesktopPrograms", "DesktopVnc",
    # actions and the agent contract
    "BaseAction", "Coordinates", "ExecuteResult", "Operator", "ExecuteRequest", "ScreenContext",
    "ScreenshotOutput", "Receipt",
    # text on screen
    "TextBox",
    # errors
    "VdeskError", "UsageError", "InvalidArgument", "InvalidAction", "UnknownKey", "ParseError",
    "ResetNeeded", "HostError", "EngineUnavailable", "ImageError", "MissingDependency",
    "ViewerUnavailable", "DesktopError", "DesktopNotFound", "DesktopStartFailed", "DesktopGone",
    "DesktopLost", "DesktopTimeout", "ChannelLost", "XServerError", "CommandFailed", "ActionFailed",
    "TooLarge", "RecordingError", "StatsUnavailable", "BrowserError", "DocumentError", "VNCError",
    "VNCUnavailable", "PasswordRefused", "ViewerRefused", "ForkedProcess", "HarnessError", "TaskError",
    "SetupError", "AgentError", "RunError", "BenchError", "OSWorldError", "FetchError",
    "UnsupportedMetric", "UnsupportedGetter", "ClusterError", "CheckpointUnavailable", "CheckpointError",
]

# Where each name lives: its module is imported when the name is first asked for.
_HOMES = {
    "Desktop": "vdesk.desktop", "DesktopSpec": "vdesk.spec", "DesktopInfo": "vdesk.inventory", "Limits": "vdesk.spec",
    "Network": "vdesk.spec", "Screen": "vdesk.coords", "ImageSpace": "vdesk.coords", "Box": "vdesk.coords",
    "BaseAction": "vdesk.actions", "Coordinates": "vdesk.actions", "ExecuteResult": "vdesk.actions",
    "Operator": "vdesk.integrations.operator", "ExecuteRequest": "vdesk.integrations.operator", "ScreenContext": "vdesk.integrations.operator",
    "ScreenshotOutput": "vdesk.integrations.operator", "Receipt": "vdesk.actions", "TextBox": "vdesk.accessibility.text",
    "Checkpoint": "vdesk.forks", "DesktopScreen": "vdesk.screen", "DesktopInput": "vdesk.input",
    "DesktopText": "vdesk.text", "DesktopElements": "vdesk.elements", "DesktopPrograms": "vdesk.programs",
    "DesktopVnc": "vdesk.vnc",
    **{name: "vdesk.errors" for name in __all__[__all__.index("VdeskError"):]},
}


__getattr__, __dir__ = lazy_face(globals(), _HOMES, __all__)

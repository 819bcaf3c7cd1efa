"""The anthropic SDK's own computer toolset driver (``BetaAbstractComputerToolset20260801``)
over a vdesk desktop, for the SDK's tool runner and its ``tool_result`` helper.

    from anthropic import Anthropic
    from vdesk.integrations.anthropic_toolset import DesktopToolset

    toolset = DesktopToolset(desktop, confirm=lambda context: True)  # the SDK asks before type/key
    reply = Anthropic().messages.create(..., tools=[toolset.to_dict()])
    answers = [toolset.tool_result(block) for block in reply.content if block.type == "tool_use"]

Every member runs through :class:`vdesk.adapters.anthropic.AnthropicComputer` (one reading of
the toolset's replies for every way in); the SDK parses the input, asks ``confirm`` and renders
the result. A failure reaches the model as the SDK's ``is_error`` result.

Needs the ``anthropic`` extra: ``pip install 'vdesk[anthropic]'``.
"""

from __future__ import annotations

from typing import Any

from vdesk.adapters.anthropic import TOOLSET_NAME, AnthropicComputer
from vdesk.desktop import Desktop
from vdesk.errors import MissingDependency

try:
    from anthropic.tools import ToolError
    from anthropic.tools.computer import (BetaAbstractComputerToolset20260801, BetaComputerCursorPositionResult,
                                          BetaScreenshotResult)
except ImportError:  # pragma: no cover - depends on what is installed
    raise MissingDependency("vdesk.integrations.anthropic_toolset needs the anthropic package: "
                            "pip install 'vdesk[anthropic]'") from None

__all__ = ["DesktopToolset"]


class DesktopToolset(BetaAbstractComputerToolset20260801):
    """A vdesk desktop as the SDK's synchronous computer toolset; options as the SDK's."""

    def __init__(self, desktop: Desktop, **options: Any) -> None:
        super().__init__(**options)
        self.computer = AnthropicComputer(desktop)

    def execute(self, context: Any, name: str, input: Any) -> Any:  # type: ignore[override]
        """Run member ``name`` with its parsed ``input``; the SDK renders what comes back."""
        block = {"type": "tool_use", "name": name, "toolset_name": TOOLSET_NAME,
                 "input": input.model_dump(exclude_none=True)}
        result = self.computer.run(block)
        if result.error is not None:
            raise ToolError(result.error)
        if name in ("screenshot", "zoom"):
            return BetaScreenshotResult(data=result.base64_image or "")
        if name == "cursor_position":
            x, y = (int(part.split("=")[1]) for part in (result.output or "").split(","))
            return BetaComputerCursorPositionResult(x=x, y=y)
        return None  # a pure action: the SDK answers with its acknowledgment

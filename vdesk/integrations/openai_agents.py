"""The openai-agents SDK's :class:`agents.Computer` over a vdesk desktop.

    from agents import Agent, ComputerTool, Runner
    from vdesk.desktop import Desktop
    from vdesk.integrations.openai_agents import DesktopComputer

    with Desktop.up(size=(1280, 800)) as desktop:
        agent = Agent(name="operator", model="computer-use-preview",
                      tools=[ComputerTool(computer=DesktopComputer(desktop))])
        Runner.run_sync(agent, "Open a terminal and run `date`.")

Each method is the OpenAI computer action of the same name, read by
:mod:`vdesk.adapters.openai` (one reading of OpenAI's key names, scroll deltas and buttons for
every way in) and run by the desktop's :class:`~vdesk.integrations.operator.Operator`; ``x``/``y`` are
pixels of the screenshots this computer hands out (``image``, default: the logical screen).
A call returns once the screen has settled after its action, so the SDK's next screenshot
shows what the action did. A bad argument raises :class:`~vdesk.errors.InvalidAction` before
anything reaches the desktop; a failure on the desktop raises :class:`~vdesk.errors.VdeskError`
with the operator's message. The SDK turns either into the run's error.

Needs the ``openai-agents`` extra: ``pip install 'vdesk[openai-agents]'``.
"""

from __future__ import annotations

from typing import Any, Literal

from vdesk.adapters.openai import translate
from vdesk.coords import ImageSpace
from vdesk.desktop import Desktop
from vdesk.errors import ActionFailed, MissingDependency
from vdesk.integrations.operator import ExecuteRequest, Operator

try:
    from agents import Computer
except ImportError:  # pragma: no cover - depends on what is installed
    raise MissingDependency("vdesk.integrations.openai_agents needs the openai-agents package: "
                            "pip install 'vdesk[openai-agents]'") from None

__all__ = ["DesktopComputer"]

Button = Literal["left", "right", "wheel", "back", "forward"]


class DesktopComputer(Computer):
    """A vdesk desktop as the SDK's synchronous ``Computer`` (give it to ``ComputerTool``)."""

    def __init__(self, desktop: Desktop, image: ImageSpace | None = None, *, settle_timeout: float = 5.0) -> None:
        self.desktop = desktop
        self.operator = Operator(desktop, image=image)
        self.settle_timeout = settle_timeout

    @property
    def environment(self) -> Literal["ubuntu"]:
        return "ubuntu"  # the nearest of the SDK's environments to a Debian X desktop

    @property
    def dimensions(self) -> tuple[int, int]:
        """The size of the screenshots, which ``x``/``y`` are pixels of."""
        return self.operator.image.size

    def screenshot(self) -> str:
        shot = self.operator.screenshot()
        if shot.status != "success":
            raise ActionFailed(f"screenshot failed: {shot.error_message}")
        return shot.base64

    def click(self, x: int, y: int, button: Button, *, keys: list[str] | None = None) -> None:
        self._do({"type": "click", "x": x, "y": y, "button": button}, keys)

    def double_click(self, x: int, y: int, *, keys: list[str] | None = None) -> None:
        self._do({"type": "double_click", "x": x, "y": y}, keys)

    def scroll(self, x: int, y: int, scroll_x: int, scroll_y: int, *, keys: list[str] | None = None) -> None:
        self._do({"type": "scroll", "x": x, "y": y, "scroll_x": scroll_x, "scroll_y": scroll_y}, keys)

    def type(self, text: str) -> None:
        self._do({"type": "type", "text": text})

    def wait(self) -> None:
        self._do({"type": "wait"})

    def move(self, x: int, y: int) -> None:
        self._do({"type": "move", "x": x, "y": y})

    def keypress(self, keys: list[str]) -> None:
        self._do({"type": "keypress", "keys": keys})

    def drag(self, path: list[tuple[int, int]]) -> None:
        self._do({"type": "drag", "path": [{"x": x, "y": y} for x, y in path]})

    def _do(self, action: dict[str, Any], keys: list[str] | None = None) -> None:
        """Run one OpenAI action, then wait for the screen to settle."""
        if keys:
            action["keys"] = keys
        actions = translate(action).actions
        self.operator.plan(actions)  # resolves every point: a bad one raises before anything runs
        result = self.operator.execute(ExecuteRequest(actions=actions))
        if result.status != "success":
            raise ActionFailed(f"{action['type']} failed: {result.error_message}")
        self.desktop.screen.settle(timeout=self.settle_timeout)

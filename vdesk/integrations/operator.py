"""The operator: the UI-TARS SDK's agent contract over a desktop, as a thin shim.

The contract: ``initialize()`` once, ``screenshot()`` that never raises, ``execute(request)``
that never raises. The work is the desktop's one door for actions,
:meth:`vdesk.input.DesktopInput.execute` (it validates the whole batch, runs it, measures it and
reads its receipt in pixels of the agent's image); the shim only turns the contract's shapes
(an :class:`ExecuteRequest`, base64 screenshots at the agent's image size) into its call.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from vdesk.actions import ActionType, BaseAction, ExecuteResult, Receipt, parse_batch, validation_message
from vdesk.coords import ImageSpace, Screen
from vdesk.errors import InvalidAction, InvalidArgument
from vdesk.encoding import encode
from vdesk.plan import Plan, plan

if TYPE_CHECKING:  # the operator drives a desktop it is given; importing one costs start time
    from vdesk.desktop import Desktop


class ScreenshotOutput(BaseModel):
    """A frame for an agent: base64 image data, or ``status="failed"`` and why."""

    model_config = ConfigDict(frozen=True)
    base64: str = ""
    content_type: str = "image/png"
    status: Literal["success", "failed"] = "success"
    error_message: str | None = None
    width: int = 0
    height: int = 0


class ScreenContext(BaseModel):
    screen_width: int
    screen_height: int
    scale_x: float
    scale_y: float


def screen_context(screen: Screen) -> ScreenContext:
    """What an agent is told of the screen."""
    return ScreenContext(screen_width=screen.width, screen_height=screen.height,
                         scale_x=screen.scale, scale_y=screen.scale)


class ExecuteRequest(BaseModel):
    """What an agent asks to run: the actions. The other fields of the SDK's ExecuteParams
    (``rawContent``, ``rawActionStrings``, ``thought``) are accepted and dropped: what the
    model said is the caller's to keep (the harness's step record keeps the reply and its
    thought).

    Build one from a dict with :meth:`of`, which names the first bad action the way
    :func:`vdesk.actions.parse_batch` does.
    """

    model_config = ConfigDict(extra="ignore")

    actions: list[BaseAction]

    @classmethod
    def of(cls, data: Any) -> ExecuteRequest:
        """``data`` as a request: a request, a mapping with ``actions`` (and any other fields),
        or a bare batch of actions. Raises :class:`InvalidAction` for a bad batch."""
        if isinstance(data, cls):
            return data
        fields = dict(data) if isinstance(data, Mapping) else {"actions": data}
        fields["actions"] = parse_batch(fields.get("actions", []))
        try:
            return cls.model_validate(fields)
        except ValidationError as error:
            raise InvalidAction(f"execute request: {validation_message(error)}") from None


class Operator:
    """Drives one desktop for an agent.

    ``image`` is the size of the screenshots the agent is shown (default: the logical screen);
    ``raw`` coordinates it sends back are pixels of that image and are mapped to the screen.
    """

    def __init__(self, desktop: Desktop, image: ImageSpace | None = None) -> None:
        if image is not None and not isinstance(image, ImageSpace):
            raise InvalidArgument(f"image must be an ImageSpace (the size of the agent's screenshots), got {image!r}")
        self.desktop = desktop
        self.image = image or desktop.screen.image()
        self._initialized = False
        self._init_lock = threading.Lock()

    def initialize(self) -> None:
        """Make sure the desktop answers; runs once even when called concurrently."""
        with self._init_lock:
            if not self._initialized:
                self.desktop.screen.frames.latest()
                self._initialized = True

    # -- observation --------------------------------------------------------------------------
    def screen_context(self) -> ScreenContext:
        return screen_context(self.desktop.screen.geometry)

    def screenshot(self, format: Literal["png", "jpeg"] = "png", quality: int = 85,
                   fresh: bool = True) -> ScreenshotOutput:
        """The screen at the agent's image size, encoded; never raises."""
        content_type = f"image/{format}"
        try:
            frame = self.desktop.screen.shot(self.image, fresh=fresh)
            return ScreenshotOutput(base64=base64.b64encode(encode(frame, format, quality)).decode(),
                                    content_type=content_type, width=frame.width, height=frame.height)
        except Exception as error:  # the contract: fold every failure into the result
            return ScreenshotOutput(content_type=content_type, status="failed",
                                    error_message=f"{type(error).__name__}: {error}")

    @staticmethod
    def supported_actions() -> list[str]:
        return [kind.value for kind in ActionType]

    # -- actions ------------------------------------------------------------------------------
    def execute(self, request: ExecuteRequest | Mapping[str, Any], *, settle: bool = False,
                receipt: bool = True) -> ExecuteResult:
        """Run the request's actions through the desktop's door
        (:meth:`vdesk.input.DesktopInput.execute`, which says what ``settle`` and ``receipt``
        do), ``raw`` points and the receipt in pixels of the agent's image; never raises."""
        try:
            actions = ExecuteRequest.of(request).actions
        except InvalidAction as error:
            return ExecuteResult(status="failed", error_message=str(error))
        return self.desktop.input.execute(actions, image=self.image, settle=settle, receipt=receipt)

    def receipt(self, *, wait: float = 0.0) -> Receipt:
        """The last batch's receipt read now, in pixels of the agent's image (see
        :meth:`vdesk.input.DesktopInput.receipt`)."""
        return self.desktop.input.receipt(wait=wait, image=self.image)

    def plan(self, actions: list[BaseAction]) -> Plan:
        """What ``actions`` turn into on this desktop, for this agent's image; raises
        :class:`InvalidAction` for a point off the screen, before anything runs."""
        return plan(actions, self.desktop.screen.geometry, self.image)

"""The operator: the agent-facing contract over a desktop.

It follows the reference GUI-agent SDK: ``initialize()`` once, ``screenshot()`` that never
raises, ``execute(request)`` that validates the whole batch (names, inputs, keys, coordinates
against the real screen) before anything runs, then runs it in order on the desktop
(:meth:`vdesk.desktop.Desktop.execute`). The request is an :class:`ExecuteRequest`: the
actions and what the model said beside them.
"""

from __future__ import annotations

import base64
import io
import math
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from PIL import Image
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vdesk.actions import ActionType, BaseAction, ExecuteResult, Receipt, parse_batch, validation_message
from vdesk.coords import ImageSpace, Screen
from vdesk.errors import InvalidAction, InvalidArgument
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
    """What an agent asks to run: the actions, and what the model said beside them (the
    optional fields of the reference SDK's ExecuteParams). Other fields ride along, kept in
    ``model_extra``.

    Build one from a dict with :meth:`of`, which names the first bad action the way
    :func:`vdesk.actions.parse_batch` does.
    """

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    actions: list[BaseAction]
    raw_content: str | None = Field(default=None, alias="rawContent")
    """The model's reply as it came: UI-TARS text, or a tool call's input as JSON."""
    raw_action_strings: list[str] | None = Field(default=None, alias="rawActionStrings")
    """Each action as the model wrote it, e.g. ``click(start_box='(100,200)')``."""
    thought: str | None = None
    """The model's reasoning for these actions, when it gave one."""

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
                self.desktop.frames.latest()
                self._initialized = True

    # -- observation --------------------------------------------------------------------------
    def screen_context(self) -> ScreenContext:
        return screen_context(self.desktop.screen)

    def screenshot(self, format: Literal["png", "jpeg"] = "png", quality: int = 85,
                   fresh: bool = True) -> ScreenshotOutput:
        """The screen at the agent's image size, encoded; never raises."""
        content_type = f"image/{format}"
        try:
            frame = self.desktop.screenshot(self.image, fresh=fresh)
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
        """Validate the request's actions, then run them in order; never raises.

        A malformed action fails the whole batch before anything runs. With ``settle=True``
        it returns once the screen has stopped changing after the last action. The result's
        ``receipt`` (unless ``receipt=False``) says which regions of the screen the batch
        changed, in pixels of the agent's image (see :meth:`vdesk.desktop.Desktop.execute`).
        """
        started = time.perf_counter()
        try:
            actions = ExecuteRequest.of(request).actions
        except InvalidAction as error:
            return ExecuteResult(status="failed", error_message=str(error))
        result = self.desktop.execute(actions, image=self.image, settle=settle, receipt=receipt)
        if result.receipt is not None and self.image.size != self.desktop.screen.size:
            result.receipt = in_image(result.receipt, self.desktop.screen, self.image)
        result.elapsed_ms = (time.perf_counter() - started) * 1000
        return result

    def receipt(self, *, wait: float = 0.0) -> Receipt:
        """The last batch's receipt read now, in pixels of the agent's image (see
        :meth:`vdesk.desktop.Desktop.receipt`)."""
        found = self.desktop.receipt(wait=wait)
        return in_image(found, self.desktop.screen, self.image) if self.image.size != self.desktop.screen.size else found

    def plan(self, actions: list[BaseAction]) -> Plan:
        """What ``actions`` turn into on this desktop, for this agent's image; raises
        :class:`InvalidAction` for a point off the screen, before anything runs."""
        return plan(actions, self.desktop.screen, self.image)


def in_image(receipt: Receipt, screen: Screen, image: ImageSpace) -> Receipt:
    """A receipt's regions (logical pixels) in pixels of the image an agent is shown."""
    sx, sy = image.width / screen.width, image.height / screen.height
    regions = [(math.floor(left * sx), math.floor(top * sy), math.ceil(right * sx), math.ceil(bottom * sy))
               for left, top, right, bottom in receipt.regions]
    return receipt.model_copy(update={"regions": regions})


def encode(image: Image.Image, format: Literal["png", "jpeg"] = "png", quality: int = 85) -> bytes:
    """Encode a frame; PNG favours speed over size (compress_level 1)."""
    buffer = io.BytesIO()
    if format == "png":
        image.save(buffer, format="PNG", compress_level=1)
    elif format == "jpeg":
        image.save(buffer, format="JPEG", quality=quality)
    else:
        raise InvalidArgument(f"format must be png or jpeg, got {format!r}")
    return buffer.getvalue()

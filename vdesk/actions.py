"""BaseAction: the action format vdesk speaks natively, with the aliases models emit, and
ExecuteResult, what running a batch of them reports.

An action is ``{"type": ..., "inputs": {...}, "meta": {...}}``. Parsing normalises action
names (``left_click`` → ``click``) and input names (``start_box`` → ``start``), checks that each
action has the inputs it needs, and rejects browser and mobile actions with a clear error.
Coordinates are resolved to pixels later, by :mod:`vdesk.coords`, against a real screen.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, computed_field, field_validator, model_validator

from vdesk import keys
from vdesk.coords import ImageSpace, PhysicalPoint, Screen, from_image, from_normalized
from vdesk.errors import InvalidAction


class ActionType(str, Enum):
    SCREENSHOT = "screenshot"
    CLICK = "click"
    DOUBLE_CLICK = "double_click"
    TRIPLE_CLICK = "triple_click"
    RIGHT_CLICK = "right_click"
    MIDDLE_CLICK = "middle_click"
    MOUSE_MOVE = "mouse_move"
    MOUSE_DOWN = "mouse_down"
    MOUSE_UP = "mouse_up"
    DRAG = "drag"
    SCROLL = "scroll"
    TYPE = "type"
    HOTKEY = "hotkey"
    PRESS = "press"
    RELEASE = "release"
    HOLD_KEY = "hold_key"
    WAIT = "wait"
    FINISHED = "finished"
    CALL_USER = "call_user"


ACTION_ALIASES: dict[str, ActionType] = {
    "left_click": ActionType.CLICK,
    "left_single": ActionType.CLICK,
    "left_double": ActionType.DOUBLE_CLICK,
    "right_single": ActionType.RIGHT_CLICK,
    "hover": ActionType.MOUSE_MOVE,
    "move": ActionType.MOUSE_MOVE,
    "move_to": ActionType.MOUSE_MOVE,
    "select": ActionType.DRAG,
    "left_click_drag": ActionType.DRAG,
    "key": ActionType.HOTKEY,
    "keypress": ActionType.HOTKEY,
    "left_mouse_down": ActionType.MOUSE_DOWN,
    "left_mouse_up": ActionType.MOUSE_UP,
}

UNSUPPORTED_ON_DESKTOP = frozenset(
    {"navigate", "navigate_back", "long_press", "swipe", "home", "back", "open_app",
     "press_home", "press_back"}
)

INPUT_ALIASES: dict[str, str] = {
    "start_box": "start", "start_point": "start", "start_coordinate": "start",
    "end_box": "end", "end_point": "end", "end_coordinate": "end",
    "position": "point", "coordinate": "point",
    "text": "content", "input_text": "content",
    "hotkey": "key", "keyname": "key", "keys": "key",
    "duration": "time", "delay": "time",
    "scroll_direction": "direction", "dir": "direction",
    "scroll_amount": "amount", "clicks": "amount",
}

POINTED = {ActionType.CLICK, ActionType.DOUBLE_CLICK, ActionType.TRIPLE_CLICK,
           ActionType.RIGHT_CLICK, ActionType.MIDDLE_CLICK, ActionType.MOUSE_MOVE}
MAX_WAIT_SECONDS = 600.0
# A text typed key by key takes ~1 s per 6,000 characters; pasted, it lands at once.
MAX_TYPED_CHARS = 100_000
MAX_PASTED_CHARS = 1_000_000
TypeMethod = Literal["keys", "paste"]
DEFAULT_WAIT_SECONDS = 5.0
DEFAULT_SCROLL_AMOUNT = 3


class Point(BaseModel):
    model_config = ConfigDict(extra="forbid")
    x: float
    y: float


class ReferenceBox(BaseModel):
    model_config = ConfigDict(extra="forbid")
    x1: float
    y1: float
    x2: float
    y2: float

    @property
    def centre(self) -> tuple[float, float]:
        return ((self.x1 + self.x2) / 2, (self.y1 + self.y2) / 2)


class Coordinates(BaseModel):
    """Where an action points: ``normalized`` wins over ``raw``, which wins over the centre of
    ``referenceBox``. ``raw`` is in pixels of the screenshot the agent saw."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    raw: Point | None = None
    normalized: Point | None = None
    reference_box: ReferenceBox | None = Field(default=None, alias="referenceBox")
    reference_system: str = Field(default="screen", alias="referenceSystem")

    @model_validator(mode="before")
    @classmethod
    def _accept_pairs(cls, value: Any) -> Any:
        # A bare [x, y] or (x, y) is a raw point.
        if isinstance(value, (list, tuple)) and len(value) == 2:
            return {"raw": {"x": value[0], "y": value[1]}}
        return value

    @field_validator("reference_system")
    @classmethod
    def _screen_only(cls, value: str) -> str:
        if value != "screen":
            raise ValueError(
                f"referenceSystem {value!r} is not supported: vdesk resolves 'screen' coordinates only"
            )
        return value

    def resolve(self, screen: Screen, image: ImageSpace | None = None) -> PhysicalPoint:
        """The physical pixel these coordinates name on ``screen``, for an agent that saw
        ``image`` (default: a screenshot at the logical size)."""
        image = image or screen.image()
        if self.normalized is not None:
            return from_normalized(self.normalized.x, self.normalized.y, screen)
        if self.raw is not None:
            return from_image(self.raw.x, self.raw.y, image, screen)
        if self.reference_box is not None:
            return from_image(*self.reference_box.centre, image, screen)
        raise InvalidAction("invalid coordinates: none of raw, normalized or referenceBox is given")


class ElementQuery(BaseModel):
    """An element of the accessibility tree, by role and name (exact, case-insensitive); with
    ``index``, the index-th (from 0) of those on screen, else the only one."""

    model_config = ConfigDict(extra="forbid")
    role: str | None = Field(default=None, max_length=100)
    name: str | None = Field(default=None, max_length=1000)
    index: int | None = Field(default=None, ge=0, le=10_000)

    @model_validator(mode="after")
    def _something(self) -> ElementQuery:
        if self.role is None and self.name is None:
            raise ValueError("an element query needs a role or a name")
        return self


# A mark number from the desktop's last marks(), or a query resolved against a fresh tree.
ElementRef = Annotated[int, Field(ge=1, le=100_000)] | ElementQuery


class Inputs(BaseModel):
    """The union of every action's inputs; :class:`BaseAction` checks which ones it needs."""

    model_config = ConfigDict(extra="forbid")

    point: Coordinates | None = None
    element: ElementRef | None = None  # instead of point: resolved to its centre when it runs
    start: Coordinates | None = None
    end: Coordinates | None = None
    button: Literal["left", "right", "middle"] | None = None
    direction: Literal["up", "down", "left", "right"] | None = None
    amount: int | None = Field(default=None, ge=1, le=100)
    content: str | None = None
    method: TypeMethod | None = None  # type: "keys" (default) or "paste" through the clipboard
    key: str | list[str] | None = None
    modifiers: list[str] = Field(default_factory=list)
    time: float | None = Field(default=None, ge=0, le=MAX_WAIT_SECONDS)

    @model_validator(mode="before")
    @classmethod
    def _canonical_names(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        canonical: dict[str, Any] = {}
        spelled: dict[str, str] = {}
        for name, item in value.items():
            target = INPUT_ALIASES[name] if name in INPUT_ALIASES else name
            if target in canonical and item != canonical[target]:
                raise ValueError(f"input {target!r} is given twice, as {spelled[target]!r} and as {name!r}")
            canonical[target], spelled[target] = item, name
        if "start" in canonical and "end" not in canonical and "point" not in canonical:
            canonical["point"] = canonical.pop("start")  # `start` alone means `point`
        if isinstance(canonical.get("direction"), str):
            canonical["direction"] = canonical["direction"].strip().lower()
        return canonical

    @field_validator("key")
    @classmethod
    def _known_keys(cls, value: str | list[str] | None) -> str | list[str] | None:
        if value is not None:
            keys.combination(value)  # raises UnknownKey naming the key
        return value

    @field_validator("modifiers")
    @classmethod
    def _known_modifiers(cls, value: list[str]) -> list[str]:
        for name in value:
            keys.combination(name)
        return value

    @property
    def keysyms(self) -> tuple[str, ...]:
        return keys.combination(self.key) if self.key is not None else ()

    @property
    def modifier_keysyms(self) -> tuple[str, ...]:
        return tuple(sym for name in self.modifiers for sym in keys.combination(name))


class Meta(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="allow")
    tool_hint: str | None = Field(default=None, alias="toolHint")
    comment: str | None = None


_REQUIRED: dict[ActionType, tuple[str, ...]] = {
    **{kind: ("point",) for kind in POINTED},
    ActionType.DRAG: ("start", "end"),
    ActionType.SCROLL: ("direction",),
    ActionType.TYPE: ("content",),
    ActionType.HOTKEY: ("key",),
    ActionType.PRESS: ("key",),
    ActionType.RELEASE: ("key",),
    ActionType.HOLD_KEY: ("key",),
}


def _check_text_size(text: str, method: TypeMethod) -> None:
    limit = MAX_PASTED_CHARS if method == "paste" else MAX_TYPED_CHARS
    if len(text) > limit:
        hint = "; paste it instead (method: paste)" if method == "keys" and len(text) <= MAX_PASTED_CHARS else ""
        raise ValueError(f"type content is {len(text)} characters, over the limit of {limit} "
                         f"for method {method}{hint}")


class BaseAction(BaseModel):
    """One agent action. Construct with :meth:`parse` to get :class:`InvalidAction` errors."""

    model_config = ConfigDict(extra="forbid")

    type: ActionType
    inputs: Inputs = Field(default_factory=Inputs)
    meta: Meta | None = None

    @field_validator("type", mode="before")
    @classmethod
    def _canonical_type(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        name = value.strip().lower()
        if name in UNSUPPORTED_ON_DESKTOP:
            raise ValueError(f"action {name!r} is unsupported on a desktop (it is a browser or mobile action)")
        if name in ACTION_ALIASES:
            return ACTION_ALIASES[name]
        if name not in ActionType._value2member_map_:
            raise ValueError(f"unknown action type {value!r}")
        return name

    @model_validator(mode="after")
    def _required_inputs(self) -> BaseAction:
        missing = [name for name in _REQUIRED.get(self.type, ()) if getattr(self.inputs, name) is None
                   and not (name == "point" and self.inputs.element is not None)]
        if self.inputs.element is not None and self.type not in POINTED | {ActionType.SCROLL, ActionType.MOUSE_DOWN,
                                                                          ActionType.MOUSE_UP}:
            raise ValueError(f"{self.type.value} takes no element")
        if self.inputs.element is not None and self.inputs.point is not None:
            raise ValueError("give a point or an element, not both")
        if missing:
            raise ValueError(f"{self.type.value} needs input {', '.join(missing)}")
        if self.type is ActionType.TYPE:
            _check_text_size(self.inputs.content or "", self.inputs.method or "keys")
        return self

    @classmethod
    def parse(cls, data: Any) -> BaseAction:
        """Validate one action (a dict, JSON text, or a BaseAction)."""
        if isinstance(data, cls):
            return data
        try:
            if isinstance(data, (str, bytes)):
                return cls.model_validate_json(data)
            return cls.model_validate(data)
        except ValidationError as error:
            raise InvalidAction(validation_message(error)) from None

    @classmethod
    def of(cls, type: str, meta: dict[str, Any] | None = None, **inputs: Any) -> BaseAction:
        """Build an action in code: ``BaseAction.of("click", point=[10, 20])``."""
        return cls.parse({"type": type, "inputs": inputs, "meta": meta})


Batch = Sequence[BaseAction | Mapping[str, object]] | str
"""What the door for actions takes: BaseActions or their dicts, or the JSON of such a list."""


def parse_batch(items: Batch | BaseAction | Mapping[str, object]) -> list[BaseAction]:
    """Validate a whole batch (a list or JSON text of one; one action alone is a batch of one);
    the first bad action fails it, naming its index. BaseActions pass as they are."""
    if isinstance(items, (str, bytes)):
        try:
            items = json.loads(items)
        except ValueError as error:
            raise InvalidAction(f"actions must be a list of actions or its JSON, got text that is not JSON ({error})") from None
    if isinstance(items, (Mapping, BaseAction)):
        items = [items]
    if not isinstance(items, (list, tuple)):
        raise InvalidAction(f"actions must be a list of actions, got {type(items).__name__}")
    batch = []
    for index, item in enumerate(items):
        try:
            batch.append(BaseAction.parse(item))
        except InvalidAction as error:
            raise InvalidAction(f"action {index}: {error}") from None
    return batch


def validation_message(error: ValidationError) -> str:
    """One line naming each failing field, e.g. ``inputs.point.raw.x: Input should be ...``."""
    parts = []
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"] if not str(p).startswith("function-"))
        message = item["msg"].removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


Outcome = Literal["changed", "unchanged", "unknown"]


class Receipt(BaseModel):
    """What a batch of actions did to the screen, seen on the held framebuffer: the regions
    (logical pixels: left, top, right, bottom; largest first) that differ between the frame
    just before the first action and a frame after the last.

    Which frame "after" is, ``settled`` says:

    * ``None`` (``execute()`` without ``settle``, the default): the frame the VNC server held
      once the X server had processed the batch's last event, one round trip and no waiting.
      It shows what programs had drawn by then; ``changed=False`` means *not yet*, since a
      program may still be answering. :meth:`~vdesk.input.DesktopInput.receipt` reads it again later.
    * ``True`` (``settle=True``): the frame once the screen held still for a quiet period
      after the batch; ``changed=False`` then means *unchanged* (a program that answers after
      the quiet period shows its change later).
    * ``False`` (``settle=True`` on a screen that never held still within the bound: a video,
      a spinner, a terminal printing): the frame when the bound ran out.

    ``outcome`` says it in one word: ``changed``, ``unchanged`` (nothing differs on a screen
    that held still) or ``unknown`` (nothing differs yet, and the screen was not seen calm).
    """

    changed: bool
    regions: list[tuple[int, int, int, int]] = Field(default_factory=list)
    settled: bool | None = None
    typed: bool | None = None
    """For a batch that typed: whether the focused element's text now contains the last line
    typed (None where no accessibility tree is readable, or no focused element has text)."""
    focused: str | None = None
    """The focused element ``typed`` was read from, e.g. ``text 'Notes'``."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def outcome(self) -> Outcome:
        if self.changed:
            return "changed"
        return "unchanged" if self.settled else "unknown"

    def describe(self) -> str:
        """One line for a person or a model: where the screen changed, or that nothing did
        (yet)."""
        typed = {True: f"; the typed text is in the focused {self.focused}",
                 False: f"; the typed text is NOT in the focused {self.focused}", None: ""}[self.typed]
        if not self.changed:
            unsure = {True: "", None: " yet (not waited for)", False: " (the screen never held still)"}[self.settled]
            return f"nothing changed on screen{unsure}{typed}"
        where = ", ".join(f"[{left}, {top}, {right}, {bottom}]" for left, top, right, bottom in self.regions)
        still = {True: "", None: " (not waited for: more may come)", False: " (still changing)"}[self.settled]
        return f"the screen changed in {where}{still}{typed}"

    def in_image(self, screen: Screen, image: ImageSpace) -> Receipt:
        """This receipt's regions (logical pixels of ``screen``) in pixels of the image an agent is shown."""
        if image.size == screen.size:
            return self
        sx, sy = image.width / screen.width, image.height / screen.height
        regions = [(math.floor(left * sx), math.floor(top * sy), math.ceil(right * sx), math.ceil(bottom * sy))
                   for left, top, right, bottom in self.regions]
        return self.model_copy(update={"regions": regions})


class Cancel(Protocol):
    """What stops a batch between two chained bursts once it is set, or cuts its wait short: a
    ``threading.Event``, or anything with ``is_set()`` (the episode engine's stop also says when
    its time is up)."""

    def is_set(self) -> bool: ...


class ExecuteResult(BaseModel):
    """The outcome of a batch. ``finished`` / ``call_user`` report those actions to the loop;
    ``receipt`` says what the batch changed on screen (None when receipts were off, or the
    batch sent nothing to the desktop). ``settled`` is None unless the batch was run with
    ``settle=True``: then True once the screen held still after it, False when it kept
    changing until the settle's bound ran out (the batch still succeeded)."""

    status: Literal["success", "failed"] = "success"
    error_message: str | None = None
    executed: int = 0  # how many actions ran to completion
    # When each of them had completed, in ms from the batch's start: actions chained into one
    # burst complete together.
    completed_ms: list[float] = Field(default_factory=list)
    finished: bool = False
    finished_content: str | None = None
    call_user: str | None = None
    receipt: Receipt | None = None
    settled: bool | None = None
    elapsed_ms: float = 0.0

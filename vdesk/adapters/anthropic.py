"""Anthropic's computer use → BaseActions: the computer toolset (``computer_toolset_20260801``,
the default) and the two single tools before it (``computer_20250124``, ``computer_20251124``).

* A single tool is one ``tools[]`` entry named ``computer`` with the display size; the model
  calls it with an input such as ``{"action": "left_click", "coordinate": [640, 400]}``.
* The toolset is one ``tools[]`` entry ``{"type": "computer_toolset_20260801"}`` with no name
  and no display size, and optional per-member ``configs`` (``{"zoom": {"enabled": false}}``);
  the model replies with ``tool_use`` blocks named by the member (``left_click``, ``scroll``,
  ``key``, …) with ``toolset_name: "computer"`` and the member's own input
  (``{"coordinate": [640, 400]}``). It differs from the single tools in a few fields: ``key``
  takes ``repeat``, ``wait`` and ``hold_key`` take a whole number of seconds,
  ``left_mouse_down``/``left_mouse_up`` take no coordinate, ``left_click_drag`` takes held keys
  in ``text``, and ``zoom`` is on unless its config turns it off.

:func:`translate` turns one single-tool input, and :func:`translate_tool_use` one ``tool_use``
block of either kind, into vdesk :class:`~vdesk.actions.BaseAction` values, plus what the model
wants to see back (a screenshot, the cursor position, or a zoomed region). They are pure: no
desktop, no I/O.

Coordinates are pixels of the screenshot the model was shown and are emitted unchanged as ``raw``
coordinates; vdesk's operator knows that screenshot's size and maps them to the screen.

Decisions beyond the wire format:

* A click without ``coordinate`` clicks at the current pointer. BaseAction clicks need a point,
  so it becomes ``mouse_down`` + ``mouse_up`` (twice or thrice for double and triple clicks),
  with ``press``/``release`` of the held keys around them when ``text`` names modifiers.
* ``key`` follows xdotool: space-separated groups are pressed one after the other
  (``"ctrl+a Delete"`` is two hotkeys); spaces around ``+`` are ignored (``"ctrl + c"``).
* ``scroll_amount`` 0 scrolls nothing (only moves the pointer to ``coordinate`` if given).
* ``left_mouse_down``/``left_mouse_up`` accept an optional ``coordinate`` (move there first).
* Fields an action does not take are rejected by name, as the reference tool does.

:class:`AnthropicComputer` runs tool calls end to end against a desktop: it shows the model
screenshots scaled to the XGA/WXGA/FWXGA size the reference tool would use, maps the model's
coordinates back to the screen, and answers each call with a :class:`ToolResult`.
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError

from vdesk import keys
from vdesk.actions import BaseAction, validation_message
from vdesk.coords import ImageSpace, anthropic_target
from vdesk.errors import InvalidAction, InvalidArgument
from vdesk.encoding import encode
from vdesk.integrations.operator import ExecuteRequest, Operator

if TYPE_CHECKING:
    from vdesk.desktop import Desktop

__all__ = [
    "BETA_FLAGS",
    "MAX_DURATION_SECONDS",
    "AnthropicCall",
    "AnthropicComputer",
    "ComputerInput",
    "TOOLSET",
    "ToolResult",
    "Version",
    "headers",
    "image_block",
    "messages_request",
    "tool_definition",
    "translate",
    "toolset_block",
    "translate_tool_use",
]

Version = Literal["computer_toolset_20260801", "computer_20250124", "computer_20251124"]
#: The computer toolset: one ``tools[]`` entry, replies named by member.
TOOLSET: Version = "computer_toolset_20260801"
#: The family name toolset replies carry in ``toolset_name``.
TOOLSET_NAME = "computer"
Observation = Literal["screenshot", "cursor_position", "zoom"]

#: The Messages API version vdesk speaks (the ``anthropic-version`` header).
API_VERSION = "2023-06-01"
#: The ``anthropic-beta`` flag each single-tool version needs (the toolset needs none).
BETA_FLAGS: dict[str, str] = {
    "computer_20250124": "computer-use-2025-01-24",
    "computer_20251124": "computer-use-2025-11-24",
}
#: The longest ``wait`` or ``hold_key`` the reference tool accepts, in seconds.
MAX_DURATION_SECONDS = 100.0
#: The most scroll notches one BaseAction may carry.
MAX_SCROLL_AMOUNT = 100
#: The most times one toolset ``key`` call may repeat its keys.
MAX_REPEAT = 100

Pixel = Annotated[int, Strict(), Field(ge=0)]
Duration = Annotated[float, Strict(), Field(ge=0, le=MAX_DURATION_SECONDS)]


class ComputerInput(BaseModel):
    """The input of one ``computer`` tool call, as the model writes it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    action: Annotated[str, Strict()]
    coordinate: tuple[Pixel, Pixel] | None = None
    start_coordinate: tuple[Pixel, Pixel] | None = None
    text: Annotated[str, Strict()] | None = None
    scroll_direction: Literal["up", "down", "left", "right"] | None = None
    scroll_amount: Annotated[int, Strict(), Field(ge=0, le=MAX_SCROLL_AMOUNT)] | None = None
    duration: Duration | None = None
    region: tuple[Pixel, Pixel, Pixel, Pixel] | None = None
    repeat: Annotated[int, Strict(), Field(ge=1, le=MAX_REPEAT)] | None = None


@dataclass(frozen=True)
class AnthropicCall:
    """What one tool call asks for: actions to run, then what to show the model.

    ``observation`` is ``"screenshot"``, ``"cursor_position"``, ``"zoom"`` (a full-resolution
    crop of ``region``, in the model's screenshot pixels ``(x1, y1, x2, y2)``) or ``None``.
    """

    actions: list[BaseAction]
    observation: Observation | None = None
    region: tuple[int, int, int, int] | None = None


# Per action: (fields it requires, fields it may take). `action` itself is always allowed.
_CLICK_FIELDS = (frozenset[str](), frozenset({"coordinate", "text"}))
_FIELDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "screenshot": (frozenset(), frozenset()),
    "cursor_position": (frozenset(), frozenset()),
    "mouse_move": (frozenset({"coordinate"}), frozenset()),
    "left_click": _CLICK_FIELDS,
    "right_click": _CLICK_FIELDS,
    "middle_click": _CLICK_FIELDS,
    "double_click": _CLICK_FIELDS,
    "triple_click": _CLICK_FIELDS,
    "left_click_drag": (frozenset({"start_coordinate", "coordinate"}), frozenset()),
    "left_mouse_down": (frozenset(), frozenset({"coordinate"})),
    "left_mouse_up": (frozenset(), frozenset({"coordinate"})),
    "scroll": (
        frozenset({"scroll_direction", "scroll_amount"}), frozenset({"coordinate", "text"})
    ),
    "key": (frozenset({"text"}), frozenset()),
    "hold_key": (frozenset({"text", "duration"}), frozenset()),
    "type": (frozenset({"text"}), frozenset()),
    "wait": (frozenset({"duration"}), frozenset()),
    "zoom": (frozenset({"region"}), frozenset()),
}
# The toolset's members where they differ from the single tools' actions.
_TOOLSET_FIELDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    **_FIELDS,
    "key": (frozenset({"text"}), frozenset({"repeat"})),
    "left_mouse_down": (frozenset(), frozenset()),
    "left_mouse_up": (frozenset(), frozenset()),
    "left_click_drag": (frozenset({"start_coordinate", "coordinate"}), frozenset({"text"})),
}
_WHOLE_SECONDS = ("wait", "hold_key")  # the toolset's durations are integers
_ZOOM_VERSIONS = frozenset({"computer_20251124", TOOLSET})

# Click actions: (BaseAction type, mouse button, clicks) — the last two for clicks at the pointer.
_CLICKS: dict[str, tuple[str, str, int]] = {
    "left_click": ("click", "left", 1),
    "right_click": ("right_click", "right", 1),
    "middle_click": ("middle_click", "middle", 1),
    "double_click": ("double_click", "left", 2),
    "triple_click": ("triple_click", "left", 3),
}


def translate(
    tool_input: dict[str, Any], *, version: Version = "computer_20251124"
) -> AnthropicCall:
    """Translate one ``computer`` tool input into BaseActions.

    Raises :class:`InvalidAction` naming the offending field or action when the input is
    malformed or asks for something the tool ``version`` does not have.

    Examples:
        >>> translate({"action": "left_click", "coordinate": [10, 20]}).actions[0].type.value
        'click'
    """
    _check_version(version)
    if version == TOOLSET:
        raise InvalidArgument("the computer toolset's replies are tool_use blocks: use translate_tool_use")
    call = _validate(tool_input)
    _check_action(call, version)
    return _built(call)


def translate_tool_use(block: Mapping[str, Any], *, version: Version = TOOLSET) -> AnthropicCall:
    """Translate one ``tool_use`` block of a Messages API reply into BaseActions.

    For the toolset the block is named by its member and carries ``toolset_name: "computer"``;
    for a single tool it is named ``computer`` and its input has the ``action``. Raises
    :class:`InvalidAction` naming what is wrong.

    Examples:
        >>> block = {"type": "tool_use", "id": "toolu_1", "name": "key", "toolset_name": "computer",
        ...          "input": {"text": "Return", "repeat": 2}}
        >>> [action.type.value for action in translate_tool_use(block).actions]
        ['hotkey', 'hotkey']
    """
    _check_version(version)
    if not isinstance(block, Mapping):
        raise InvalidAction(f"a tool_use block must be an object, got {type(block).__name__}")
    name, tool_input = block.get("name"), block.get("input", {})
    if version != TOOLSET:
        if name != "computer":
            raise InvalidAction(f"tool_use {name!r} is not the computer tool")
        return translate(tool_input, version=version)  # type: ignore[arg-type]
    return _member_call(block, name, tool_input)


def translate_any(item: Any) -> AnthropicCall:
    """One computer-tool input, or a whole ``tool_use`` block of a reply as the SDK gives it:
    the single tool's (named ``computer``, read at the default version) or the toolset's (it
    carries ``toolset_name``). A block says which it is, so a caller pasting either is understood.

    >>> block = {"type": "tool_use", "id": "toolu_1", "name": "left_click", "toolset_name": "computer",
    ...          "caller": {"type": "direct"}, "input": {"coordinate": [10, 20]}}
    >>> translate_any(block).actions[0].type.value
    'click'
    """
    if isinstance(item, Mapping) and "toolset_name" in item:
        return translate_tool_use(item)
    if isinstance(item, Mapping) and item.get("type") == "tool_use" and "action" not in item:
        return translate_tool_use(item, version="computer_20251124")
    return translate(item)


def _member_call(block: Mapping[str, Any], name: Any, tool_input: Any) -> AnthropicCall:
    """One toolset member's ``tool_use`` block, checked field by field, as BaseActions."""
    if name == "computer" and block.get("toolset_name") is None:
        raise InvalidAction("tool_use 'computer' is a single computer tool's call; the toolset's are named by member")
    if block.get("toolset_name") != TOOLSET_NAME:
        raise InvalidAction(f"tool_use {name!r} has toolset_name {block.get('toolset_name')!r}, not 'computer'")
    if not isinstance(name, str) or name not in _TOOLSET_FIELDS:
        raise InvalidAction(f"unknown computer toolset member {name!r}")
    if not isinstance(tool_input, Mapping):
        raise InvalidAction(f"{name}: input must be an object, got {type(tool_input).__name__}")
    if "action" in tool_input:
        raise InvalidAction(f"{name}: a toolset member's input has no 'action' (the block's name is the member)")
    if name in _WHOLE_SECONDS and "duration" in tool_input and type(tool_input["duration"]) is not int:
        raise InvalidAction(f"{name}: duration must be a whole number of seconds, got {tool_input['duration']!r}")
    call = _validate({"action": name, **tool_input})
    _check_fields(call, _TOOLSET_FIELDS[name])
    return _built(call)


def toolset_block(item: Any) -> Any:
    """A toolset ``tool_use`` block from one written by hand: ``{"name": …, "input": …}``, the
    ``toolset_name`` implied (what the command line and the Gymnasium action text take)."""
    return {"toolset_name": TOOLSET_NAME, **item} if isinstance(item, Mapping) else item


def _built(call: ComputerInput) -> AnthropicCall:
    try:
        return _build(call)
    except InvalidAction as error:
        raise InvalidAction(f"{call.action}: {error}") from None


def _build(call: ComputerInput) -> AnthropicCall:
    if call.action in ("screenshot", "cursor_position"):
        return AnthropicCall([], observation=call.action)  # type: ignore[arg-type]
    if call.action == "zoom":
        return AnthropicCall([], observation="zoom", region=_region(call))
    return AnthropicCall(_ACTIONS[call.action](call))


def tool_definition(
    screen_image: ImageSpace, version: Version = "computer_20251124", *, enable_zoom: bool = True
) -> dict[str, Any]:
    """The tool spec to send in the API request's ``tools`` list.

    ``screen_image`` is the size of the screenshots the model will be shown (e.g.
    :func:`vdesk.coords.anthropic_target` of the screen); the toolset's entry carries no size.
    ``enable_zoom``: ``computer_20251124`` offers ``zoom`` only when it is set; the toolset
    offers it unless ``configs`` turns it off.
    """
    _check_version(version)
    if version == TOOLSET:
        toolset: dict[str, Any] = {"type": TOOLSET}
        if not enable_zoom:
            toolset["configs"] = {"zoom": {"enabled": False}}
        return toolset
    spec: dict[str, Any] = {
        "type": version,
        "name": "computer",
        "display_width_px": screen_image.width,
        "display_height_px": screen_image.height,
    }
    if version in _ZOOM_VERSIONS and enable_zoom:
        spec["enable_zoom"] = True
    return spec


def image_block(png_base64: str) -> dict[str, Any]:
    """The content block that shows the model a PNG screenshot (base64 of its bytes)."""
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png_base64}}


def messages_request(model: str, max_tokens: int, tool: dict[str, Any],
                     messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The body of a Messages API request that offers the ``computer`` tool ``tool``
    (from :func:`tool_definition`)."""
    return {"model": model, "max_tokens": max_tokens, "tools": [tool], "messages": messages}


def headers(version: Version, api_key: str | None = None) -> dict[str, str]:
    """The HTTP headers of a Messages API request using the tool ``version``."""
    _check_version(version)
    sent = {"anthropic-version": API_VERSION}
    if version in BETA_FLAGS:
        sent["anthropic-beta"] = BETA_FLAGS[version]
    if api_key:
        sent["x-api-key"] = api_key
    return sent


# --- validation -------------------------------------------------------------------------------


def _check_version(version: str) -> None:
    if version not in get_args(Version):
        choices = ", ".join(get_args(Version))
        raise InvalidArgument(f"unknown computer tool version {version!r}; use one of {choices}")


def _validate(tool_input: Any) -> ComputerInput:
    if not isinstance(tool_input, dict):
        kind = type(tool_input).__name__
        raise InvalidAction(f"computer tool input must be an object, got {kind}")
    try:
        return ComputerInput.model_validate(tool_input)
    except ValidationError as error:
        action = tool_input.get("action")
        prefix = f"{action}: " if isinstance(action, str) else ""
        raise InvalidAction(prefix + validation_message(error)) from None


def _check_action(call: ComputerInput, version: str) -> None:
    if call.action not in _FIELDS:
        raise InvalidAction(f"unknown computer action {call.action!r}")
    if call.action == "zoom" and version not in _ZOOM_VERSIONS:
        raise InvalidAction(f"zoom needs the computer_20251124 tool; {version} has no zoom action")
    _check_fields(call, _FIELDS[call.action])


def _check_fields(call: ComputerInput, fields: tuple[frozenset[str], frozenset[str]]) -> None:
    required, optional = fields
    given = {name for name in call.model_fields_set if getattr(call, name) is not None} - {"action"}
    missing = sorted(required - given)
    if missing:
        raise InvalidAction(f"{call.action} needs {', '.join(missing)}")
    extra = sorted(given - required - optional)
    if extra:
        raise InvalidAction(f"{call.action} does not take {', '.join(extra)}")


def _region(call: ComputerInput) -> tuple[int, int, int, int]:
    assert call.region is not None
    x1, y1, x2, y2 = call.region
    if x1 >= x2 or y1 >= y2:
        raise InvalidAction(
            f"region {list(call.region)} must be [x1, y1, x2, y2] with x1 < x2 and y1 < y2"
        )
    return call.region


# --- building actions -------------------------------------------------------------------------


def _raw(point: tuple[int, int] | None) -> dict[str, Any] | None:
    return None if point is None else {"raw": {"x": point[0], "y": point[1]}}


def _modifiers(text: str | None) -> list[str]:
    """Key names held during a click or scroll: ``"ctrl+shift"`` → ``["ctrl", "shift"]``."""
    if text is None:
        return []
    names = [name for name in re.split(r"[+\s]+", text) if name]
    if not names:
        raise InvalidAction(f"text: no modifier key in {text!r}")
    for name in names:
        _known(name)
    return names


def _known(spec: str) -> None:
    try:
        keys.combination(spec)
    except InvalidAction as error:
        raise InvalidAction(f"text: {error}") from None


def _click(call: ComputerInput) -> list[BaseAction]:
    kind, button, clicks = _CLICKS[call.action]
    held = _modifiers(call.text)
    if call.coordinate is not None:
        return [BaseAction.of(kind, point=_raw(call.coordinate), modifiers=held)]
    edges = ("mouse_down", "mouse_up") * clicks
    presses = [BaseAction.of(edge, button=button) for edge in edges]
    return (
        [BaseAction.of("press", key=name) for name in held]
        + presses
        + [BaseAction.of("release", key=name) for name in reversed(held)]
    )


def _mouse_move(call: ComputerInput) -> list[BaseAction]:
    return [BaseAction.of("mouse_move", point=_raw(call.coordinate))]


def _drag(call: ComputerInput) -> list[BaseAction]:
    held = _modifiers(call.text)  # the toolset's drag may hold keys
    drag = BaseAction.of("drag", start=_raw(call.start_coordinate), end=_raw(call.coordinate))
    return ([BaseAction.of("press", key=name) for name in held] + [drag]
            + [BaseAction.of("release", key=name) for name in reversed(held)])


def _mouse_edge(call: ComputerInput) -> list[BaseAction]:
    kind = "mouse_down" if call.action == "left_mouse_down" else "mouse_up"
    inputs: dict[str, Any] = {"button": "left"}
    if call.coordinate is not None:
        inputs["point"] = _raw(call.coordinate)
    return [BaseAction.of(kind, **inputs)]


def _scroll(call: ComputerInput) -> list[BaseAction]:
    held = _modifiers(call.text)
    if call.scroll_amount == 0:
        return _mouse_move(call) if call.coordinate is not None else []
    inputs: dict[str, Any] = {
        "direction": call.scroll_direction, "amount": call.scroll_amount, "modifiers": held,
    }
    if call.coordinate is not None:
        inputs["point"] = _raw(call.coordinate)
    return [BaseAction.of("scroll", **inputs)]


def _key(call: ComputerInput) -> list[BaseAction]:
    groups = _key_groups(call.text or "")
    return [BaseAction.of("hotkey", key=group) for group in groups] * (call.repeat or 1)


def _key_groups(text: str) -> list[str]:
    """xdotool ``key`` arguments: combinations separated by spaces, pressed in turn."""
    text = re.sub(r"(?<=\S)\s*\+\s*(?=\S)", "+", text.strip())
    groups = text.split()
    if not groups:
        raise InvalidAction("text: no key given")
    try:
        for group in groups:
            keys.combination(group)
    except InvalidAction as error:
        try:
            keys.combination(text)  # one name written in two words, e.g. "Page Down"
        except InvalidAction:
            raise InvalidAction(f"text: {error}") from None
        return [text]
    return groups


def _hold_key(call: ComputerInput) -> list[BaseAction]:
    text = call.text or ""
    if not text.strip():
        raise InvalidAction("text: no key given")
    _known(text)
    return [BaseAction.of("hold_key", key=text, time=call.duration)]


def _type(call: ComputerInput) -> list[BaseAction]:
    return [BaseAction.of("type", content=call.text)]


def _wait(call: ComputerInput) -> list[BaseAction]:
    return [BaseAction.of("wait", time=call.duration)]


_ACTIONS = {
    **dict.fromkeys(_CLICKS, _click),
    "mouse_move": _mouse_move,
    "left_click_drag": _drag,
    "left_mouse_down": _mouse_edge,
    "left_mouse_up": _mouse_edge,
    "scroll": _scroll,
    "key": _key,
    "hold_key": _hold_key,
    "type": _type,
    "wait": _wait,
}


# --- running tool calls against a desktop -----------------------------------------------------


@dataclass(frozen=True)
class ToolResult:
    """What a ``computer`` tool call answers: text, an error, and/or a PNG screenshot."""

    output: str | None = None
    error: str | None = None
    base64_image: str | None = None

    def to_api(self, tool_use_id: str) -> dict[str, Any]:
        """The ``tool_result`` content block that answers the ``tool_use`` block ``tool_use_id``."""
        content: list[dict[str, Any]] = []
        text = self.error if self.error is not None else self.output
        if text:
            content.append({"type": "text", "text": text})
        if self.base64_image:
            content.append(image_block(self.base64_image))
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
        if self.error is not None:
            block["is_error"] = True
        return block


# What the toolset answers a pure action with (the member's acknowledgment), per member.
_ACKNOWLEDGMENTS = {
    "key": "Pressed {text}.", "hold_key": "Held {text} for {duration}s.", "type": "Typed.",
    "mouse_move": "Moved the mouse.", "left_mouse_down": "Left mouse button pressed.",
    "left_mouse_up": "Left mouse button released.", "left_click": "Clicked.", "left_click_drag": "Dragged.",
    "right_click": "Right-clicked.", "middle_click": "Middle-clicked.", "double_click": "Double-clicked.",
    "triple_click": "Triple-clicked.", "scroll": "Scrolled {scroll_direction}.", "wait": "Waited {duration}s.",
}


class AnthropicComputer:
    """Runs a model's computer tool calls on a desktop, as the reference tool does.

    The model is shown screenshots at :func:`~vdesk.coords.anthropic_target` of the screen
    (XGA 1024x768, WXGA 1280x800 or FWXGA 1366x768 by aspect ratio, or the screen's own size),
    and every coordinate it sends, and ``cursor_position`` and ``zoom``, are in that space.
    Running a call never raises: a malformed call or a failure comes back as
    ``ToolResult.error``, and a malformed call runs nothing. With the toolset a pure action is
    answered with the member's acknowledgment (``Clicked.``), as the toolset does; with a single
    tool, with the screenshot it led to.

        computer = AnthropicComputer(desktop)          # the toolset; or version="computer_20251124"
        tools = [computer.tool_definition()]
        ...
        for block in reply.content:                    # each tool_use block
            reply_content.append(computer.answer(block))
    """

    name = "computer"

    def __init__(self, desktop: Desktop, version: Version = TOOLSET, *,
                 enable_zoom: bool = True, settle_timeout: float = 5.0) -> None:
        _check_version(version)
        self.desktop = desktop
        self.version: Version = version
        self.enable_zoom = enable_zoom and version in _ZOOM_VERSIONS
        self.settle_timeout = settle_timeout
        self.image = anthropic_target(desktop.screen.geometry)
        self.operator = Operator(desktop, image=self.image)

    def tool_definition(self) -> dict[str, Any]:
        """The tool spec for the API request; its display size is the scaled screenshot's."""
        return tool_definition(self.image, self.version, enable_zoom=self.enable_zoom)

    @property
    def beta_flag(self) -> str | None:
        """The ``anthropic-beta`` flag this tool version needs (None for the toolset)."""
        return BETA_FLAGS.get(self.version)

    def __call__(self, tool_input: dict[str, Any]) -> ToolResult:
        """Run one single-tool input (``{"action": …}``); see :meth:`run` for whole blocks."""
        return self._answer(lambda: translate(tool_input, version=self.version), tool_input, None)

    def run(self, block: Mapping[str, Any] | Any) -> ToolResult:
        """Run one ``tool_use`` block (a mapping, or the SDK's model of one) of either kind."""
        data = block.model_dump() if hasattr(block, "model_dump") else block
        member = data.get("name") if self.version == TOOLSET and isinstance(data, Mapping) else None
        tool_input = data.get("input") if isinstance(data, Mapping) else data
        return self._answer(lambda: translate_tool_use(data, version=self.version), tool_input, member)

    def answer(self, block: Mapping[str, Any] | Any) -> dict[str, Any]:
        """The ``tool_result`` content block that answers ``block``, after running it."""
        data = block.model_dump() if hasattr(block, "model_dump") else block
        return self.run(data).to_api(str(data.get("id")))

    def _answer(self, read: Callable[[], AnthropicCall], tool_input: Any, member: str | None) -> ToolResult:
        try:
            call = read()
            if call.observation == "zoom" and not self.enable_zoom:
                raise InvalidAction("zoom is not enabled for this tool")
            if call.observation == "cursor_position":
                return ToolResult(output=self._cursor_position())
            if call.observation == "zoom":
                assert call.region is not None
                return ToolResult(base64_image=self._zoom(call.region))
            if call.actions:
                failure = self._execute(call.actions, tool_input)
                if failure is not None:
                    return ToolResult(error=failure)
            if member in _ACKNOWLEDGMENTS:
                return ToolResult(output=_ACKNOWLEDGMENTS[member].format_map(dict(tool_input or {})))
            return self._screenshot()
        except Exception as error:  # the model hears about every failure; nothing escapes
            return ToolResult(error=str(error) or type(error).__name__)

    def _execute(self, actions: list[BaseAction], tool_input: Any) -> str | None:
        """Run the actions (the raw tool input goes with them); the error message, if any."""
        request = ExecuteRequest(actions=actions)
        result = self.operator.execute(request)
        if result.status != "success":
            return result.error_message or "the action failed"
        self.desktop.screen.settle(timeout=self.settle_timeout)  # answer with the screen they led to
        return None

    def _screenshot(self) -> ToolResult:
        shot = self.operator.screenshot()
        if shot.status != "success":
            return ToolResult(error=f"screenshot failed: {shot.error_message}")
        return ToolResult(base64_image=shot.base64)

    def _cursor_position(self) -> str:
        """``X=…,Y=…``: the pointer in the scaled screenshot's pixels."""
        x, y = self.desktop.input.pointer(self.image)
        return f"X={x},Y={y}"

    def _zoom(self, region: tuple[int, int, int, int]) -> str:
        """A PNG of ``region`` (scaled-screenshot pixels) at the screen's full resolution."""
        x1, y1, x2, y2 = region
        if x2 > self.image.width or y2 > self.image.height:
            raise InvalidAction(
                f"zoom: region {list(region)} is outside the "
                f"{self.image.width}x{self.image.height} screenshot"
            )
        pw, ph = self.desktop.screen.physical_size
        sx, sy = pw / self.image.width, ph / self.image.height
        box = (math.floor(x1 * sx), math.floor(y1 * sy),
               min(pw, math.ceil(x2 * sx)), min(ph, math.ceil(y2 * sy)))
        crop = self.desktop.screen.frames.fresh().image.crop(box)
        return base64.b64encode(encode(crop, "png")).decode()

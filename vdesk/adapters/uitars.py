"""UI-TARS model replies → vdesk BaseActions.

UI-TARS and its Seed successors answer in several layouts. :func:`parse` tries them in this
order and takes the first that fits:

1. ``Thought: … Action: …`` labels (also ``Reflection:``, ``Action_Summary:``, and the
   full-width colon ``：``); the actions are the text after the last ``Action:``.
2. ``<Thought>…</Thought> … Action: … </Output>``.
3. ``<think>…</think>`` with ``<computer_env>Action: …</computer_env>``, or
   ``<answer>…</answer>`` (which becomes a ``finished`` action carrying the answer).
4. XML tool calls: ``<seed:tool_call><function=NAME><parameter=P>VALUE</parameter>…``.
5. Otherwise, the first ``name(...)`` call found anywhere in the text.

Each call such as ``click(start_box='(100,200)')`` becomes a :class:`~vdesk.actions.BaseAction`
whose coordinates are ``normalized`` fractions of the screen, so they resolve on any screen
size. The numbers a model writes are read in one of two units:

* ``mode="grid"``: a 0..1000 grid (UI-TARS, Seed): normalized = value / 1000;
* ``mode="smart_resize"``: pixels of the image UI-TARS-1.5 actually saw, i.e. the screenshot
  resized by :func:`vdesk.coords.smart_resize`; the screenshot's size must be given.

A box (four numbers, or ``<bbox>…</bbox>``) targets its centre and is kept, in the model's own
units, as ``referenceBox``. Every problem with a reply raises :class:`~vdesk.errors.ParseError`
(an :class:`~vdesk.errors.InvalidAction`) whose message quotes the part at fault.

:func:`run_reply` parses a reply against the screenshot size an operator hands out and runs it.
:data:`PROMPT`, :func:`chat_messages` and :func:`chat_request` are how UI-TARS is asked over an
OpenAI-compatible chat endpoint.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from vdesk.actions import ACTION_ALIASES, UNSUPPORTED_ON_DESKTOP, ActionType, BaseAction, ExecuteResult
from vdesk.coords import ImageSpace, smart_resize
from vdesk.errors import InvalidAction, InvalidArgument, ParseError
from vdesk.integrations.operator import ExecuteRequest, Operator

if TYPE_CHECKING:
    from vdesk.desktop import Desktop

__all__ = ["GRID_SIZE", "PROMPT", "Mode", "UITarsReply", "chat_messages", "chat_request", "parse", "run_reply"]

Mode = Literal["grid", "smart_resize"]

GRID_SIZE = 1000
"""The side of the coordinate grid UI-TARS writes in ``grid`` mode."""


@dataclass(frozen=True)
class UITarsReply:
    """A parsed model reply: the model's own words, and the actions to execute in order."""

    thought: str | None
    reflection: str | None
    action_summary: str | None
    actions: list[BaseAction]
    raw: str
    action_strings: tuple[str, ...] = ()  # each action's call as the model wrote it


def parse(text: str, *, mode: Mode = "grid", image: ImageSpace | None = None) -> UITarsReply:
    """Parse one UI-TARS reply into BaseActions.

    ``image`` is the size of the screenshot the model was shown; ``mode="smart_resize"``
    needs it (an :class:`~vdesk.errors.InvalidArgument` says so otherwise, since that is a
    caller's mistake and not the model's). Raises :class:`~vdesk.errors.ParseError` for any malformed reply.
    """
    units = _units(mode, image)
    # The box tokens only mark where a coordinate is; they are noise to every layout.
    cleaned = _BOX_TOKENS.sub("", text)
    if not cleaned.strip():
        raise ParseError('empty reply: no action found in ""')
    reply = _split_reply(cleaned)
    actions = [_action(call, units) for call in reply.calls]
    return UITarsReply(reply.thought, reply.reflection, reply.action_summary, actions, text,
                       tuple(call.source for call in reply.calls))


def run_reply(desktop: Desktop, text: str, mode: Mode = "grid", *,
              operator: Operator | None = None, settle: bool = False) -> ExecuteResult:
    """Parse a UI-TARS reply and run its actions on ``desktop``.

    Coordinates are read against the screenshot size the operator hands out
    (``operator.image``; default: an operator at the logical screen size).
    A malformed reply runs nothing and comes back as ``status="failed"`` with the
    :class:`~vdesk.errors.ParseError` message quoting the part at fault.
    """
    operator = operator or Operator(desktop)
    try:
        reply = parse(text, mode=mode, image=operator.image)
    except InvalidAction as error:
        return ExecuteResult(status="failed", error_message=str(error))
    request = ExecuteRequest(actions=reply.actions)
    return operator.execute(request, settle=settle)


# --------------------------------------------------------------------------- the chat format
# How UI-TARS is asked, over an OpenAI-compatible ``/chat/completions`` endpoint (e.g. vLLM).
PROMPT = """You are a GUI agent. You are given a task and your action history, with screenshots. You need to perform the next action to complete the task.

## Output Format
```
Thought: ...
Action: ...
```

## Action Space
click(start_box='<|box_start|>(x1,y1)<|box_end|>')
left_double(start_box='<|box_start|>(x1,y1)<|box_end|>')
right_single(start_box='<|box_start|>(x1,y1)<|box_end|>')
drag(start_box='<|box_start|>(x1,y1)<|box_end|>', end_box='<|box_start|>(x3,y3)<|box_end|>')
hotkey(key='')
type(content='') #If you want to submit your input, use "\\n" at the end of `content`.
scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', direction='down or up or right or left')
wait() #Sleep for 5s and take a screenshot to check for any changes.
finished(content='xxx') # Use escape characters \\', \\", and \\n in content part to ensure we can parse the content in normal python string format.
call_user() # Submit the task and call the user when the task is unsolvable, or when you need the user's help.

## Note
- Use English in `Thought` part.
- Write a small plan and finally summarize your next action (with its target element) in one sentence in `Thought` part.

## User Instruction
{instruction}
"""


def chat_messages(instruction: str, turns: Sequence[tuple[str, str | None]], *, history: int,
                  note: str | None = None) -> list[dict[str, Any]]:
    """The chat messages of one request: the prompt with ``instruction``, then each turn's
    screenshot (a data URL; only the last ``history`` are sent) and the model's reply to it,
    then ``note`` (what became of the last action, or what the user answered)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": PROMPT.format(instruction=instruction)}]
    first_image = max(0, len(turns) - history)
    for index, (image_url, reply) in enumerate(turns):
        if index >= first_image:
            messages.append({"role": "user", "content": [{"type": "image_url", "image_url": {"url": image_url}}]})
        if reply is not None:
            messages.append({"role": "assistant", "content": reply})
    if note:
        messages.append({"role": "user", "content": note})
    return messages


def chat_request(model: str, messages: list[dict[str, Any]], max_tokens: int) -> dict[str, Any]:
    """The body of a chat completion request for ``messages`` (from :func:`chat_messages`)."""
    return {"model": model, "messages": messages, "max_tokens": max_tokens, "temperature": 0.0}


# --------------------------------------------------------------------------- internal model


@dataclass(frozen=True)
class _Arg:
    name: str
    value: str  # already unquoted and unescaped


@dataclass(frozen=True)
class _Call:
    name: str
    args: tuple[_Arg, ...]
    source: str  # the call as written, quoted in error messages


@dataclass(frozen=True)
class _Reply:
    calls: tuple[_Call, ...]
    thought: str | None = None
    reflection: str | None = None
    action_summary: str | None = None


@dataclass(frozen=True)
class _Units:
    """What the model's coordinate numbers measure: the full width and height of the screen."""

    width: float
    height: float
    label: str  # names the space in error messages


def _units(mode: Mode, image: ImageSpace | None) -> _Units:
    if mode == "grid":
        return _Units(GRID_SIZE, GRID_SIZE, f"the 0..{GRID_SIZE} grid")
    if mode == "smart_resize":
        if image is None:
            raise InvalidArgument(
                "mode='smart_resize' needs image=ImageSpace(width, height): the size of the "
                "screenshot the model was shown, to know the size it was resized to"
            )
        seen = smart_resize(image.width, image.height)
        return _Units(
            seen.width, seen.height,
            f"the {seen.width}x{seen.height} image the model saw "
            f"(a {image.width}x{image.height} screenshot, smart-resized)",
        )
    raise InvalidArgument(f"unknown mode {mode!r}: use 'grid' or 'smart_resize'")


def _quote(text: str, limit: int = 160) -> str:
    text = text.strip()
    return '"' + (text if len(text) <= limit else text[: limit - 1] + "…") + '"'


# --------------------------------------------------------------------------- layouts

_BOX_TOKENS = re.compile(r"<\|box_(?:start|end)\|>")
_LABEL = re.compile(r"(?<![A-Za-z0-9_])(Thought|Reflection|Action_Summary|Action)[ \t]*[:：]")
_THINK = re.compile(r"<(think|seed:think)>(.*?)</\1>", re.S)
_THOUGHT_TAG = re.compile(r"<Thought>(.*?)</Thought>", re.S)
_COMPUTER_ENV = re.compile(r"<computer_env>(.*?)(?:</computer_env>|\Z)", re.S)
_ANSWER = re.compile(r"<answer>(.*?)(?:</answer>|\Z)", re.S)
_TOOL_CALL = re.compile(r"<seed:tool_call>|<function=")


def _split_reply(text: str) -> _Reply:
    for layout in (_labelled, _thought_tags, _think_env, _tool_calls):
        reply = layout(text)
        if reply is not None:
            return reply
    return _first_call(text)


def _labelled(text: str) -> _Reply | None:
    """Layout 1: ``Thought: … Reflection: … Action_Summary: … Action: …``."""
    # The tag layouts may also hold an "Action:" label (inside <computer_env>, after
    # </Thought>); when their tags are there the reply is theirs, not plain labelled text.
    if any(tag.search(text) for tag in (_THOUGHT_TAG, _COMPUTER_ENV, _ANSWER, _TOOL_CALL)):
        return None
    think, body = _split_think(text)
    labels = list(_LABEL.finditer(body))
    action = _action_label(body, labels)
    if action is None:
        return None
    # Only the chosen "Action:" ends a section: a thought may mention "Action:" in passing.
    bounds = [m for m in labels if m.group(1) != "Action" and m.start() < action.start()] + [action]
    return _Reply(
        calls=_read_calls(_strip_output(body[action.end():])),
        thought=_section(body, bounds, "Thought") or think,
        reflection=_section(body, bounds, "Reflection"),
        action_summary=_section(body, bounds, "Action_Summary"),
    )


def _thought_tags(text: str) -> _Reply | None:
    """Layout 2: ``<Thought>…</Thought> … Action: … </Output>``."""
    thought = _THOUGHT_TAG.search(text)
    if thought is None:
        return None
    rest = text[thought.end():]
    action = _action_label(rest, list(_LABEL.finditer(rest)))
    actions = rest[action.end():] if action is not None else rest
    return _Reply(_read_calls(_strip_output(actions)), thought=thought.group(1).strip() or None)


def _think_env(text: str) -> _Reply | None:
    """Layout 3: ``<think>…</think>`` then ``<computer_env>Action: …`` or ``<answer>…``."""
    env, answer = _COMPUTER_ENV.search(text), _ANSWER.search(text)
    thought, _ = _split_think(text)
    if env is not None:
        body = env.group(1)
        action = _action_label(body, list(_LABEL.finditer(body)))
        return _Reply(_read_calls(body[action.end():] if action else body), thought=thought)
    if answer is not None:
        content = _Arg("content", answer.group(1).strip())
        return _Reply((_Call("finished", (content,), answer.group(0)),), thought=thought)
    return None


def _tool_calls(text: str) -> _Reply | None:
    """Layout 4: ``<seed:tool_call><function=NAME><parameter=P>VALUE</parameter>…``."""
    if _TOOL_CALL.search(text) is None:
        return None
    thought, _ = _split_think(text)
    return _Reply(_read_functions(text), thought=thought)


def _first_call(text: str) -> _Reply:
    """Layout 5, the fallback: the first ``name(...)`` call anywhere in the text."""
    head = _CALL_ANYWHERE.search(text)
    if head is None:
        raise ParseError(f"no action found in {_quote(text)}")
    call, _ = _read_call(text, head.start())
    return _Reply((call,))


def _split_think(text: str) -> tuple[str | None, str]:
    """The ``<think>`` text (if any) and what follows it."""
    match = _THINK.search(text)
    if match is None:
        return None, text
    return match.group(2).strip() or None, text[match.end():]


def _action_label(body: str, labels: list[re.Match[str]]) -> re.Match[str] | None:
    """The ``Action:`` label the actions follow: the last one, preferring labels that start a
    line, so that ``type(content='Action: x')`` on the action line does not split the call."""
    actions = [m for m in labels if m.group(1) == "Action"]
    at_line_start = [m for m in actions if _starts_line(body, m.start())]
    candidates = at_line_start or actions
    return candidates[-1] if candidates else None


def _starts_line(text: str, position: int) -> bool:
    return not text[text.rfind("\n", 0, position) + 1 : position].strip()


def _section(body: str, bounds: list[re.Match[str]], name: str) -> str | None:
    """The text after the first ``name:`` label, up to the next label in ``bounds``."""
    for index, label in enumerate(bounds[:-1]):
        if label.group(1) == name:
            return body[label.end() : bounds[index + 1].start()].strip() or None
    return None


def _strip_output(text: str) -> str:
    return text.split("</Output>", 1)[0].replace("<Output>", "")


# --------------------------------------------------------------------------- XML tool calls

_FUNCTION_OPEN = re.compile(r"<function=([^>]*)>")
_PARAMETER_OPEN = re.compile(r"<parameter=([^>]*)>")
# Text is taken as written; every other value loses the layout whitespace around it.
_TEXT_ARGS = frozenset({"content", "text", "input_text"})


def _read_functions(text: str) -> tuple[_Call, ...]:
    calls = tuple(_Call(name, _read_parameters(body, source), source)
                  for name, body, source in _tags(text, _FUNCTION_OPEN, "</function>"))
    if not calls:
        raise ParseError(f"tool call without a <function=NAME> in {_quote(text)}")
    return calls


def _read_parameters(body: str, source: str) -> tuple[_Arg, ...]:
    return tuple(_Arg(name, value if name in _TEXT_ARGS else value.strip())
                 for name, value, _ in _tags(body, _PARAMETER_OPEN, "</parameter>", quoted=source))


def _tags(text: str, opening: re.Pattern[str], closing: str, quoted: str | None = None) -> Iterator[tuple[str, str, str]]:
    """Each ``<tag=NAME>BODY</tag>`` in ``text``: the name (unquoted), the body, and the whole
    tag as written. An unclosed one quotes ``quoted`` (default: the text from the tag on)."""
    position = 0
    while (found := opening.search(text, position)) is not None:
        close = text.find(closing, found.end())
        if close < 0:
            tag = closing.strip("</>")
            raise ParseError(f"unclosed <{tag}=…> tag in {_quote(quoted or text[found.start():])}")
        position = close + len(closing)
        yield found.group(1).strip().strip("'\""), text[found.end() : close], text[found.start() : position]


# --------------------------------------------------------------------------- name(...) calls

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_CALL_HEAD = re.compile(rf"({_NAME})[ \t]*\(")
_CALL_ANYWHERE = re.compile(rf"(?<![A-Za-z0-9_.]){_NAME}\(")
_ARG_NAME = re.compile(rf"({_NAME})\s*=\s*")
# A quote closes a value only where the call can go on: before ")" or ", next_arg=".
# Models write apostrophes unescaped (type(content='I'm here')); this reads them as text.
_CLOSES_VALUE = re.compile(rf"\s*(?:\)|,\s*(?:\)|{_NAME}\s*=)|\Z)")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"'}


def _read_calls(text: str) -> tuple[_Call, ...]:
    """Every call in an action text. Calls are separated by blank lines; any white space
    is accepted, and blank lines inside quoted values never separate anything."""
    calls: list[_Call] = []
    position = _skip_space(text, 0)
    while position < len(text):
        call, position = _read_call(text, position)
        calls.append(call)
        position = _skip_space(text, position)
    if not calls:
        raise ParseError(f"empty action: no call follows the action label in {_quote(text)}")
    return tuple(calls)


def _read_call(text: str, start: int) -> tuple[_Call, int]:
    """The call ``name(arg=value, …)`` at ``start``, and the position after it."""
    head = _CALL_HEAD.match(text, start)
    if head is None:
        raise ParseError(f"expected an action call like click(...), got {_quote(text[start:])}")
    args: list[_Arg] = []
    position = head.end()
    while True:
        position = _skip_space(text, position)
        if position >= len(text):
            raise ParseError(f"unbalanced parentheses: no closing ')' in {_quote(text[start:])}")
        if text[position] == ")":
            return _Call(head.group(1), tuple(args), text[start : position + 1]), position + 1
        arg, position = _read_arg(text, position, start)
        args.append(arg)
        position = _skip_space(text, position)
        if position < len(text) and text[position] == ",":
            position += 1


def _read_arg(text: str, position: int, call_start: int) -> tuple[_Arg, int]:
    name = _ARG_NAME.match(text, position)
    if name is None:
        raise ParseError(
            f"expected name=value at {_quote(text[position:])} in {_quote(text[call_start:])}"
        )
    position = name.end()
    if position < len(text) and text[position] in "'\"":
        value, position = _read_quoted(text, position, call_start)
    else:
        value, position = _read_bare(text, position, call_start)
    return _Arg(name.group(1), value), position


def _read_quoted(text: str, position: int, call_start: int) -> tuple[str, int]:
    """A quoted value with its escapes decoded, and the position after the closing quote."""
    quote, index = text[position], position + 1
    chars: list[str] = []
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            # Unknown escapes stay as written: "C:\Users" means what it says.
            chars.append(_ESCAPES.get(text[index + 1], text[index : index + 2]))
            index += 2
        elif char == quote and _CLOSES_VALUE.match(text, index + 1):
            return "".join(chars), index + 1
        else:
            chars.append(char)
            index += 1
    raise ParseError(f"unbalanced quotes: {quote} is never closed in {_quote(text[call_start:])}")


def _read_bare(text: str, position: int, call_start: int) -> tuple[str, int]:
    """An unquoted value such as ``(100,200)`` or ``5``: up to a top-level ``,`` or ``)``."""
    depth = 0
    for index in range(position, len(text)):
        char = text[index]
        if char in "([":
            depth += 1
        elif char in ")]" and depth > 0:
            depth -= 1
        elif char == "]":
            break  # closes nothing: reported as unbalanced below
        elif char in ",)" and depth == 0:
            return text[position:index].strip(), index
    raise ParseError(f"unbalanced parentheses in {_quote(text[call_start:])}")


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position].isspace():
        position += 1
    return position


# --------------------------------------------------------------------------- calls → actions

# UI-TARS names BaseAction does not know under another spelling.
_UITARS_NAMES = {"keydown": "press", "key_down": "press", "keyup": "release", "key_up": "release"}
_KNOWN_ACTIONS = frozenset(ActionType._value2member_map_) | frozenset(ACTION_ALIASES)
_COORDINATE_ARGS = frozenset({
    "start_box", "end_box", "start_point", "end_point", "start_coordinate", "end_coordinate",
    "coordinate", "position",
})


def _action(call: _Call, units: _Units) -> BaseAction:
    name = call.name.strip().lower()
    kind = _UITARS_NAMES.get(name, name)
    if kind in UNSUPPORTED_ON_DESKTOP:
        # Leave the inputs out so that BaseAction's complaint is about the action alone.
        return _validated({"type": kind}, call)
    if kind not in _KNOWN_ACTIONS:
        raise ParseError(f"unknown action {call.name!r} in {_quote(call.source)}")
    return _validated({"type": kind, "inputs": _inputs(call, units)}, call)


def _inputs(call: _Call, units: _Units) -> dict[str, Any]:
    inputs: dict[str, Any] = {}
    for arg in call.args:
        name = "start_box" if arg.name == "point" else arg.name  # UI-TARS: point= is start_box=
        if name in inputs:
            raise ParseError(f"{arg.name}= repeats {name}= in {_quote(call.source)}")
        is_coordinate = name in _COORDINATE_ARGS
        inputs[name] = _coordinates(arg.value, units, call) if is_coordinate else arg.value
    return inputs


def _validated(data: dict[str, Any], call: _Call) -> BaseAction:
    try:
        return BaseAction.parse(data)
    except InvalidAction as error:
        raise ParseError(f"{error} in {_quote(call.source)}") from None


# --------------------------------------------------------------------------- coordinates

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)"
_NUMBER_LIST = re.compile(rf"{_NUMBER}(?:(?:\s*,\s*|\s+){_NUMBER})*")
_TAGS = (("<point>", "</point>"), ("<bbox>", "</bbox>"))
_BRACKETS = (("(", ")"), ("[", "]"))


def _coordinates(text: str, units: _Units, call: _Call) -> dict[str, Any]:
    """A coordinate as written → BaseAction ``Coordinates`` input, in normalized units."""
    numbers = _numbers(text, call)
    xs, ys = numbers[0::2], numbers[1::2]
    if not all(0 <= x <= units.width for x in xs) or not all(0 <= y <= units.height for y in ys):
        raise ParseError(
            f"coordinate {_quote(text)} is outside {units.label} in {_quote(call.source)}"
        )
    # A box targets its centre; averaging in the model's units keeps round values exact.
    x, y = sum(xs) / len(xs), sum(ys) / len(ys)
    normalized = {"x": x / units.width, "y": y / units.height}
    if len(numbers) == 2:
        return {"normalized": normalized}
    x1, y1, x2, y2 = numbers
    return {"normalized": normalized, "referenceBox": {"x1": x1, "y1": y1, "x2": x2, "y2": y2}}


def _numbers(text: str, call: _Call) -> list[float]:
    inner = _unwrap(_unwrap(text, _TAGS), _BRACKETS)
    if not _NUMBER_LIST.fullmatch(inner):
        raise ParseError(
            f"coordinate {_quote(text)} is not numbers like '(100,200)' in {_quote(call.source)}"
        )
    numbers = [float(number) for number in re.findall(_NUMBER, inner)]
    if len(numbers) not in (2, 4):
        raise ParseError(
            f"coordinate {_quote(text)} has {len(numbers)} numbers, not 2 (a point) or 4 (a box), "
            f"in {_quote(call.source)}"
        )
    return numbers


def _unwrap(text: str, pairs: tuple[tuple[str, str], ...]) -> str:
    stripped = text.strip()
    for opening, closing in pairs:
        fits = len(stripped) >= len(opening) + len(closing)
        if fits and stripped.startswith(opening) and stripped.endswith(closing):
            return stripped[len(opening) : -len(closing)].strip()
    return stripped

"""Bad input of any shape: action JSON, model replies, names, sizes and command lines end in a
validation error that says where the problem is, never in a crash or a hang."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from vdesk.adapters.formats import parse_payloads
from vdesk.cli.app import app as cli_app
from vdesk.actions import ACTION_ALIASES, INPUT_ALIASES, UNSUPPORTED_ON_DESKTOP, ActionType, BaseAction, parse_batch
from vdesk.adapters import anthropic, openai, uitars
from vdesk.coords import ImageSpace, Screen
from vdesk.container import NAME_PATTERN, check_name, parse_size
from vdesk.errors import EngineUnavailable, InvalidAction, InvalidArgument, ParseError, VdeskError
from vdesk.plan import Plan, plan

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NO_ENGINE = "unix:///nonexistent.sock"

# -- strategies --------------------------------------------------------------------------------
scalars = (st.none() | st.booleans() | st.integers(min_value=-10**20, max_value=10**20)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=10), inner, max_size=4), max_leaves=12)

ACTION_NAMES = sorted({kind.value for kind in ActionType} | set(ACTION_ALIASES) | set(UNSUPPORTED_ON_DESKTOP))
INPUT_NAMES = sorted({"point", "start", "end", "button", "direction", "amount", "content", "key", "modifiers",
                      "time"} | set(INPUT_ALIASES))
coordinates = (st.lists(scalars, min_size=2, max_size=2)
               | st.fixed_dictionaries({}, optional={
                   "raw": st.fixed_dictionaries({"x": scalars, "y": scalars}),
                   "normalized": st.fixed_dictionaries({"x": scalars, "y": scalars}),
                   "referenceBox": st.fixed_dictionaries({"x1": scalars, "y1": scalars, "x2": scalars, "y2": scalars}),
                   "referenceSystem": st.sampled_from(["screen", "window"]) | st.text(max_size=5)})
               | json_values)
input_values = coordinates | st.sampled_from(["left", "up", "ctrl+c", "Return", "super", "ctrl+alt+Delete", "nope"]) | json_values
plausible_actions = st.fixed_dictionaries(
    {"type": st.sampled_from(ACTION_NAMES) | st.text(max_size=12) | json_values},
    optional={"inputs": st.dictionaries(st.sampled_from(INPUT_NAMES) | st.text(max_size=6), input_values, max_size=4)
              | json_values,
              "meta": st.dictionaries(st.text(max_size=8), json_values, max_size=2) | json_values})
batches = st.lists(plausible_actions | json_values, max_size=5) | plausible_actions | json_values


def planned(actions: list[BaseAction]) -> Plan:
    """Plan ``actions`` for an agent shown 1024x640 frames of a 1280x800 screen at scale 1.5."""
    return plan(actions, Screen(1280, 800, 1.5), ImageSpace(1024, 640))


# -- BaseAction JSON ---------------------------------------------------------------------------
@FUZZ
@given(batches)
@example([{"type": "click", "inputs": {"point": [math.inf, 1]}}])
@example([{"type": "click", "inputs": {"point": {"normalized": {"x": 1e308, "y": -1e308}}}}])
@example([{"type": "scroll", "inputs": {"direction": "down", "amount": 10**30}}])
@example([{"type": "type", "inputs": {"content": "\x00\x1b[31m; rm -rf / `id` $(id)\n"}}])
def test_any_action_json_is_accepted_whole_or_refused_naming_the_action_and_field(data: Any) -> None:
    try:
        batch = parse_batch(data)
    except InvalidAction as error:
        message = str(error)
        if isinstance(data, (list, dict)):
            items = data if isinstance(data, list) else [data]
            match = re.match(r"action (\d+): (.+)", message)
            assert match, message
            index = int(match.group(1))
            # The index is that of the first bad action; the ones before it are fine.
            assert index < len(items) and all(_valid(item) for item in items[:index])
        else:
            assert message.startswith("actions must be a list of actions")
        return
    assert all(isinstance(action, BaseAction) for action in batch)
    # A batch that validates either plans against a real screen or is refused as a whole.
    try:
        planned(batch)
    except InvalidAction as error:
        assert re.match(r"action \d+ \(\w+\): ", str(error)), str(error)


points = st.fixed_dictionaries({"raw": st.fixed_dictionaries({"x": st.integers(0, 1023), "y": st.integers(0, 639)})})  # operator()'s screen
valid_actions = st.one_of(
    st.builds(lambda p: {"type": "click", "inputs": {"point": p}}, points),
    st.builds(lambda p, q: {"type": "drag", "inputs": {"start": p, "end": q}}, points, points),
    st.builds(lambda t: {"type": "type", "inputs": {"content": t}},
              st.text(st.characters(exclude_categories=("Cc", "Cs")), min_size=1, max_size=30)),
    st.builds(lambda k: {"type": "hotkey", "inputs": {"key": k}}, st.sampled_from(["ctrl+c", "alt f4", "Return", "a"])),
    st.builds(lambda d, n: {"type": "scroll", "inputs": {"direction": d, "amount": n}},
              st.sampled_from(["up", "DOWN", "left", "Right"]), st.integers(1, 20)),
    st.just({"type": "wait", "inputs": {"time": 0.1}}),
)


@FUZZ
@given(st.lists(valid_actions, min_size=1, max_size=6))
def test_every_valid_batch_is_accepted_and_plans(data: list[Any]) -> None:
    """The other half of the property above: a parser refusing everything would pass that one."""
    batch = parse_batch(data)
    assert [action.type.value for action in batch] == [item["type"] for item in data]
    plan(batch, Screen(1280, 800, 1.5), ImageSpace(1024, 640))


def _clear(error: Exception) -> bool:
    """A message a user can act on: vdesk's own words, not a bare Python exception text
    (``'NoneType' object ...``, ``list index out of range``, a ``KeyError``'s key). (It may
    quote a reply that spans lines.)"""
    message = str(error)
    python_leak = re.search(r"object has no attribute|object is not|index out of range|unhashable|"
                            r"not supported between|unexpected keyword|Traceback|^'[^']*'$", message)
    return bool(message.strip()) and python_leak is None


def _valid(item: Any) -> bool:
    try:
        BaseAction.parse(item)
        return True
    except InvalidAction:
        return False


# -- model formats -----------------------------------------------------------------------------
UITARS_PIECES = ["Thought: ", "Action: ", "Reflection: ", "Action_Summary: ", "：", "\n", "click(", "left_double(",
                 "drag(", "scroll(", "type(", "hotkey(", "finished(", "wait()", "press(", "navigate(",
                 "start_box='", "end_box='", "content='", "key='", "direction='", "(", ")", "'", '"', ",", "\\",
                 "<|box_start|>", "<|box_end|>", "<bbox>", "</bbox>", "<point>", "</point>", "<think>", "</think>",
                 "<answer>", "</answer>", "<computer_env>", "</computer_env>", "<seed:tool_call>", "<function=click>",
                 "<parameter=point>", "</parameter>", "</function>", "</seed:tool_call>", "<Thought>", "</Thought>",
                 "</Output>", "1000", "-5", "1e400", "nan", "3.5", "99999999999999999999", " ", "up", "ctrl c"]
uitars_replies = st.text(max_size=200) | st.lists(st.sampled_from(UITARS_PIECES) | st.text(max_size=4),
                                                  max_size=30).map("".join)


@FUZZ
@given(uitars_replies, st.sampled_from(["grid", "smart_resize"]))
@example("click(start_box='(1e400,5)')", "grid")
@example("click(start_box='(" + "9" * 5000 + ",5)')", "grid")
@example("Action: " + "(" * 5000, "grid")
def test_any_uitars_reply_parses_or_raises_parse_error(text: str, mode: str) -> None:
    try:
        reply = uitars.parse(text, mode=mode, image=ImageSpace(1920, 1080))  # type: ignore[arg-type]
    except (ParseError, InvalidAction) as error:
        assert _clear(error), repr(str(error))
        return
    try:  # what parses either plans against a real screen or is refused as a whole
        planned(reply.actions)
    except InvalidAction as error:
        assert _clear(error), repr(str(error))


ANTHROPIC_ACTIONS = sorted(anthropic._FIELDS) + ["left_click_drag", "key", "nope"]
anthropic_values = (st.lists(st.integers(-5, 5000) | scalars, min_size=2, max_size=4)
                    | st.sampled_from(["ctrl+c", "Return", "shift", "up", "a b", ""]) | json_values)
anthropic_inputs = st.fixed_dictionaries(
    {"action": st.sampled_from(ANTHROPIC_ACTIONS) | json_values},
    optional={name: anthropic_values for name in ("coordinate", "start_coordinate", "text", "scroll_direction",
                                                  "scroll_amount", "duration", "region", "key")})


@FUZZ
@given(anthropic_inputs | st.dictionaries(st.text(max_size=10), json_values, max_size=5) | json_values,
       st.sampled_from(["computer_20250124", "computer_20251124"]))
def test_any_anthropic_tool_input_translates_or_raises_invalid_action(data: Any, version: str) -> None:
    try:
        call = anthropic.translate(data, version=version)  # type: ignore[arg-type]
    except InvalidAction as error:
        assert _clear(error), repr(str(error))
        return
    assert all(isinstance(action, BaseAction) for action in call.actions)


OPENAI_TYPES = sorted(openai._MODELS) + ["nope"]
openai_values = (st.integers(-5, 5000) | st.sampled_from(["left", "right", "wheel", "back", "CTRL", "L", ""])
                 | st.lists(st.sampled_from(["CTRL", "ALT", "a", "ENTER", ""]) | json_values, max_size=3)
                 | st.lists(st.fixed_dictionaries({"x": st.integers(-2, 3000), "y": st.integers(-2, 3000)}), max_size=3)
                 | json_values)
openai_actions = st.fixed_dictionaries(
    {"type": st.sampled_from(OPENAI_TYPES) | json_values},
    optional={name: openai_values for name in ("x", "y", "button", "keys", "path", "scroll_x", "scroll_y", "text")})


@FUZZ
@given(openai_actions | st.dictionaries(st.text(max_size=10), json_values, max_size=5) | json_values)
def test_any_openai_action_translates_or_raises_invalid_action(data: Any) -> None:
    try:
        call = openai.translate(data)
    except InvalidAction as error:
        assert _clear(error), repr(str(error))
        return
    assert all(isinstance(action, BaseAction) for action in call.actions)


@FUZZ
@given(st.sampled_from(["base", "uitars", "anthropic", "openai"]),
       st.text(max_size=60) | json_values.map(json.dumps) | batches.map(lambda d: json.dumps(d, allow_nan=True)))
@example("base", "[" * 500)
@example("openai", '{"type": "click", "x": 1e999, "y": 1, "button": "left"}')
def test_any_exec_payload_becomes_actions_or_one_line_invalid_action(format: str, payload: str) -> None:
    # What `vdesk exec` does with its ACTION arguments once the desktop is attached.
    try:
        actions = parse_payloads(format, [payload], ImageSpace(1280, 800))
    except InvalidAction as error:
        assert _clear(error), repr(str(error))
        return
    assert all(isinstance(action, BaseAction) for action in actions)


# -- names and sizes ---------------------------------------------------------------------------
@FUZZ
@given(st.text(max_size=80) | st.from_regex(NAME_PATTERN) | st.from_regex(r"[a-z0-9][a-z0-9_.-]{0,70}\n?", fullmatch=True))
@example("abc\n")
@example("a" * 64)
@example("-rm")
@example("a;rm -rf /")
@example("$(id)")
def test_a_desktop_name_is_checked_whole(name: str) -> None:
    try:
        assert check_name(name) == name
    except InvalidArgument as error:
        assert repr(name) in str(error)
        assert not re.fullmatch(r"[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}", name)
        return
    # Accepted names are plain: nothing a shell, a flag parser or a URL would read specially.
    assert re.fullmatch(r"[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}", name)


@FUZZ
@given(st.text(max_size=30) | st.from_regex(r"\s*\d{1,8}[x×X*]\d{1,8}\s*", fullmatch=True))
@example("9" * 5000 + "x1")
@example("1280x800\n")
@example("١٢٨٠x٨٠٠")
@example("-1x5")
def test_a_size_parses_to_two_whole_numbers_or_names_the_bad_text(text: str) -> None:
    try:
        width, height = parse_size(text)
    except InvalidArgument as error:
        assert repr(text) in str(error)
        return
    assert re.fullmatch(r"[0-9]+[x×][0-9]+", text.strip())
    assert (width, height) == tuple(int(part) for part in re.split("[x×]", text.strip()))


@FUZZ
@given(st.integers(0, 999999), st.integers(0, 999999), st.sampled_from(["x", "×"]), st.sampled_from(["", " ", "\n"]))
def test_every_well_written_size_parses(width: int, height: int, sign: str, space: str) -> None:
    assert parse_size(f"{space}{width}{sign}{height}{space}") == (width, height)


floats = st.floats(allow_nan=True, allow_infinity=True) | st.integers(-10, 10**12)


@FUZZ
@given(st.tuples(st.integers(-10, 10**5), st.integers(-10, 10**5)), floats, st.none() | floats,
       st.none() | st.text(max_size=70), st.sampled_from(["none", "bridge", "host", "container:x", ""]))
@example((1280, 800), 1.0, math.nan, None, "none")
@example((1280, 800), 1.0, math.inf, None, "none")
@example((1280, 800), 1.0, 1e300, None, "none")
@example((1280, 800), math.nan, None, None, "none")
def test_desktop_up_checks_every_argument_before_it_reaches_an_engine(size: tuple[int, int], scale: float,
                                                                      ttl: float | None, name: str | None,
                                                                      network: str) -> None:
    from vdesk.desktop import Desktop
    from vdesk.errors import EngineUnavailable

    try:
        Desktop.up(size, scale=scale, ttl=ttl, name=name, network=network, engine=NO_ENGINE)  # type: ignore[arg-type]
    except InvalidArgument:
        return
    except EngineUnavailable:
        # Only arguments a desktop can honour get this far: nothing later can trip on them.
        assert 64 <= size[0] <= 7680 and 64 <= size[1] <= 4320 and 0.5 <= scale <= 4
        assert ttl is None or 0 <= ttl <= 10**9
        assert not name or re.fullmatch(r"[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}", name)
        assert network in ("none", "bridge")
        return
    raise AssertionError("a desktop started on an engine that is not there")


@FUZZ
@given(st.tuples(st.integers(64, 7680), st.integers(64, 4320)), st.floats(0.5, 1.0),
       st.none() | st.floats(0, 10**9), st.none() | st.from_regex(NAME_PATTERN, fullmatch=True),
       st.sampled_from(["none", "bridge"]))
def test_every_argument_a_desktop_can_honour_reaches_the_engine(size: tuple[int, int], scale: float,
                                                                 ttl: float | None, name: str | None,
                                                                 network: str) -> None:
    from vdesk.desktop import Desktop
    from vdesk.errors import EngineUnavailable

    with pytest.raises(EngineUnavailable):
        Desktop.up(size, scale=scale, ttl=ttl, name=name, network=network, engine=NO_ENGINE)  # type: ignore[arg-type]


# -- the command line --------------------------------------------------------------------------
RUNNER = CliRunner()
NO_ENGINE_ENV = {"VDESK_ENGINE": NO_ENGINE, "DOCKER_HOST": NO_ENGINE}


def _invoke(args: list[str]) -> Any:
    result = RUNNER.invoke(cli_app, ["--engine", NO_ENGINE, *args], env=NO_ENGINE_ENV)
    error = result.exception
    # Clean outcomes: success, a usage error or an exit code, or one of vdesk's own errors
    # (which `vdesk.cli.main` prints as one line, exit 2). Anything else is a crash.
    assert error is None or isinstance(error, (SystemExit, VdeskError)), (args, repr(error), result.output)
    return result


# `-f FILE` reads a file: see the known failures at the end of this module.
cli_text = (st.text(max_size=40).filter(lambda arg: not arg.startswith(("-f", "--fi")))
            | st.sampled_from(["--", "--format", "-", "--help", "--settle", "-x", "", "\n",
                               "--format=uitars", "'; rm -rf / #", "$(reboot)"]))


@FUZZ
@given(st.text(min_size=0, max_size=30), st.lists(cli_text, max_size=4))
@example("no-such-desktop", ['[{"type": "click", "inputs": {"point": [1, 2]}}]'])
@example("x\n", ["--format", "bogus", "{}"])
def test_vdesk_exec_with_any_arguments_exits_cleanly(name: str, actions: list[str]) -> None:
    _invoke(["exec", name, *actions])


@FUZZ
@given(st.text(max_size=20) | st.from_regex(r"\d{1,5}x\d{1,5}", fullmatch=True),
       st.none() | st.text(max_size=20), st.none() | st.sampled_from(["0", "-1", "nan", "1e9", "abc", "1.5"]),
       st.none() | st.sampled_from(["none", "bridge", "host", "", "container:x"]))
@example("1280x800", None, None, None)
@example("100000x100000", "ok", "1", "bridge")
def test_vdesk_up_with_any_size_name_ttl_and_network_exits_cleanly(size: str, name: str | None, ttl: str | None,
                                                                   network: str | None) -> None:
    args = ["up", "--size", size]
    for option, value in (("--name", name), ("--ttl", ttl), ("--network", network)):
        if value is not None:
            args += [option, value]
    result = _invoke(args)
    # Refused for what is wrong with the arguments, or, for arguments that are fine, for want
    # of an engine; never both ways for the same input.
    assert result.exit_code != 0
    if isinstance(result.exception, EngineUnavailable):
        width, height = parse_size(size)
        assert 64 <= width <= 7680 and 64 <= height <= 4320 and network in (None, "none", "bridge")


def test_vdesk_up_with_good_arguments_gets_as_far_as_the_engine() -> None:
    result = _invoke(["up", "--size", "800x600", "--name", "fine-name", "--ttl", "60", "--network", "none"])
    assert isinstance(result.exception, EngineUnavailable), (repr(result.exception), result.output)


def test_a_deeply_nested_exec_payload_is_refused_as_invalid_action() -> None:
    with pytest.raises(InvalidAction):
        parse_payloads("base", ["[" * 100000], ImageSpace(1280, 800))


@pytest.mark.parametrize("path", ["", "/nonexistent/actions.json", "/"])
def test_vdesk_exec_with_an_unreadable_file_exits_cleanly(path: str) -> None:
    _invoke(["exec", "some-desktop", "-f", path])

"""Bad input at each public entry point ends in one of vdesk's own errors, of the right kind:
:class:`InvalidArgument` for a bad size, name, network, time-to-live, scale, option or format,
:class:`InvalidAction` for a bad action or model reply — never a bare ``ValueError``,
``OSError`` or ``KeyError``, and never before the check an engine or a desktop was touched."""

from __future__ import annotations

import math
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from PIL import Image

from vdesk import keys
from vdesk.actions import BaseAction, parse_batch
from vdesk.adapters import anthropic, formats, openai, uitars
from vdesk.channel import Channel
from vdesk.container import Limits, parse_size
from vdesk.coords import ImageSpace, Screen, fit_max_pixels, smart_resize
from vdesk.desktop import Desktop
from vdesk.errors import (EngineUnavailable, InvalidAction, InvalidArgument, ParseError, UnknownKey,
                          VdeskError)
from vdesk.inventory import list_desktops, prune_desktops, remove_desktops
from vdesk.encoding import encode
from vdesk.integrations.operator import ExecuteRequest, Operator
from vdesk.plan import plan

NO_ENGINE = "unix:///nonexistent/vdesk-test.sock"


def up(**arguments: Any) -> Callable[[], object]:
    return lambda: Desktop.up(engine=NO_ENGINE, **arguments)


def unconnected_desktop() -> Desktop:
    """A Desktop with nothing behind it: a check that comes first never reaches for one."""
    container = SimpleNamespace(name="unconnected", id="0" * 12, labels={})
    return Desktop(SimpleNamespace(api=None), container, Screen(1280, 800), owned=False)  # type: ignore[arg-type]


ARGUMENTS: dict[str, Callable[[], object]] = {
    "up: size too small": up(size=(10, 10)),
    "up: size not a pair": up(size=(1280,)),
    "up: size of text": up(size=("1280", "800")),
    "up: size of floats": up(size=(1280.5, 800)),
    "up: size by scale too large": up(size=(7680, 4320), scale=2),
    "up: scale too large": up(scale=9),
    "up: scale nan": up(scale=math.nan),
    "up: scale of text": up(scale="2"),
    "up: name with a space": up(name="my desktop"),
    "up: name with a newline": up(name="abc\n"),
    "up: name not text": up(name=42),
    "up: network host": up(network="host"),
    "up: ttl negative": up(ttl=-1),
    "up: ttl infinite": up(ttl=math.inf),
    "up: ttl of text": up(ttl="10"),
    "limits: memory without a unit": lambda: Limits(memory="lots"),
    "limits: cpus zero": lambda: Limits(cpus=0),
    "limits: pids negative": lambda: Limits(pids=-5),
    "up: limits of the wrong type": up(limits="1g"),  # a mapping of them is read as Limits
    "attach: bad name": lambda: Desktop.attach("../etc", engine=NO_ENGINE),
    "remove: bad name": lambda: remove_desktops(["ok", "not ok"], engine=NO_ENGINE),
    "parse_size: words": lambda: parse_size("big"),
    "parse_size: too many digits": lambda: parse_size("9" * 5000 + "x1"),
    "parse_size: not text": lambda: parse_size(1280),  # type: ignore[arg-type]
    "run: empty argv": lambda: unconnected_desktop().programs.run([]),
    "run: argv with an empty string": lambda: unconnected_desktop().programs.run(["ls", ""]),
    "screenshot size: zero": lambda: unconnected_desktop().screen.to_image(Image.new("RGB", (4, 4)), (0, 5)),
    "screenshot size: one number": lambda: unconnected_desktop().screen.to_image(Image.new("RGB", (4, 4)), (5,)),  # type: ignore[arg-type]
    "wait_for_change: region upside down": lambda: unconnected_desktop().screen.wait_for_change((10, 10, 5, 5)),
    "channel: empty argv": lambda: Channel(None, "0" * 12, "test").run([]),  # type: ignore[arg-type]
    "image space: zero": lambda: ImageSpace(0, 10),
    "image space: floats": lambda: ImageSpace(10.5, 10),  # type: ignore[arg-type]
    "screen: scale too small": lambda: Screen(100, 100, 0.1),
    "fit_max_pixels: zero": lambda: fit_max_pixels(Screen(100, 100), 0),
    "smart_resize: aspect ratio": lambda: smart_resize(10000, 10),
    "operator: image not an image space": lambda: Operator(unconnected_desktop(), image=(10, 10)),  # type: ignore[arg-type]
    "encode: gif": lambda: encode(Image.new("RGB", (4, 4)), "gif"),  # type: ignore[arg-type]
    "uitars: unknown mode": lambda: uitars.parse("click(start_box='(1,1)')", mode="pixels"),  # type: ignore[arg-type]
    "uitars: smart_resize without the image": lambda: uitars.parse("click(start_box='(1,1)')", mode="smart_resize"),
    "anthropic: unknown tool version": lambda: anthropic.translate({"action": "screenshot"}, version="computer_1999"),  # type: ignore[arg-type]
    "formats: unknown format": lambda: formats.parse_payloads("yaml", ["{}"]),
    "windows: bad regular expression": lambda: unconnected_desktop_windows().find("(", regex=True),
}


def unconnected_desktop_windows() -> Any:
    from vdesk.windows import Windows
    from vdesk.xconn import XConnection

    windows = Windows(XConnection(lambda: (_ for _ in ()).throw(AssertionError("no connection may be opened"))))
    windows.list = lambda: []  # type: ignore[method-assign]
    return windows


@pytest.mark.parametrize("call", ARGUMENTS.values(), ids=ARGUMENTS.keys())
def test_a_bad_argument_is_an_invalid_argument(call: Callable[[], object]) -> None:
    with pytest.raises(InvalidArgument) as raised:
        call()
    assert not isinstance(raised.value, InvalidAction) and str(raised.value)


ACTIONS: dict[str, Callable[[], object]] = {
    "parse_batch: unknown type": lambda: parse_batch([{"type": "teleport"}]),
    "parse_batch: not a list": lambda: parse_batch("click"),
    "BaseAction.parse: bad JSON": lambda: BaseAction.parse("{not json"),
    "keys: unknown key": lambda: keys.combination("ctrl+nosuchkey"),
    "plan: off the screen": lambda: plan(parse_batch([{"type": "click", "inputs": {"point": [5000, 1]}}]),
                                         Screen(1280, 800)),
    "request: bad actions": lambda: ExecuteRequest.of({"actions": [{"type": "swipe"}]}),
    "request: actions not a list": lambda: ExecuteRequest.of({"actions": 42}),
    "uitars: no action": lambda: uitars.parse("I am not sure what to do."),
    "uitars: off the grid": lambda: uitars.parse("click(start_box='(1200,5)')"),
    "anthropic: unknown action": lambda: anthropic.translate({"action": "teleport"}),
    "anthropic: not an object": lambda: anthropic.translate([1, 2]),  # type: ignore[arg-type]
    "openai: unknown action": lambda: openai.translate({"type": "teleport"}),
    "openai: call without an action": lambda: openai.translate_call({}),
    "formats: bad JSON": lambda: formats.parse_payloads("base", ["[{"]),
    "formats: nested too deeply": lambda: formats.parse_payloads("openai", ["[" * 100000]),
}


@pytest.mark.parametrize("call", ACTIONS.values(), ids=ACTIONS.keys())
def test_a_bad_action_or_reply_is_an_invalid_action(call: Callable[[], object]) -> None:
    with pytest.raises(InvalidAction) as raised:
        call()
    assert str(raised.value)


def test_a_bad_reply_is_a_parse_error_quoting_it() -> None:
    with pytest.raises(ParseError, match="not sure"):
        uitars.parse("I am not sure what to do.")
    with pytest.raises(ParseError, match="not valid JSON"):
        formats.parse_payloads("anthropic", ["{oops"])


def test_an_unknown_key_is_an_unknown_key_naming_it() -> None:
    with pytest.raises(UnknownKey, match="nosuchkey"):
        keys.combination("nosuchkey")


def test_executing_a_bad_batch_reports_it_and_raises_nothing() -> None:
    operator = Operator(unconnected_desktop())
    for request in ({"actions": [{"type": "teleport"}]}, {"actions": "click"}, [{"type": "click"}], 42):
        result = operator.execute(request)  # type: ignore[arg-type]
        assert result.status == "failed" and result.error_message and result.executed == 0
    result = unconnected_desktop().input.execute([{"type": "click", "inputs": {"point": [5000, 1]}}])
    assert result.status == "failed" and "(5000, 1)" in (result.error_message or "")


@pytest.mark.parametrize("call", [
    lambda: Desktop.up(engine=NO_ENGINE),
    lambda: Desktop.attach("somewhere", engine=NO_ENGINE),
    lambda: list_desktops(NO_ENGINE),
    lambda: remove_desktops(["somewhere"], engine=NO_ENGINE),
    lambda: prune_desktops(NO_ENGINE),
    lambda: Desktop.up(engine="no-such-docker-context"),
], ids=["up", "attach", "list", "remove", "prune", "unknown context"])
def test_no_engine_is_engine_unavailable(call: Callable[[], object]) -> None:
    with pytest.raises(EngineUnavailable):
        call()


def test_every_error_here_is_a_vdesk_error() -> None:
    for call in [*ARGUMENTS.values(), *ACTIONS.values()]:
        with pytest.raises(VdeskError):
            call()

"""Model outputs in each format run end to end on a real desktop and arrive as what they ask.

The realistic model outputs live in ``tests/unit/fixtures``: UI-TARS replies, Anthropic
``computer`` tool inputs and OpenAI ``computer_call`` actions, several per action type and
malformed ones, each with the events an X event probe must see (buttons, positions, key
symbols, scroll notches) or the error it must give with nothing reaching the desktop.
"""

from __future__ import annotations

import base64
import io
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from PIL import Image

from tests.desktop.helpers import HANG, program_receiving_keys, xterm
from tests.desktop.probe import Event, EventProbe
from vdesk.adapters import uitars
from vdesk.adapters.anthropic import AnthropicComputer, ToolResult
from vdesk.adapters.formats import parse_payloads
from vdesk.adapters.openai import OpenAIComputer, call_output
from vdesk.coords import ImageSpace
from vdesk.desktop import Desktop
from vdesk.errors import InvalidAction
from vdesk.integrations.operator import Operator

FIXTURES = Path(__file__).parents[1] / "unit" / "fixtures"
PARK = (3, 797)  # where the pointer waits between cases: no case expects motion to end there
BUTTON1_MASK = 0x100
SINGLE_TOOL = "computer_20251124"  # the inputs here are single-tool ones; the toolset: tests/protocols


def cases(name: str) -> list[Any]:
    return [pytest.param(case, id=case["id"]) for case in yaml.safe_load((FIXTURES / name).read_text())]


def summary(events: list[Event]) -> list[str]:
    """Button and key events as the fixtures write them."""
    found = []
    for event in events:
        if event.kind.startswith("button"):
            found.append(f"{event.kind} {event.button} {event.x} {event.y}")
        elif event.kind.startswith("key"):
            found.append(f"{event.kind} {event.keysym}")
    return found


def park(desktop: Desktop, probe: EventProbe) -> None:
    """Put the pointer somewhere no case aims at, and forget the motion that caused."""
    desktop.input.execute([{"type": "mouse_move", "inputs": {"point": {"raw": {"x": PARK[0], "y": PARK[1]}}}}])
    probe.events()


def check_arrivals(case: dict[str, Any], events: list[Event]) -> None:
    if "events" in case:
        assert summary(events) == case["events"]
    motions = [(e.x, e.y) for e in events if e.kind == "motion"]
    if "pointer" in case:
        assert motions and motions[-1] == tuple(case["pointer"])
    if "held_motions" in case:
        held = iter((e.x, e.y) for e in events if e.kind == "motion" and e.state & BUTTON1_MASK)
        assert all(tuple(point) in held for point in case["held_motions"])  # in this order


def assert_mentions(message: str | None, parts: list[str]) -> None:
    assert message is not None
    for part in parts:
        assert part in message, f"{part!r} not in {message!r}"


def image_size(data: str | None) -> tuple[int, int]:
    assert data, "no image returned"
    return Image.open(io.BytesIO(base64.b64decode(data))).size


@pytest.fixture
def typed_into_a_program(shared_desktop: Desktop) -> Iterator[Callable[[], str]]:
    """An xterm running ``cat > FILE`` with the focus; see helpers.program_receiving_keys."""
    with program_receiving_keys(shared_desktop, "adapter-typed") as received:
        yield received


# --- UI-TARS ------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", cases("uitars_replies.yaml"))
def test_uitars_reply_arrives_as_the_events_it_names(shared_desktop, probe, case):
    park(shared_desktop, probe)
    result = uitars.run_reply(shared_desktop, case["reply"], mode=case.get("mode", "grid"))
    if "error" in case:
        assert result.status == "failed" and result.executed == 0
        assert_mentions(result.error_message, case["error"])
        assert probe.events() == []
        return
    assert result.status == "success", result.error_message
    check_arrivals(case, probe.events())
    for name, value in case.get("result", {}).items():
        assert getattr(result, name) == value
    assert result.elapsed_ms >= case.get("min_ms", 0)


def test_uitars_smart_resize_reads_pixels_of_the_image_the_operator_hands_out(shared_desktop, probe):
    # The agent is shown 1024x640 screenshots; UI-TARS-1.5 sees those smart-resized to 1036x644.
    operator = Operator(shared_desktop, image=ImageSpace(1024, 640))
    result = uitars.run_reply(shared_desktop, "Action: click(start_box='(518,322)')",
                              mode="smart_resize", operator=operator)
    assert result.status == "success", result.error_message
    assert summary(probe.events()) == ["button_press 1 640 400", "button_release 1 640 400"]


def test_uitars_typed_text_lands_in_a_program_exactly(shared_desktop, typed_into_a_program):
    reply = ("Thought: Write the greeting, then end the input.\n"
             "Action: type(content='héllo wörld 你好 😀 <a href=\"x\"> $HOME -rf')\n\n"
             "hotkey(key='ctrl d')\n\nhotkey(key='ctrl d')")
    result = uitars.run_reply(shared_desktop, reply)
    assert result.status == "success", result.error_message
    assert typed_into_a_program() == 'héllo wörld 你好 😀 <a href="x"> $HOME -rf'


def test_uitars_escaped_newline_presses_enter(shared_desktop, typed_into_a_program):
    reply = "Thought: Submit the line.\nAction: type(content='first line\\nsecond line\\n')\n\nhotkey(key='ctrl d')"
    result = uitars.run_reply(shared_desktop, reply)
    assert result.status == "success", result.error_message
    assert typed_into_a_program() == "first line\nsecond line\n"


# --- Anthropic ----------------------------------------------------------------------------------


@pytest.mark.parametrize("case", cases("anthropic_tool_calls.yaml"))
def test_anthropic_tool_call_arrives_as_the_events_it_names(shared_desktop, probe, case):
    computer = AnthropicComputer(shared_desktop, version=case.get("version", "computer_20251124"))
    park(shared_desktop, probe)
    *before, last = case["calls"]
    for tool_input in before:
        assert computer(tool_input).error is None
    if "error" in case:
        probe.events()  # what the calls before did
        result = computer(last)
        assert result.output is None and result.base64_image is None
        assert_mentions(result.error, case["error"])
        assert probe.events() == []
        return
    started = time.monotonic()
    result = computer(last)
    took = time.monotonic() - started
    assert result.error is None, result.error
    check_arrivals(case, probe.events())
    if "waits" in case:
        assert took >= case["waits"], f"it answered after {took:.3f} s"
    if "output" in case:
        assert result.output == case["output"]
    if "image" in case:
        assert image_size(result.base64_image) == tuple(case["image"])


def test_anthropic_tool_definition_on_a_wxga_screen_is_the_screen_itself(shared_desktop):
    computer = AnthropicComputer(shared_desktop, version=SINGLE_TOOL)
    assert computer.tool_definition() == {"type": "computer_20251124", "name": "computer",
                                          "display_width_px": 1280, "display_height_px": 800,
                                          "enable_zoom": True}
    assert AnthropicComputer(shared_desktop, version="computer_20250124").tool_definition() == {
        "type": "computer_20250124", "name": "computer", "display_width_px": 1280, "display_height_px": 800}


def test_anthropic_typed_text_lands_in_a_program_exactly(shared_desktop, typed_into_a_program):
    computer = AnthropicComputer(shared_desktop, version=SINGLE_TOOL)
    text = 'Grüße aus Köln 😀 "quoted" \'single\' -rf --help ~/x && echo $PATH'
    assert computer({"action": "type", "text": text}).error is None
    assert computer({"action": "key", "text": "ctrl+d ctrl+d"}).error is None
    assert typed_into_a_program() == text


def test_anthropic_results_answer_the_tool_use_block(shared_desktop, probe):
    computer = AnthropicComputer(shared_desktop, version=SINGLE_TOOL)
    shot = computer({"action": "screenshot"}).to_api("toolu_01")
    assert shot["tool_use_id"] == "toolu_01" and shot["content"][0]["type"] == "image"
    assert "is_error" not in shot
    failed = computer({"action": "left_click", "coordinate": [5000, 1]}).to_api("toolu_02")
    assert failed["is_error"] is True and "(5000, 1)" in failed["content"][0]["text"]
    assert ToolResult(output="X=1,Y=2").to_api("toolu_03")["content"] == [{"type": "text", "text": "X=1,Y=2"}]


@pytest.fixture(scope="module")
def fhd_desktop() -> Iterator[Desktop]:
    """A 1920x1080 desktop: Anthropic's tool shows it to the model as FWXGA 1366x768."""
    with Desktop.up(size=(1920, 1080)) as desktop:
        yield desktop


@pytest.fixture
def fhd_probe(fhd_desktop: Desktop) -> Iterator[EventProbe]:
    with EventProbe(fhd_desktop) as probe:
        yield probe


def test_anthropic_on_a_1920x1080_screen_shows_fwxga_screenshots(fhd_desktop, fhd_probe):
    computer = AnthropicComputer(fhd_desktop, version=SINGLE_TOOL)
    definition = computer.tool_definition()
    assert (definition["display_width_px"], definition["display_height_px"]) == (1366, 768)
    assert image_size(computer({"action": "screenshot"}).base64_image) == (1366, 768)
    assert image_size(computer({"action": "mouse_move", "coordinate": [10, 10]}).base64_image) == (1366, 768)


@pytest.mark.parametrize(("coordinate", "physical"), [
    ([683, 384], (960, 540)),    # the screenshot's centre is the screen's centre
    ([0, 0], (0, 0)),            # the origin stays the origin
    ([1365, 767], (1919, 1079)),  # the last pixel is the last pixel
    ([100, 700], (141, 985)),
])
def test_anthropic_clicks_on_a_scaled_screenshot_land_on_the_physical_pixel(fhd_desktop, fhd_probe, coordinate, physical):
    result = AnthropicComputer(fhd_desktop, version=SINGLE_TOOL)({"action": "left_click", "coordinate": coordinate})
    assert result.error is None, result.error
    x, y = physical
    assert summary(fhd_probe.events()) == [f"button_press 1 {x} {y}", f"button_release 1 {x} {y}"]


def test_anthropic_drag_on_a_scaled_screenshot_lands_on_physical_pixels(fhd_desktop, fhd_probe):
    result = AnthropicComputer(fhd_desktop, version=SINGLE_TOOL)({"action": "left_click_drag", "start_coordinate": [0, 0],
                                             "coordinate": [683, 384]})
    assert result.error is None, result.error
    assert summary(fhd_probe.events()) == ["button_press 1 0 0", "button_release 1 960 540"]


def test_anthropic_cursor_position_on_a_scaled_screen_is_in_screenshot_pixels(fhd_desktop, fhd_probe):
    computer = AnthropicComputer(fhd_desktop, version=SINGLE_TOOL)
    assert computer({"action": "mouse_move", "coordinate": [683, 384]}).error is None
    assert [(e.x, e.y) for e in fhd_probe.events() if e.kind == "motion"][-1] == (960, 540)
    assert computer({"action": "cursor_position"}).output == "X=683,Y=384"
    assert computer({"action": "mouse_move", "coordinate": [1365, 767]}).error is None
    assert computer({"action": "cursor_position"}).output == "X=1365,Y=767"


def test_anthropic_zoom_on_a_scaled_screen_is_a_full_resolution_crop(fhd_desktop):
    computer = AnthropicComputer(fhd_desktop, version=SINGLE_TOOL)
    # Something to look at: a terminal in the top-left quarter of the screen.
    with xterm(fhd_desktop, "zoom-subject", "-geometry", "60x20+40+40"):
        fhd_desktop.screen.settle(quiet=0.2)
        result = computer({"action": "zoom", "region": [0, 0, 683, 384]})
        assert result.error is None, result.error
        zoomed = Image.open(io.BytesIO(base64.b64decode(result.base64_image))).convert("RGB")
        assert zoomed.size == (960, 540)  # not shrunk to the screenshot's 683x384
        physical = fhd_desktop.screen.frames.fresh().image.convert("RGB").crop((0, 0, 960, 540))
        assert zoomed.tobytes() == physical.tobytes()
        assert len(set(zoomed.getdata())) > 2  # it shows the terminal, not a blank


def test_anthropic_on_a_1600x1200_screen_shows_xga_and_maps_clicks_back():
    with Desktop.up(size=(1600, 1200)) as desktop, EventProbe(desktop) as probe:
        desktop.screen.settle(quiet=0.1)
        computer = AnthropicComputer(desktop, version=SINGLE_TOOL)
        definition = computer.tool_definition()
        assert (definition["display_width_px"], definition["display_height_px"]) == (1024, 768)
        assert image_size(computer({"action": "screenshot"}).base64_image) == (1024, 768)
        for coordinate in ([512, 384], [0, 0], [1023, 767]):
            assert computer({"action": "left_click", "coordinate": coordinate}).error is None
        assert summary(probe.events())[::2] == [
            "button_press 1 800 600", "button_press 1 0 0", "button_press 1 1599 1199"]
        zoom = computer({"action": "zoom", "region": [256, 192, 768, 576]})
        assert image_size(zoom.base64_image) == (800, 600)


# --- OpenAI -------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", cases("openai_actions.yaml"))
def test_openai_action_arrives_as_the_events_it_names(shared_desktop, probe, case):
    computer = OpenAIComputer(shared_desktop)
    park(shared_desktop, probe)
    if "error" in case:
        with pytest.raises(InvalidAction) as raised:
            computer(case["action"])
        assert_mentions(str(raised.value), case["error"])
        assert probe.events() == []
        return
    shot = computer(case["action"])
    assert shot.status == "success", shot.error_message
    check_arrivals(case, probe.events())
    if "image" in case:
        assert image_size(shot.base64) == tuple(case["image"])


def test_openai_wait_waits_a_second(shared_desktop):
    started = time.monotonic()
    assert OpenAIComputer(shared_desktop)({"type": "wait"}).status == "success"
    # At least the second it promises; the upper bound (it includes a screenshot) only
    # catches a wait of another order, with a loaded machine's margin.
    assert 1.0 <= time.monotonic() - started < 1.0 + HANG  # it waited; the bound only catches a hang


def test_openai_typed_text_lands_in_a_program_exactly(shared_desktop, typed_into_a_program):
    computer = OpenAIComputer(shared_desktop)
    text = "naïve café — 東京 🎉 <script>alert('x')</script> | tee; `id`"
    assert computer({"type": "type", "text": text}).status == "success"
    for _ in range(2):
        assert computer({"type": "keypress", "keys": ["CTRL", "D"]}).status == "success"
    assert typed_into_a_program() == text


def test_openai_on_a_resized_screenshot_maps_pixels_back(shared_desktop, probe):
    computer = OpenAIComputer(shared_desktop, image=ImageSpace(1024, 640))
    assert computer.tool_definition() == {"type": "computer_use_preview", "display_width": 1024,
                                          "display_height": 640, "environment": "linux"}
    shot = computer({"type": "click", "button": "left", "x": 512, "y": 320})
    assert image_size(shot.base64) == (1024, 640)
    computer({"type": "double_click", "x": 1023, "y": 639})
    computer({"type": "drag", "path": [{"x": 0, "y": 0}, {"x": 256, "y": 160}]})
    assert summary(probe.events())[::2] == ["button_press 1 640 400", "button_press 1 1279 799",
                                            "button_press 1 1279 799", "button_press 1 0 0"]


def test_openai_answer_is_a_computer_call_output_with_the_screenshot(shared_desktop, probe):
    shot = OpenAIComputer(shared_desktop)({"type": "screenshot"})
    item = call_output("call_42", shot)
    assert item["type"] == "computer_call_output" and item["call_id"] == "call_42"
    url = item["output"]["image_url"]
    assert url.startswith("data:image/png;base64,") and image_size(url.split(",", 1)[1]) == (1280, 800)


# --- line ends and tabs, in every format ---------------------------------------------------------
# "\n" submits in every format (UI-TARS' prompt says so): it must arrive as Return (0xff0d), which
# every toolkit takes as Enter, and "\t" as Tab.

TYPED_KEYS_PRESSED = ["a", "Return", "b", "Tab", "c", "Return"]


def pressed(probe: EventProbe) -> list[str]:
    return [event.keysym for event in probe.events() if event.kind == "key_press"]


def test_uitars_type_newline_and_tab_arrive_as_return_and_tab(shared_desktop, probe):
    result = uitars.run_reply(shared_desktop, "Thought: Fill it in and submit.\nAction: type(content='a\\nb\\tc\\n')")
    assert result.status == "success", result.error_message
    assert pressed(probe) == TYPED_KEYS_PRESSED


def test_anthropic_type_newline_and_tab_arrive_as_return_and_tab(shared_desktop, probe):
    result = AnthropicComputer(shared_desktop, version=SINGLE_TOOL)({"action": "type", "text": "a\nb\tc\r\n"})
    assert result.error is None, result.error
    assert pressed(probe) == TYPED_KEYS_PRESSED


def test_openai_type_newline_and_tab_arrive_as_return_and_tab(shared_desktop, probe):
    shot = OpenAIComputer(shared_desktop)({"type": "type", "text": "a\nb\tc\r"})
    assert shot.status == "success", shot.error_message
    assert pressed(probe) == TYPED_KEYS_PRESSED


@pytest.mark.parametrize("code", ["pyautogui.write('a\\nb\\tc\\n')", "pyautogui.typewrite('a\\nb\\tc\\n')",
                                  "pyautogui.typewrite(message='a\\r\\nb\\tc\\r\\n', interval=0.01)"])
def test_pyautogui_write_newline_and_tab_arrive_as_return_and_tab(shared_desktop, probe, code):
    result = shared_desktop.input.execute(parse_payloads("pyautogui", [code], shared_desktop.screen.image()))
    assert result.status == "success", result.error_message
    assert pressed(probe) == TYPED_KEYS_PRESSED

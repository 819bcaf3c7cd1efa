"""The anthropic SDK's own toolset driver class, subclassed over a real desktop: its
``tool_result`` helper runs each member block and what arrived is checked."""

from __future__ import annotations

from anthropic.types.beta import BetaToolUseBlock

from tests.desktop.helpers import program_receiving_keys
from tests.desktop.test_adapters import park, summary
from vdesk.integrations.anthropic_toolset import DesktopToolset


def member(name: str, **tool_input: object) -> BetaToolUseBlock:
    return BetaToolUseBlock.model_validate({"type": "tool_use", "id": f"toolu_{name}", "name": name,
                                            "toolset_name": "computer", "input": tool_input})


def test_the_sdks_toolset_entry_serves_every_member(shared_desktop):
    entry = DesktopToolset(shared_desktop, confirm=lambda context: True).to_dict()
    assert entry["type"] == "computer_toolset_20260801" and not entry.get("configs")  # nothing disabled


def test_the_sdks_tool_result_runs_clicks_keys_and_screenshots(shared_desktop, probe):
    toolset = DesktopToolset(shared_desktop, confirm=lambda context: True)
    park(shared_desktop, probe)
    clicked = toolset.tool_result(member("left_click", coordinate=[640, 400]))
    assert not clicked.get("is_error") and "Clicked." in str(clicked["content"])
    pressed = toolset.tool_result(member("key", text="Down", repeat=2))
    assert not pressed.get("is_error")
    assert summary(probe.events()) == ["button_press 1 640 400", "button_release 1 640 400"] + \
        ["key_press Down", "key_release Down"] * 2
    shot = toolset.tool_result(member("zoom", region=[0, 0, 320, 200]))
    assert shot["content"][0]["type"] == "image"
    toolset.tool_result(member("mouse_move", coordinate=[12, 34]))
    assert "X=12,Y=34" in str(toolset.tool_result(member("cursor_position"))["content"])
    failed = toolset.tool_result(member("left_click", coordinate=[5000, 1]))
    assert failed["is_error"] is True and "(5000, 1)" in str(failed["content"])


def test_the_sdks_confirm_guards_typing(shared_desktop):
    with program_receiving_keys(shared_desktop, "sdk-toolset") as received:
        refused = DesktopToolset(shared_desktop, confirm=lambda context: False).tool_result(member("type", text="no"))
        assert refused["is_error"] is True
        toolset = DesktopToolset(shared_desktop, confirm=lambda context: True)
        toolset.tool_result(member("type", text="yes 😀"))
        toolset.tool_result(member("key", text="ctrl+d", repeat=2))
        assert received() == "yes 😀"

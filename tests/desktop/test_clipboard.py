"""The clipboard and paste typing in a real desktop: exact text, non-ASCII included."""

from __future__ import annotations

import pytest

from tests.desktop.helpers import program_receiving_keys
from vdesk.actions import MAX_TYPED_CHARS
from vdesk.desktop import Desktop
from vdesk.errors import InvalidAction, InvalidArgument

TEXT = "Grüße é 你好 😀 שלום مرحبا\ttab \"quotes\" $HOME `x` \\ -n"


@pytest.mark.parametrize("selection", ["clipboard", "primary"])
def test_set_then_get_is_exact(shared_desktop: Desktop, selection: str) -> None:
    shared_desktop.clipboard.set(TEXT, selection)  # type: ignore[arg-type]
    assert shared_desktop.clipboard.get(selection) == TEXT  # type: ignore[arg-type]


def test_the_selections_are_separate_and_outlive_a_new_channel(shared_desktop: Desktop) -> None:
    shared_desktop.clipboard.set("in the clipboard", "clipboard")
    shared_desktop.clipboard.set("in primary", "primary")
    shared_desktop.channel.close()  # what the owner serves is not tied to this controller
    assert shared_desktop.clipboard.get("clipboard") == "in the clipboard"
    assert shared_desktop.clipboard.get("primary") == "in primary"
    with pytest.raises(InvalidArgument):
        shared_desktop.clipboard.get("secondary")  # type: ignore[arg-type]


def test_a_large_clipboard_round_trips(shared_desktop: Desktop) -> None:
    text = ("ünïcødé 你好 " * 40_000)[:300_000]
    shared_desktop.clipboard.set(text)
    assert shared_desktop.clipboard.get() == text


def test_set_returns_once_the_new_owner_holds_the_selection(shared_desktop: Desktop) -> None:
    # xsel ends before the server it forks owns the selection; a read (or a paste) in between got
    # what was there before: a whole run of the tests read 'in the clipboard' back after setting
    # 300,000 characters. set() now waits for the new owner, asked over the X connection.
    for round_ in range(10):
        before = shared_desktop.windows.selection_owner("CLIPBOARD")
        text = f"round {round_} " + "ü" * 50_000 * (round_ % 2)
        shared_desktop.clipboard.set(text)
        assert shared_desktop.windows.selection_owner("CLIPBOARD") not in (before, 0)
        assert shared_desktop.clipboard.get() == text


def test_paste_typing_lands_exactly(shared_desktop: Desktop) -> None:
    # Lines under the terminal's 4095-character line limit; 8,000 characters in all.
    text = "pasted: " + TEXT + "\n" + ("x" * 79 + "\n") * 100 + "end"
    with program_receiving_keys(shared_desktop, "paste") as received:
        result = shared_desktop.input.execute([{"type": "type", "inputs": {"content": text, "method": "paste"}},
                                         {"type": "type", "inputs": {"content": "\n"}},
                                         {"type": "hotkey", "inputs": {"key": "ctrl+d"}}])
        assert result.status == "success", result.error_message
        assert received() == text + "\n"


def test_text_past_the_limit_is_refused_naming_it(shared_desktop: Desktop) -> None:
    result = shared_desktop.input.execute([{"type": "type", "inputs": {"content": "x" * (MAX_TYPED_CHARS + 1)}}])
    assert result.status == "failed" and f"over the limit of {MAX_TYPED_CHARS}" in (result.error_message or "")
    with pytest.raises(InvalidAction, match="method"):
        from vdesk.actions import BaseAction
        BaseAction.parse({"type": "type", "inputs": {"content": "x", "method": "telepathy"}})

"""Text typed by vdesk lands in a real program exactly as given."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from Xlib import X

from tests.desktop.helpers import program_receiving_keys

from vdesk.desktop import Desktop

SAMPLES = {
    "accents": "héllo wörld ça va? ñ",
    "cjk": "你好，世界 こんにちは 안녕하세요",
    "emoji": "😀 🎉 👍🏽",
    "rtl": "שלום مرحبا",
    "shell": "<>|&;$()'\"`\\ $HOME *?[a] ~ !! #c %s {x}",
    "leading dash": "-rf --help -",
    "tabs": "a\tb\t\tc",
    "many distinct": "一二三四五六七八九十百千万亿兆京垓秭穰沟涧正载极恒河沙阿僧祇那由他不可思议无量大数",
}


@pytest.fixture(scope="module")
def typing_desktop() -> Iterator[Desktop]:
    """A desktop of this module's own: typing rebinds spare keycodes, and every keymap change
    costs the window manager work; a desktop worn by the other modules' tests is left alone."""
    with Desktop.up() as desktop:
        yield desktop


@pytest.fixture
def typed(typing_desktop: Desktop):
    """Type into `cat > FILE` in an xterm and return what the program received."""
    desktop = typing_desktop
    with program_receiving_keys(desktop, "typed") as received:

        def type_and_read(text: str) -> str:
            result = desktop.execute([{"type": "type", "inputs": {"content": text}}])
            assert result.status == "success", result.error_message
            desktop.execute([{"type": "hotkey", "inputs": {"key": "ctrl+d"}}])  # end of line: flush to cat
            desktop.execute([{"type": "hotkey", "inputs": {"key": "ctrl+d"}}])  # end of file: cat exits
            return received()

        yield type_and_read


@pytest.mark.parametrize("name", SAMPLES)
def test_text_arrives_exactly(typed, name):
    assert typed(SAMPLES[name]) == SAMPLES[name]


def test_all_scripts_in_one_text_arrive_exactly(typed):
    text = "héllo 你好 😀 <tag attr='1'> && echo $PATH | tee -a \"f\"\n" + "second line ünïcødé\n"
    assert typed(text) == text


def test_a_trailing_newline_presses_enter(typed):
    assert typed("line one\nline two\n") == "line one\nline two\n"


def test_a_thousand_characters_arrive_exactly(typed):
    text = "".join(chr(ord("a") + (i * 7) % 26) if i % 11 else " " for i in range(1000))
    assert typed(text) == text


def test_a_texts_new_characters_are_bound_in_one_keymap_change(typed, typing_desktop):
    """Every keymap change makes each X client re-read the keyboard (the window manager
    re-grabs its keys); a text's characters cost one change, not one each."""
    display, tunnel = typing_desktop.x_display()
    try:
        text = "Ⅰ Ⅱ Ⅲ Ⅳ Ⅴ Ⅵ Ⅶ Ⅷ"  # not in any other test's text: none of them is bound yet
        assert typed(text) == text
        display.sync()
        changes = []
        while display.pending_events():
            event = display.next_event()
            if event.type == X.MappingNotify and event.request == X.MappingKeyboard:
                changes.append(event)
        assert len(changes) == 1, [(e.first_keycode, e.count) for e in changes]
    finally:
        display.close()
        tunnel.close()


def test_control_characters_other_than_tab_and_newline_are_refused(shared_desktop):
    result = shared_desktop.execute([{"type": "type", "inputs": {"content": "ok\x07no"}}])
    assert result.status == "failed" and "U+0007" in result.error_message and "position 2" in result.error_message

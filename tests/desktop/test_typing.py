"""Text typed by vdesk lands in a real program exactly as given."""

from __future__ import annotations

import concurrent.futures
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image
from Xlib import X

from tests.desktop.helpers import program_receiving_keys
from tests.desktop.probe import EventProbe

from vdesk.desktop import Desktop
from vdesk.xconn import open_display

VDESK = str(Path(sys.executable).with_name("vdesk"))

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
            result = desktop.input.execute([{"type": "type", "inputs": {"content": text}}])
            assert result.status == "success", result.error_message
            desktop.input.execute([{"type": "hotkey", "inputs": {"key": "ctrl+d"}}])  # end of line: flush to cat
            desktop.input.execute([{"type": "hotkey", "inputs": {"key": "ctrl+d"}}])  # end of file: cat exits
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


def pressed(probe: EventProbe) -> list[tuple[str, int]]:
    """The keys that went down in the probe since the last read, with their modifier state."""
    return [(event.keysym, event.state) for event in probe.events() if event.kind == "key_press"]


@pytest.mark.parametrize("line_end", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
@pytest.mark.parametrize("method", ["keys", "paste"])
def test_a_typed_line_end_arrives_as_the_return_key_and_a_tab_as_tab(shared_desktop, probe, line_end, method):
    """Return (0xff0d), not the Linefeed (0xff0a) that xdotool's `type` sends and GTK, Qt and
    LibreOffice ignore; no modifier is down with it. Pasted, the keys that end the text."""
    text = f"ab\tc{line_end}" if method == "keys" else f"ab{line_end}\t"
    result = shared_desktop.input.execute([{"type": "type", "inputs": {"content": text, "method": method}}])
    assert result.status == "success", result.error_message
    keys = pressed(probe)
    expected = [("a", 0), ("b", 0), ("Tab", 0), ("c", 0), ("Return", 0)] if method == "keys" else [("Return", 0), ("Tab", 0)]
    assert keys[-len(expected):] == expected and "Linefeed" not in {name for name, _ in keys}
    if method == "paste":
        assert [name for name, _ in keys[:-2]] == ["Shift_L", "Insert"]  # the paste, then the keys


def test_line_ends_and_tabs_between_non_ascii_text_are_keys_in_order(shared_desktop, probe):
    result = shared_desktop.input.execute([{"type": "type", "inputs": {"content": "é\r\n\t\nz\r"}}])
    assert result.status == "success", result.error_message
    names = [name for name, _ in pressed(probe)]
    # é's keycode was bound for it after the probe read the keymap: only its place is checked.
    assert len(names) == 6 and names[1:] == ["Return", "Tab", "Return", "z", "Return"]


def test_lines_and_tabs_typed_into_a_terminal_arrive_as_the_program_reads_them(typed):
    assert typed("name:\tAda\r\nnext\rlast\n") == "name:\tAda\nnext\nlast\n"


def test_a_thousand_characters_arrive_exactly(typed):
    text = "".join(chr(ord("a") + (i * 7) % 26) if i % 11 else " " for i in range(1000))
    assert typed(text) == text


def test_a_texts_new_characters_are_bound_in_one_keymap_change(typed, typing_desktop):
    """Every keymap change makes each X client re-read the keyboard (the window manager
    re-grabs its keys); a text's characters cost one change, not one each."""
    display, tunnel = open_display(typing_desktop.client.api, typing_desktop.id)
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
    result = shared_desktop.input.execute([{"type": "type", "inputs": {"content": "ok\x07no"}}])
    assert result.status == "failed" and "U+0007" in result.error_message and "position 2" in result.error_message


def _attached_type(name: str, text: str) -> None:
    """Type as a controller of its own would (a `vdesk exec`, a fresh attach) and let go."""
    with Desktop.attach(name) as controller:
        result = controller.input.execute([{"type": "type", "inputs": {"content": text}}])
        assert result.status == "success", result.error_message


def test_thirty_controllers_typing_distinct_characters_never_run_out_of_keycodes(typing_desktop):
    """A desktop has ~19 spare keycodes; every controller shares them through the desktop's own
    keymap, so the 30th types as well as the first and the first's characters still work."""
    texts = ["".join(chr(0x5000 + 4 * n + k) for k in range(4)) + "é " for n in range(30)]
    with program_receiving_keys(typing_desktop, "controllers") as received:
        for text in texts:
            _attached_type(typing_desktop.name, text)
        _attached_type(typing_desktop.name, texts[0])  # long since recycled: bound again
        typing_desktop.input.execute([{"type": "hotkey", "inputs": {"key": "ctrl+d"}}])
        typing_desktop.input.execute([{"type": "hotkey", "inputs": {"key": "ctrl+d"}}])
        assert received() == "".join(texts) + texts[0]


def test_a_vdesk_exec_types_what_earlier_controllers_bound(typing_desktop):
    """Separate processes: each `vdesk exec` reuses the keycodes earlier ones bound."""
    with program_receiving_keys(typing_desktop, "exec") as received:
        for text in ["é你好😀", "é你好😀", "ü日本"] * 3:
            action = json.dumps({"type": "type", "inputs": {"content": text}})
            run = subprocess.run([VDESK, "exec", typing_desktop.name, action],
                                 capture_output=True, text=True, timeout=120)
            assert run.returncode == 0, run.stderr
        typing_desktop.input.execute([{"type": "hotkey", "inputs": {"key": "ctrl+d"}}])
        typing_desktop.input.execute([{"type": "hotkey", "inputs": {"key": "ctrl+d"}}])
        assert received() == "é你好😀é你好😀ü日本" * 3


def test_two_controllers_typing_at_once_each_get_their_characters(typing_desktop):
    """Two controllers binding at the same moment never take each other's keycodes: every
    character arrives (their texts interleave, so the characters are compared as a multiset)."""
    first = "".join(chr(0x6000 + n) for n in range(40))
    second = "".join(chr(0x7000 + n) for n in range(40))
    with program_receiving_keys(typing_desktop, "together") as received:
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            for done in [pool.submit(_attached_type, typing_desktop.name, text) for text in (first, second)]:
                done.result()
        typing_desktop.input.execute([{"type": "hotkey", "inputs": {"key": "ctrl+d"}}])
        typing_desktop.input.execute([{"type": "hotkey", "inputs": {"key": "ctrl+d"}}])
        assert sorted(received()) == sorted(first + second)


def _glyph(desktop: Desktop, char: str) -> Image.Image:
    """``char`` as an xterm with a TrueType face (the README's and the suite's) draws it."""
    marker = f"glyph-{ord(char):x}"  # the same title for all: only the glyph differs on screen
    desktop.programs.run(["xterm", "-name", marker, "-fa", "Monospace", "-fs", "24", "-geometry", "4x1+0+0",
                 "-title", "glyph", "-e", "sh", "-c", f"printf '%s' '{char}'; sleep 60"])
    window = desktop.windows.wait_for("glyph")
    try:
        desktop.screen.settle(quiet=0.3)
        return desktop.screen.shot().convert("RGB").crop((window.x, window.y, window.x + window.width,
                                                         window.y + window.height))
    finally:
        desktop.programs.run(["pkill", "-f", marker], wait=True)
        desktop.windows.wait_gone(window)


def test_cjk_and_emoji_show_as_their_own_glyphs_not_blanks(typing_desktop):
    """Plain xterm's core fonts have no CJK or emoji: the bytes arrive but nothing shows. With
    an Xft face, fontconfig falls back to the image's Noto CJK and Noto Color Emoji."""
    blank, ni, hao, wave = (_glyph(typing_desktop, char) for char in (" ", "你", "好", "👋"))
    ink = lambda image: sum(a != b for a, b in zip(image.getdata(), blank.getdata()))  # noqa: E731
    assert ink(ni) > 40 and ink(hao) > 40 and list(ni.getdata()) != list(hao.getdata())
    yellow = sum(1 for r, g, b in wave.getdata() if r > 200 and g > 150 and b < 100)
    assert yellow > 20, "the emoji is not drawn in colour"

"""Key names as agents write them → X keysym names for xdotool."""

from __future__ import annotations

from typing import Any

import pytest

from vdesk.errors import UnknownKey
from vdesk.keys import combination, keysym


@pytest.mark.parametrize("name, expected", [
    # modifiers, including the macOS / Windows words for the Super key
    ("ctrl", "Control_L"), ("shift", "Shift_L"), ("alt", "Alt_L"),
    ("meta", "Super_L"), ("win", "Super_L"), ("command", "Super_L"), ("cmd", "Super_L"), ("super", "Super_L"),
    # named keys
    ("return", "Return"), ("enter", "Return"), ("esc", "Escape"), ("tab", "Tab"),
    ("backspace", "BackSpace"), ("delete", "Delete"), ("home", "Home"), ("end", "End"),
    ("page down", "Page_Down"), ("pagedown", "Page_Down"), ("pgdn", "Page_Down"), ("page up", "Page_Up"),
    ("arrowup", "Up"), ("up", "Up"), ("arrowdown", "Down"), ("arrowright", "Right"),
    # punctuation by name and as the character itself
    ("comma", "comma"), ("period", "period"), ("slash", "slash"), (",", "comma"), (".", "period"), ("/", "slash"),
    # numpad
    ("numpad5", "KP_5"), ("kp_0", "KP_0"), ("numpadenter", "KP_Enter"), ("numpadadd", "KP_Add"),
    # X keysym spellings pass through
    ("KP_Enter", "KP_Enter"), ("XF86AudioMute", "XF86AudioMute"), ("Page_Down", "Page_Down"),
    ("Return", "Return"), ("Control_L", "Control_L"),
    # OpenAI's upper-case names
    ("CTRL", "Control_L"), ("ALT", "Alt_L"), ("SHIFT", "Shift_L"), ("ENTER", "Return"), ("ESC", "Escape"),
    ("TAB", "Tab"), ("SPACE", "space"), ("BACKSPACE", "BackSpace"), ("ARROWLEFT", "Left"),
    # letters and digits
    ("a", "a"), ("L", "l"), ("7", "7"),
])
def test_key_names_map_to_x_keysyms(name: str, expected: str) -> None:
    assert combination(name) == (expected,)


@pytest.mark.parametrize("n", range(1, 25))
def test_function_keys_f1_to_f24(n: int) -> None:
    assert keysym(f"f{n}") == keysym(f"F{n}") == f"F{n}"


@pytest.mark.parametrize("spec, expected", [
    ("ctrl+shift+t", ("Control_L", "Shift_L", "t")),
    ("ctrl c", ("Control_L", "c")),
    ("ctrl + c", ("Control_L", "c")),
    ("Ctrl+C", ("Control_L", "c")),
    (["CTRL", "L"], ("Control_L", "l")),
    (("alt", "F4"), ("Alt_L", "F4")),
    ("ctrl++", ("Control_L", "plus")),
    ("ctrl+plus", ("Control_L", "plus")),
    ("command+space", ("Super_L", "space")),
    ("shift+page down", ("Shift_L", "Page_Down")),
    ("ctrl+,", ("Control_L", "comma")),
    ("Control_L+Shift_L+t", ("Control_L", "Shift_L", "t")),
])
def test_combinations_split_into_keysyms_in_press_order(spec: Any, expected: tuple[str, ...]) -> None:
    assert combination(spec) == expected


@pytest.mark.parametrize("spec, name", [
    ("banana", "banana"), ("ctrl+banana", "banana"), (["CTRL", "nokey"], "nokey"), ("F99", "F99"),
    ("ctrl+shift+hyperspace", "hyperspace"),
])
def test_unknown_key_names_are_rejected_naming_them(spec: Any, name: str) -> None:
    with pytest.raises(UnknownKey, match=name):
        combination(spec)


@pytest.mark.parametrize("spec", ["", "   ", []])
def test_an_empty_combination_is_rejected(spec: Any) -> None:
    with pytest.raises(UnknownKey):
        combination(spec)


@pytest.mark.parametrize("spec", ["ctrl + +", "ctrl+"])
def test_a_plus_written_with_spaces_or_trailing_is_never_dropped(spec: str) -> None:
    try:
        keys = combination(spec)
    except UnknownKey:
        return  # refusing is fine; pressing ctrl alone is not
    assert keys == ("Control_L", "plus")

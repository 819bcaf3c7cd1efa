"""Key names, as agents write them, turned into X keysym names that xdotool understands.

One table serves every format: the reference SDK's names (``ctrl``, ``arrowup``, ``page down``),
xdotool and X keysym spellings (``Return``, ``Page_Down``, ``KP_Enter``), OpenAI's upper-case
names (``CTRL``, ``ARROWLEFT``), single characters, and macOS words (``cmd``) that mean the
Super key on Linux. An unknown name raises :class:`~vdesk.errors.UnknownKey` naming it; a key
is never dropped.
"""

from __future__ import annotations

import re
from functools import lru_cache

from Xlib import XK

from vdesk.errors import UnknownKey

XK.load_keysym_group("xf86")

_MODIFIERS: dict[str, str] = {
    "ctrl": "Control_L", "control": "Control_L", "ctl": "Control_L", "lctrl": "Control_L",
    "rctrl": "Control_R", "control_l": "Control_L", "control_r": "Control_R",
    "shift": "Shift_L", "lshift": "Shift_L", "rshift": "Shift_R",
    "shift_l": "Shift_L", "shift_r": "Shift_R",
    "alt": "Alt_L", "lalt": "Alt_L", "ralt": "Alt_R", "option": "Alt_L", "opt": "Alt_L",
    "alt_l": "Alt_L", "alt_r": "Alt_R", "altgr": "ISO_Level3_Shift",
    "super": "Super_L", "meta": "Super_L", "win": "Super_L", "windows": "Super_L",
    "cmd": "Super_L", "command": "Super_L", "super_l": "Super_L", "super_r": "Super_R",
}

_NAMED: dict[str, str] = {
    "enter": "Return", "return": "Return", "ret": "Return",
    "esc": "Escape", "escape": "Escape",
    "tab": "Tab", "space": "space", "spacebar": "space",
    "backspace": "BackSpace", "bksp": "BackSpace",
    "delete": "Delete", "del": "Delete", "insert": "Insert", "ins": "Insert",
    "home": "Home", "end": "End",
    "pageup": "Page_Up", "page_up": "Page_Up", "pgup": "Page_Up", "prior": "Page_Up",
    "pagedown": "Page_Down", "page_down": "Page_Down", "pgdn": "Page_Down", "next": "Page_Down",
    "up": "Up", "down": "Down", "left": "Left", "right": "Right",
    "arrowup": "Up", "arrowdown": "Down", "arrowleft": "Left", "arrowright": "Right",
    "capslock": "Caps_Lock", "caps_lock": "Caps_Lock", "numlock": "Num_Lock",
    "scrolllock": "Scroll_Lock", "printscreen": "Print", "print": "Print", "prtsc": "Print",
    "pause": "Pause", "break": "Break", "menu": "Menu", "apps": "Menu", "contextmenu": "Menu",
    "comma": "comma", "period": "period", "dot": "period", "slash": "slash",
    "backslash": "backslash", "semicolon": "semicolon", "colon": "colon",
    "apostrophe": "apostrophe", "quote": "apostrophe", "quotedbl": "quotedbl",
    "minus": "minus", "hyphen": "minus", "dash": "minus", "plus": "plus", "equal": "equal",
    "equals": "equal", "grave": "grave", "backtick": "grave", "tilde": "asciitilde",
    "bracketleft": "bracketleft", "bracketright": "bracketright",
    "braceleft": "braceleft", "braceright": "braceright",
    "parenleft": "parenleft", "parenright": "parenright",
    "less": "less", "greater": "greater", "question": "question", "exclam": "exclam",
    "at": "at", "numbersign": "numbersign", "hash": "numbersign", "dollar": "dollar",
    "percent": "percent", "asciicircum": "asciicircum", "caret": "asciicircum",
    "ampersand": "ampersand", "asterisk": "asterisk", "star": "asterisk",
    "underscore": "underscore", "bar": "bar", "pipe": "bar",
    "volumeup": "XF86AudioRaiseVolume", "volumedown": "XF86AudioLowerVolume",
    "volumemute": "XF86AudioMute", "mute": "XF86AudioMute",
    "kp_enter": "KP_Enter", "numpadenter": "KP_Enter", "kp_add": "KP_Add",
    "kp_subtract": "KP_Subtract", "kp_multiply": "KP_Multiply", "kp_divide": "KP_Divide",
    "kp_decimal": "KP_Decimal", "numpadadd": "KP_Add", "numpadsubtract": "KP_Subtract",
    "numpadmultiply": "KP_Multiply", "numpaddivide": "KP_Divide", "numpaddecimal": "KP_Decimal",
}
_NAMED.update({f"f{n}": f"F{n}" for n in range(1, 25)})
_NAMED.update({f"kp_{n}": f"KP_{n}" for n in range(10)})
_NAMED.update({f"numpad{n}": f"KP_{n}" for n in range(10)})

_CHARACTERS: dict[str, str] = {
    ",": "comma", ".": "period", "/": "slash", "\\": "backslash", ";": "semicolon",
    ":": "colon", "'": "apostrophe", '"': "quotedbl", "-": "minus", "+": "plus", "=": "equal",
    "`": "grave", "~": "asciitilde", "[": "bracketleft", "]": "bracketright",
    "{": "braceleft", "}": "braceright", "(": "parenleft", ")": "parenright", "<": "less",
    ">": "greater", "?": "question", "!": "exclam", "@": "at", "#": "numbersign",
    "$": "dollar", "%": "percent", "^": "asciicircum", "&": "ampersand", "*": "asterisk",
    "_": "underscore", "|": "bar", " ": "space", "\n": "Return", "\t": "Tab",
}

# Names written as two words; joined before the combination is split.
_TWO_WORD_NAMES = re.compile(r"\b(page|caps|num|scroll|print)[ _-](up|down|lock|screen)\b", re.I)


@lru_cache(maxsize=1024)
def keysym(name: str) -> str:
    """Return the X keysym name for one key ``name``; raise :class:`UnknownKey` if none.

    Examples:
        >>> keysym("ctrl"), keysym("ARROWLEFT"), keysym("page_down"), keysym(","), keysym("L")
        ('Control_L', 'Left', 'Page_Down', 'comma', 'l')
    """
    if not name:
        raise UnknownKey("empty key name")
    lowered = name.lower()
    for table in (_MODIFIERS, _NAMED):
        if lowered in table:
            return table[lowered]
    if len(name) == 1:
        if name in _CHARACTERS:
            return _CHARACTERS[name]
        if name.isascii() and name.isalnum():
            return name.lower()
        return f"U{ord(name):04X}"  # any other character: its Unicode keysym
    if _is_x_keysym(name):
        return name  # already an X keysym spelling, e.g. KP_Enter or XF86AudioMute
    for candidate in (name.capitalize(), name.upper(), lowered):
        if _is_x_keysym(candidate):
            return candidate
    raise UnknownKey(f"unknown key {name!r}")


def _is_x_keysym(name: str) -> bool:
    # python-xlib spells the XF86 keys "XF86_AudioMute" where X and xdotool say "XF86AudioMute".
    return bool(XK.string_to_keysym(name) or XK.string_to_keysym(name.replace("XF86", "XF86_", 1)))


def keysym_number(name: str) -> int:
    """The number of a keysym :func:`keysym` names, as X knows it; 0 when python-xlib does not.

    ``U20AC`` is the Unicode keysym 0x010020AC and ``U00E9`` the Latin-1 keysym 0xE9 (X gives a
    Latin-1 character that one, and :mod:`vdesk.keymap` binds it so).

    Examples:
        >>> hex(keysym_number("Return")), hex(keysym_number("XF86AudioMute")), hex(keysym_number("U20AC"))
        ('0xff0d', '0x1008ff12', '0x10020ac')
    """
    if _UNICODE_KEYSYM.fullmatch(name):
        code = int(name[1:], 16)
        return code if 0x20 <= code < 0x7F or 0xA0 <= code < 0x100 else 0x01000000 | code
    found: int = XK.string_to_keysym(name) or XK.string_to_keysym(name.replace("XF86", "XF86_", 1))
    return found


_UNICODE_KEYSYM = re.compile(r"U[0-9A-F]{4,6}")


def combination(spec: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Split a key combination into keysym names, in press order.

    Accepts ``"ctrl+c"``, ``"ctrl c"``, ``"Control_L+Shift_L+t"``, ``"page down"`` and lists
    such as ``["CTRL", "L"]``. A literal plus is written ``"ctrl++"`` or ``"ctrl+plus"``.

    Examples:
        >>> combination("ctrl+shift+t")
        ('Control_L', 'Shift_L', 't')
        >>> combination(["CTRL", "L"])
        ('Control_L', 'l')
    """
    names = list(spec) if isinstance(spec, (list, tuple)) else _split(spec)
    if not names:
        raise UnknownKey(f"no key in {spec!r}")
    return tuple(keysym(name.strip() or name) for name in names)


def _split(spec: str) -> list[str]:
    text = _TWO_WORD_NAMES.sub(lambda m: m.group(1) + m.group(2), spec.strip())
    # Names are separated by '+' or white space. A '+' that stands where a name is expected
    # ("ctrl++", "ctrl + +", "+") or that ends the combination ("ctrl+") is the plus key.
    names: list[str] = []
    expecting_name = True
    for token in re.findall(r"[^+\s]+|\+", text):
        if token != "+" or expecting_name:
            names.append(token)
            expecting_name = False
        else:
            expecting_name = True
    if text.endswith("+") and expecting_name and names:
        names.append("+")
    return names

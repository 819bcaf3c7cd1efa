"""Typing any Unicode text exactly.

xdotool types a character missing from the keymap by binding it to a spare keycode, sending the
key and unbinding it at once. X clients look keysyms up lazily, so a fast typist's characters
are often read after the unbinding and come out wrong or not at all — the mistyped CJK and emoji
seen elsewhere. vdesk binds the characters a text needs *before* typing it and leaves them bound;
a keycode is reused only for another character, least recently used first, and only after the
client has had time to read what was typed with it.

Every keymap change makes every X client re-read the keyboard (the window manager re-grabs its
key bindings each time, tens of milliseconds of CPU), so the characters of a text are bound in
one request, not one per character.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Protocol

from Xlib import X
from Xlib.display import Display

from vdesk.errors import InvalidAction

KEYMAP_TYPEABLE = frozenset(chr(c) for c in range(0x20, 0x7F)) | {"\n", "\t"}
CONTROL_KEYS = {"\b": "BackSpace", "\x1b": "Escape", "\x7f": "Delete"}
REUSE_GRACE_SECONDS = 0.15  # let the client read a keycode's last character before rebinding it


def normalise(text: str) -> str:
    """Line ends become ``\\n``; control characters other than tab, newline, backspace, escape
    and delete are refused, naming their position."""
    for index, char in enumerate(text):  # positions as the caller wrote the text
        if (ord(char) < 0x20 or 0x7F <= ord(char) < 0xA0) and char not in "\n\t\r" and char not in CONTROL_KEYS:
            raise InvalidAction(f"cannot type control character U+{ord(char):04X} at position {index}")
    return text.replace("\r\n", "\n").replace("\r", "\n")


class KeyboardMapping(Protocol):
    """A desktop keyboard's mapping, as far as typing needs it."""

    def spare_keycodes(self) -> list[int]:
        """The keycodes that type nothing."""

    def bind(self, characters: dict[int, str]) -> None:
        """Make each keycode type its character (unshifted and shifted), in one change."""


class ScratchKeymap:
    """The spare keycodes of one desktop's keyboard and the characters bound to them."""

    def __init__(self, mapping: KeyboardMapping) -> None:
        self._mapping = mapping
        self._spare: list[int] | None = None
        self._bound: OrderedDict[str, int] = OrderedDict()  # character → keycode, LRU order
        self._used_at: dict[int, float] = {}

    def segments(self, text: str) -> Iterator[tuple[str, str]]:
        """Yield ``("text", chunk)`` pieces ready for ``xdotool type`` — their characters are
        bound first — and ``("key", keysym)`` for control characters."""
        chunk = ""
        needed: set[str] = set()
        for char in text:
            if char in CONTROL_KEYS:
                if chunk:
                    yield from self._flush(chunk, needed)
                    chunk, needed = "", set()
                yield "key", CONTROL_KEYS[char]
                continue
            if char not in KEYMAP_TYPEABLE and char not in needed:
                if len(needed) == len(self._keycodes()):
                    yield from self._flush(chunk, needed)
                    chunk, needed = "", set()
                needed.add(char)
            chunk += char
        if chunk:
            yield from self._flush(chunk, needed)

    def _flush(self, chunk: str, needed: set[str]) -> Iterator[tuple[str, str]]:
        self._bind(needed)
        yield "text", chunk
        now = time.monotonic()
        for char in needed:
            self._used_at[self._bound[char]] = now

    def _bind(self, chars: set[str]) -> None:
        missing = [c for c in chars if c not in self._bound]
        for char in chars - set(missing):
            self._bound.move_to_end(char)
        if not missing:
            return
        free = [code for code in self._keycodes() if code not in self._bound.values()]
        change: dict[int, str] = {}
        for char in missing:
            change[free.pop() if free else self._evict(chars)] = char
        self._mapping.bind(change)
        self._bound.update((char, code) for code, char in change.items())  # only once they are

    def _evict(self, keep: set[str]) -> int:
        victim = next(c for c in self._bound if c not in keep)
        code = self._bound.pop(victim)
        wait = self._used_at.get(code, 0) + REUSE_GRACE_SECONDS - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        return code

    def _keycodes(self) -> list[int]:
        if self._spare is None:
            self._spare = self._mapping.spare_keycodes()
            if not self._spare:
                raise InvalidAction("the desktop's keyboard has no spare keycode to type non-ASCII text")
        return self._spare


class XKeyboardMapping:
    """The keyboard mapping of an X display (python-xlib). ``request(send)`` runs ``send`` on a
    connection shared with other users (see :meth:`vdesk.windows.Windows.request`)."""

    def __init__(self, request: Callable[[Callable[[Display], object]], object]) -> None:
        self._request = request

    def spare_keycodes(self) -> list[int]:
        def read(display: Display) -> list[int]:
            first, last = display.display.info.min_keycode, display.display.info.max_keycode
            rows = display.get_keyboard_mapping(first, last - first + 1)
            return [first + offset for offset, row in enumerate(rows) if not any(row)]
        return self._request(read)  # type: ignore[return-value]

    def bind(self, characters: dict[int, str]) -> None:
        if characters:
            self._request(lambda display: _change(display, characters))


def _change(display: Display, characters: dict[int, str]) -> None:
    # One request for the whole span: the keycodes between keep what they type.
    low, high = min(characters), max(characters)
    rows = [list(row) for row in display.get_keyboard_mapping(low, high - low + 1)]
    width = max(2, *(len(row) for row in rows))
    rows = [row + [X.NoSymbol] * (width - len(row)) for row in rows]
    for code, char in characters.items():
        rows[code - low] = [keysym_of(char)] * 2 + [X.NoSymbol] * (width - 2)
    display.change_keyboard_mapping(low, rows)
    display.sync()
    while display.pending_events():  # the MappingNotify it earned: nobody here reads events
        display.next_event()


def keysym_of(char: str) -> int:
    """The keysym that types ``char``: Latin-1 keysyms are the code point, the rest of Unicode
    lives at 0x01000000 + code point (as Xlib's ``XStringToKeysym("U20AC")`` gives)."""
    code = ord(char)
    if code < 0x20 or 0x7F <= code < 0xA0:
        raise InvalidAction(f"no keysym types control character U+{code:04X}")
    return code if code < 0x100 else 0x01000000 | code

"""Typing any Unicode text exactly.

xdotool types a character missing from the keymap by binding it to a spare keycode, sending the
key and unbinding it at once. X clients look keysyms up lazily, so a fast typist's characters
are often read after the unbinding and come out wrong or not at all — the mistyped CJK and emoji
seen elsewhere. vdesk binds the characters a text needs *before* typing it and leaves them bound;
a keycode is reused only for another character, least recently used first, and only after the
client has had time to read what was typed with it.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterator

from vdesk.channel import Completed
from vdesk.errors import InvalidAction

Run = Callable[[list[str]], Completed]
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


class ScratchKeymap:
    """The spare keycodes of one desktop's keyboard and the characters bound to them."""

    def __init__(self, run: Run) -> None:
        self._run = run
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
        expressions: list[str] = []
        for char in missing:
            code = free.pop() if free else self._evict(chars)
            self._bound[char] = code
            keysym = f"U{ord(char):04X}"
            expressions += ["-e", f"keycode {code} = {keysym} {keysym}"]
        self._run(["xmodmap", *expressions]).check()

    def _evict(self, keep: set[str]) -> int:
        victim = next(c for c in self._bound if c not in keep)
        code = self._bound.pop(victim)
        wait = self._used_at.get(code, 0) + REUSE_GRACE_SECONDS - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        return code

    def _keycodes(self) -> list[int]:
        if self._spare is None:
            listing = self._run(["xmodmap", "-pke"]).check().stdout
            self._spare = [int(line.split()[1]) for line in listing.splitlines()
                           if line.startswith("keycode") and line.split("=", 1)[1].strip() == ""]
            if not self._spare:
                raise InvalidAction("the desktop's keyboard has no spare keycode to type non-ASCII text")
        return self._spare

"""Typing any Unicode text exactly.

xdotool types a character missing from the keymap by binding it to a spare keycode, sending the
key and unbinding it at once. X clients look keysyms up lazily, so a fast typist's characters
are often read after the unbinding and come out wrong or not at all — the mistyped CJK and emoji
seen elsewhere. vdesk binds the characters a text needs *before* typing it and leaves them bound;
a keycode is reused only for another character, least recently used first, and only after the
client has had time to read what was typed with it.

The binding state lives in the desktop, not in a controller: every `vdesk exec` and every
`Desktop.attach` is a new controller, and a desktop has only ~19 spare keycodes. The desktop's
own keymap says what each keycode types (a character already bound is reused, by anyone), and a
root-window property (:data:`LRU_PROPERTY`) lists the scratch keycodes with the time each was
last used — or, while a controller types with it, the time until which it is held. Each change
reads both, decides and writes both under an X server grab, so two controllers typing at once
never take each other's keycodes.

Every keymap change makes every X client re-read the keyboard (the window manager re-grabs its
key bindings each time, tens of milliseconds of CPU), so the characters of a text are bound in
one request, not one per character.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Container, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from Xlib import X, Xatom
from Xlib.display import Display

from vdesk.errors import DesktopTimeout, InvalidAction
from vdesk.xconn import XConnection

# What `xdotool type` types from the keyboard's own keys: printable ASCII, and the carriage return
# and tab that vdesk.plan leaves inside a typed piece (xdotool sends a control character c as the
# keysym 0xff00 | c: Return and Tab).
KEYMAP_TYPEABLE = frozenset(chr(c) for c in range(0x20, 0x7F)) | {"\r", "\t"}
# The control characters a text may hold, and the key each one is (vdesk.plan presses it). A
# line end is Return: xdotool's `type` sends it as Linefeed (0xff0a), which xterm and Chromium
# take as Enter and GTK, Qt and LibreOffice ignore (a Save dialog stays open, a Writer
# paragraph never breaks).
TYPED_KEYS = {"\n": "Return", "\t": "Tab", "\b": "BackSpace", "\x1b": "Escape", "\x7f": "Delete"}
# Of those, the ones a typed piece carries itself, in the character xdotool types as that key.
TYPED_IN_TEXT = {"\n": "\r", "\t": "\t"}
REUSE_GRACE_SECONDS = 0.15  # let the client read a keycode's last character before rebinding it
LRU_PROPERTY = "_VDESK_SCRATCH_KEYCODES"  # on the root window: keycode, stamp (ms), keycode, ...
HOLD_SECONDS = 10.0  # a held keycode's claim lapses after this (plus the text's length) if its
HOLD_PER_CHARACTER = 0.01  # controller dies while typing: the keycode is not lost for good
WAIT_FOR_KEYCODES_SECONDS = 60.0  # other controllers hold every scratch keycode this long at most
STAMP_MODULUS = 1 << 32


def normalise(text: str) -> str:
    """Line ends (``\\r\\n``, ``\\r``) become ``\\n``; control characters other than
    :data:`TYPED_KEYS` are refused, naming their position."""
    for index, char in enumerate(text):  # positions as the caller wrote the text
        if (ord(char) < 0x20 or 0x7F <= ord(char) < 0xA0) and char != "\r" and char not in TYPED_KEYS:
            raise InvalidAction(f"cannot type control character U+{ord(char):04X} at position {index}")
    return text.replace("\r\n", "\n").replace("\r", "\n")


@dataclass
class SharedKeymap:
    """What every controller of a desktop sees, read and written as one."""

    typing: dict[int, tuple[int, int]]  # keycode → the keysyms it types unshifted and shifted
    stamps: dict[int, int]  # scratch keycode → last use or end of hold, ms (mod 2**32)


@dataclass
class KeymapChange:
    """What a controller writes back: new bindings and the scratch keycodes' new stamps."""

    bind: dict[int, str] = field(default_factory=dict)
    stamps: dict[int, int] = field(default_factory=dict)


class KeyboardMapping(Protocol):
    """A desktop keyboard's mapping and its scratch keycodes' record, as far as typing needs it."""

    def update(self, decide: Callable[[SharedKeymap], KeymapChange | None]) -> None:
        """Read the shared keymap, apply what ``decide`` returns (``None``: nothing), with no
        other controller's update in between."""


@dataclass(frozen=True)
class Busy:
    """No claim: every scratch keycode is held or was used too recently; ``wait`` seconds may
    free one."""

    wait: float


def now_stamp() -> int:
    return int(time.time() * 1000) % STAMP_MODULUS


def age_ms(stamp: int, now: int) -> int:
    """How long ago ``stamp`` was (negative: it is still ahead), modulo the stamps' wrap."""
    age = (now - stamp) % STAMP_MODULUS
    return age - STAMP_MODULUS if age >= STAMP_MODULUS // 2 else age


def scratch_keycodes(keymap: SharedKeymap) -> set[int]:
    """The keycodes vdesk may bind: those recorded as scratch and those that type nothing."""
    return set(keymap.stamps) | {code for code, keysyms in keymap.typing.items() if not any(keysyms)}


def claim(keymap: SharedKeymap, chars: set[str], hold_ms: int, now: int) -> KeymapChange | Busy:
    """Bind ``chars`` (reusing keycodes that already type them) and hold their scratch keycodes
    until ``now + hold_ms``. A keycode is taken for a new character empty first, then least
    recently used, never while held nor within the grace after its last use; when too few are
    free, :class:`Busy` says how long to wait."""
    scratch = scratch_keycodes(keymap)
    where = {keysym: code for code in sorted(keymap.typing, reverse=True) for keysym in keymap.typing[code] if keysym}
    where |= {keysym: code for code in scratch for keysym in keymap.typing.get(code, ()) if keysym}
    used = {where[keysym_of(c)] for c in chars if keysym_of(c) in where}
    missing = sorted(c for c in chars if keysym_of(c) not in where)
    grace = int(REUSE_GRACE_SECONDS * 1000)

    def idle(code: int) -> int:  # ms since its last use; never used: as long as can be
        return age_ms(keymap.stamps[code], now) if code in keymap.stamps else STAMP_MODULUS

    candidates = sorted(scratch - used, key=lambda code: (any(keymap.typing.get(code, ())), -idle(code), code))
    free = [code for code in candidates if idle(code) >= grace]
    if len(free) < len(missing):
        waits = [grace - idle(code) for code in candidates if idle(code) < grace]
        return Busy(max(0.01, min(waits, default=grace) / 1000))
    bind = dict(zip(free, missing))
    held = (now + hold_ms) % STAMP_MODULUS

    def hold(code: int) -> int:  # never the stamp another holder wrote: its release tells them apart
        current = keymap.stamps.get(code)
        if current is not None and age_ms(current, held) <= 0:
            return (current + 1) % STAMP_MODULUS
        return held

    return KeymapChange(bind=bind, stamps={code: hold(code) for code in (used & scratch) | set(bind)})


def release(keymap: SharedKeymap, held: dict[int, int], now: int) -> KeymapChange | None:
    """End this controller's holds (``held``: keycode → the stamp its claim wrote), stamping
    those keycodes as used just now. A keycode another controller claimed since (its stamp
    changed) stays held for that one."""
    stamps = {code: now for code, stamp in held.items() if keymap.stamps.get(code) == stamp}
    return KeymapChange(stamps=stamps) if stamps else None


class ScratchKeymap:
    """Types through one desktop's scratch keycodes, shared with every other controller."""

    def __init__(self, mapping: KeyboardMapping) -> None:
        self._mapping = mapping
        self._capacity: int | None = None

    def segments(self, text: str) -> Iterator[str]:
        """Yield pieces of ``text`` (no control characters: :mod:`vdesk.plan` made those keys)
        ready for ``xdotool type``: their characters are bound first, and held for this
        controller while the piece is typed."""
        chunk = ""
        needed: set[str] = set()
        for char in text:
            if char not in KEYMAP_TYPEABLE and char not in needed:
                if len(needed) == self._keycodes():
                    yield from self._flush(chunk, needed)
                    chunk, needed = "", set()
                needed.add(char)
            chunk += char
        if chunk:
            yield from self._flush(chunk, needed)

    def _flush(self, chunk: str, needed: set[str]) -> Iterator[str]:
        if not needed:
            yield chunk
            return
        held = self._claim(needed, int((HOLD_SECONDS + HOLD_PER_CHARACTER * len(chunk)) * 1000))
        yield chunk
        # Typed: free for others after the grace. (A chunk that failed keeps its hold until
        # the hold lapses; this controller may retry it meanwhile.)
        self._mapping.update(lambda keymap: release(keymap, held, now_stamp()))

    def _claim(self, chars: set[str], hold_ms: int) -> dict[int, int]:
        """Claim ``chars``; return the holds written (keycode → stamp)."""
        deadline = time.monotonic() + WAIT_FOR_KEYCODES_SECONDS
        while True:
            claimed: list[KeymapChange | Busy] = []

            def decide(keymap: SharedKeymap) -> KeymapChange | None:
                claimed.append(claim(keymap, chars, hold_ms, now_stamp()))
                return claimed[-1] if isinstance(claimed[-1], KeymapChange) else None

            self._mapping.update(decide)
            outcome = claimed[-1]
            if isinstance(outcome, KeymapChange):
                return outcome.stamps
            if time.monotonic() + outcome.wait > deadline:
                raise DesktopTimeout(
                    f"other controllers held all {self._keycodes()} spare keycodes of the desktop "
                    f"for {WAIT_FOR_KEYCODES_SECONDS:.0f} s")
            time.sleep(outcome.wait)

    def _keycodes(self) -> int:
        if self._capacity is None:
            counted: list[int] = []
            self._mapping.update(lambda keymap: counted.append(len(scratch_keycodes(keymap))))
            self._capacity = counted[0]
            if not self._capacity:
                raise InvalidAction("the desktop's keyboard has no spare keycode to type non-ASCII text")
        return self._capacity


class XKeyboardMapping:
    """The keyboard mapping of a desktop's X display (python-xlib), on its shared connection."""

    def __init__(self, connection: XConnection) -> None:
        self._x = connection

    def update(self, decide: Callable[[SharedKeymap], KeymapChange | None]) -> None:
        self._x.request(lambda display: _update(display, decide))


def _update(display: Display, decide: Callable[[SharedKeymap], KeymapChange | None]) -> None:
    # The grab makes read, decide and write one step for every other X client (other
    # controllers included); it lasts a few round trips.
    display.grab_server()
    try:
        root = display.screen().root
        atom = display.intern_atom(LRU_PROPERTY)
        first, last = display.display.info.min_keycode, display.display.info.max_keycode
        rows = display.get_keyboard_mapping(first, last - first + 1)
        typing = {first + offset: (row[0], row[1]) if len(row) > 1 else (row[0] if row else 0, 0)
                  for offset, row in enumerate(rows)}
        keymap = SharedKeymap(typing=typing, stamps=_read_stamps(root, atom, typing))
        change = decide(keymap)
        if change is not None:
            if change.bind:
                _bind(display, change.bind)
            if change.stamps:
                stamps = keymap.stamps | change.stamps
                flat = [value for code in sorted(stamps) for value in (code, stamps[code])]
                root.change_property(atom, Xatom.CARDINAL, 32, flat)
    finally:
        display.ungrab_server()
        display.sync()
    while display.pending_events():  # the MappingNotify it earned: nobody here reads events
        display.next_event()


def _read_stamps(root: object, atom: int, typing: Container[int]) -> dict[int, int]:
    # What the desktop holds is untrusted: only pairs naming a real keycode count.
    prop = root.get_full_property(atom, Xatom.CARDINAL)  # type: ignore[attr-defined]
    if prop is None or prop.format != 32:
        return {}
    values = [int(v) % STAMP_MODULUS for v in prop.value]
    return {code: stamp for code, stamp in zip(values[::2], values[1::2]) if code in typing}


def _bind(display: Display, characters: dict[int, str]) -> None:
    # One request for the whole span: the keycodes between keep what they type.
    low, high = min(characters), max(characters)
    rows = [list(row) for row in display.get_keyboard_mapping(low, high - low + 1)]
    width = max(2, *(len(row) for row in rows))
    rows = [row + [X.NoSymbol] * (width - len(row)) for row in rows]
    for code, char in characters.items():
        rows[code - low] = [keysym_of(char)] * 2 + [X.NoSymbol] * (width - 2)
    display.change_keyboard_mapping(low, rows)


def keysym_of(char: str) -> int:
    """The keysym that types ``char``: Latin-1 keysyms are the code point, the rest of Unicode
    lives at 0x01000000 + code point (as Xlib's ``XStringToKeysym("U20AC")`` gives)."""
    code = ord(char)
    if code < 0x20 or 0x7F <= code < 0xA0:
        raise InvalidAction(f"no keysym types control character U+{code:04X}")
    return code if code < 0x100 else 0x01000000 | code

"""Typing any Unicode text: normalising it, and binding non-keymap characters before typing."""

from __future__ import annotations

import re
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vdesk import keymap
from vdesk.errors import DesktopGone, DesktopTimeout, InvalidAction
from vdesk.keymap import KEYMAP_TYPEABLE, REUSE_GRACE_SECONDS, ScratchKeymap, keysym_of, normalise

SPARE = [93, 97, 120]
LETTER_A = 38  # a keycode the layout uses: never bound


class FakeClock:
    """Stands in for the ``time`` module: sleeping only moves the clock."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class FakeX:
    """A desktop's keyboard mapping and scratch record as an X server keeps them: one for every
    controller (every ScratchKeymap made on it)."""

    def __init__(self, clock: FakeClock, spare: list[int] = SPARE) -> None:
        self.clock, self.spare = clock, spare
        self.requests = 0  # mapping changes, each of which every X client must re-read
        self.bindings: list[tuple[float, int, str]] = []  # (when, keycode, character)
        self.keymap: dict[int, str] = {}
        self.stamps: dict[int, int] = {}
        self.failing = False

    def update(self, decide) -> None:
        typing = {code: (keymap.keysym_of(self.keymap[code]),) * 2 if code in self.keymap else (0, 0)
                  for code in self.spare}
        typing[LETTER_A] = (ord("a"), ord("A"))
        change = decide(keymap.SharedKeymap(typing=typing, stamps=dict(self.stamps)))
        if change is None:
            return
        if change.bind:
            self.requests += 1
            if self.failing:
                raise DesktopGone("the X connection dropped")
        for code, char in change.bind.items():
            assert code in self.spare, code
            self.keymap[code] = char
            self.bindings.append((self.clock.now, code, char))
        self.stamps |= change.stamps

    def typeable(self, text: str) -> bool:
        bound = set(self.keymap.values())
        return all(char in KEYMAP_TYPEABLE or char in bound for char in text)


@pytest.fixture
def clock() -> FakeClock:
    with mock.patch.object(keymap, "time", FakeClock()) as fake:
        yield fake


def type_all(keymap: ScratchKeymap, x: FakeX, text: str) -> list[str]:
    """Consume the segments as the desktop does, checking each is typeable when typed."""
    pieces = []
    for piece in keymap.segments(text):
        assert x.typeable(piece), f"{piece!r} yielded before its characters were bound"
        pieces.append(piece)
        x.clock.now += 0.01  # typing takes a moment
    return pieces


# --- normalise ------------------------------------------------------------------------------


def test_line_ends_become_newlines() -> None:
    assert normalise("a\r\nb\rc\nd") == "a\nb\nc\nd"


def test_tab_newline_and_editing_keys_are_kept() -> None:  # the planner makes them keys
    assert normalise("a\tb\nc\bd\x1be\x7f") == "a\tb\nc\bd\x1be\x7f"


@pytest.mark.parametrize("text, code, position", [("ab\x00", "U+0000", 2), ("\x07", "U+0007", 0),
                                                  ("x\x85y", "U+0085", 1), ("héllo\x1f", "U+001F", 5)])
def test_control_characters_are_refused_with_their_position(text: str, code: str, position: int) -> None:
    with pytest.raises(InvalidAction, match=rf"{re.escape(code)}.*position {position}\b"):
        normalise(text)


def test_the_refused_position_is_the_one_in_the_text_as_given() -> None:
    with pytest.raises(InvalidAction, match=r"position 4\b"):
        normalise("a\r\nb\x01")


@given(st.text())
def test_normalised_text_has_no_carriage_returns_and_is_stable(text: str) -> None:
    try:
        once = normalise(text)
    except InvalidAction:
        return
    assert "\r" not in once and normalise(once) == once


# --- segments -------------------------------------------------------------------------------


def test_ascii_text_needs_no_keymap_change(clock: FakeClock) -> None:
    x = FakeX(clock)
    text = "Hello, <world> & 'you'! ~"
    assert type_all(ScratchKeymap(x), x, text) == [text]
    assert x.requests == 0


def test_the_characters_of_a_text_are_bound_in_one_change(clock: FakeClock) -> None:
    x = FakeX(clock)
    type_all(ScratchKeymap(x), x, "α β γ")
    assert x.requests == 1 and {char for _, _, char in x.bindings} == {"α", "β", "γ"}


def test_non_ascii_characters_are_bound_before_the_text_that_uses_them(clock: FakeClock) -> None:
    x = FakeX(clock)
    pieces = type_all(ScratchKeymap(x), x, "café → 日本")
    assert "".join(pieces) == "café → 日本"
    assert {char for _, _, char in x.bindings} == {"é", "→", "日", "本"}


def test_only_spare_keycodes_are_bound(clock: FakeClock) -> None:
    x = FakeX(clock)
    type_all(ScratchKeymap(x), x, "αβγδεζ")
    assert {code for _, code, _ in x.bindings} <= set(SPARE)


def test_more_distinct_characters_than_spare_keycodes_split_the_text(clock: FakeClock) -> None:
    x = FakeX(clock)
    text = "αβ-γδ-εζ-αη"
    pieces = type_all(ScratchKeymap(x), x, text)
    assert len(pieces) >= 3
    assert "".join(pieces) == text
    assert all(len(set(piece) - KEYMAP_TYPEABLE) <= len(SPARE) for piece in pieces)


def test_characters_already_bound_are_not_rebound(clock: FakeClock) -> None:
    x = FakeX(clock)
    keymap = ScratchKeymap(x)
    type_all(keymap, x, "éàé")
    assert [char for _, _, char in x.bindings] in (["é", "à"], ["à", "é"])
    requests = x.requests
    type_all(keymap, x, "à la é")
    assert x.requests == requests


def test_characters_whose_binding_failed_are_bound_again_next_time(clock: FakeClock) -> None:
    x = FakeX(clock)
    keymap = ScratchKeymap(x)
    x.failing = True
    with pytest.raises(DesktopGone):
        type_all(keymap, x, "αβ")
    x.failing = False
    assert type_all(keymap, x, "αβ") == ["αβ"]  # typeable: checked as it is yielded


def test_a_keycode_is_rebound_only_after_its_last_character_had_time_to_be_read(clock: FakeClock) -> None:
    x = FakeX(clock, spare=[93])
    finished = []
    for _ in ScratchKeymap(x).segments("αβ"):
        clock.now += 0.01
        finished.append(clock.now)
    (_, _, first), (second_bound_at, _, second) = x.bindings
    assert (first, second) == ("α", "β")
    assert second_bound_at - finished[0] >= REUSE_GRACE_SECONDS - 1e-9


def test_controllers_one_after_another_share_the_keycodes_and_never_run_out(clock: FakeClock) -> None:
    """Each `vdesk exec` is a new controller: what earlier ones bound is reused or recycled,
    least recently used first, never lost."""
    x = FakeX(clock)
    for n in range(30):
        text = chr(0x4E00 + 2 * n) + chr(0x4E01 + 2 * n) + "é"
        assert "".join(type_all(ScratchKeymap(x), x, text)) == text
        clock.now += 1
    assert [char for _, _, char in x.bindings].count("é") == 1  # bound once, reused by every controller
    assert len(x.keymap) == len(SPARE)


def test_the_least_recently_used_keycode_is_recycled_across_controllers(clock: FakeClock) -> None:
    x = FakeX(clock)
    for char in "αβγ":
        type_all(ScratchKeymap(x), x, char)
        clock.now += 1
    type_all(ScratchKeymap(x), x, "α")  # used again: β is now the oldest
    clock.now += 1
    type_all(ScratchKeymap(x), x, "δ")
    assert sorted(x.keymap.values()) == ["α", "γ", "δ"]


def test_a_keycode_another_controller_is_typing_with_is_not_taken(clock: FakeClock) -> None:
    x = FakeX(clock, spare=[93, 97])
    first = ScratchKeymap(x).segments("αβ")
    assert next(first) == "αβ"  # bound and held while it is typed
    clock.now += 5
    second = ScratchKeymap(x).segments("γ")
    with mock.patch.object(keymap, "WAIT_FOR_KEYCODES_SECONDS", 3):
        with pytest.raises(DesktopTimeout, match="spare keycodes"):
            next(second)
    assert sorted(x.keymap.values()) == ["α", "β"]
    list(first)  # typed: released
    clock.now += 1
    assert type_all(ScratchKeymap(x), x, "γ") == ["γ"]


def test_a_held_keycode_is_freed_when_its_controller_never_comes_back(clock: FakeClock) -> None:
    x = FakeX(clock, spare=[93])
    abandoned = ScratchKeymap(x).segments("α")
    next(abandoned)  # the controller dies here, holding the keycode
    assert type_all(ScratchKeymap(x), x, "β") == ["β"]  # waits out the hold
    assert clock.now - 1000 >= keymap.HOLD_SECONDS


def test_a_character_on_a_layout_keycode_is_not_bound_again(clock: FakeClock) -> None:
    x = FakeX(clock)
    with mock.patch.object(keymap, "KEYMAP_TYPEABLE", frozenset()):
        type_all(ScratchKeymap(x), x, "aA")
    assert x.requests == 0


def test_a_keyboard_without_spare_keycodes_refuses_non_ascii_text(clock: FakeClock) -> None:
    x = FakeX(clock, spare=[])
    with pytest.raises(InvalidAction, match="spare keycode"):
        list(ScratchKeymap(x).segments("é"))


printable = st.characters(exclude_categories=("Cc", "Cs"))
mostly_few_characters = st.sampled_from("ab é→日本αβγ😀") | printable


@given(text=st.text(mostly_few_characters, max_size=60), spare=st.integers(1, 4))
def test_segments_give_back_every_character_in_order_each_bound_when_typed(text: str, spare: int) -> None:
    with mock.patch.object(keymap, "time", FakeClock()) as fake_clock:
        x = FakeX(fake_clock, [200 + n for n in range(spare)])
        pieces = type_all(ScratchKeymap(x), x, text)
    assert "".join(pieces) == text
    assert all(len(set(piece) - KEYMAP_TYPEABLE) <= spare for piece in pieces)


@pytest.mark.parametrize("char, keysym", [(" ", 0x20), ("é", 0xE9), ("ÿ", 0xFF), ("€", 0x10020AC),
                                          ("日", 0x10065E5), ("😀", 0x101F600)])
def test_keysyms_are_latin1_or_unicode_as_xlib_names_them(char: str, keysym: int) -> None:
    assert keysym_of(char) == keysym


def test_a_controller_that_finishes_does_not_end_the_hold_of_one_still_typing_the_same_character(clock: FakeClock) -> None:
    x = FakeX(clock, spare=[93])
    first = ScratchKeymap(x).segments("α")
    next(first)  # the first controller types α
    second = ScratchKeymap(x).segments("α")
    next(second)  # the second reuses α's keycode and holds it too
    second_started = clock.now
    list(first)  # the first is done; the second is still typing with that keycode
    clock.now += 1
    type_all(ScratchKeymap(x), x, "β")  # a third must wait for the second's hold, not take it now
    (_, _, _), (bound_at, _, char) = x.bindings
    assert char == "β" and bound_at >= second_started + keymap.HOLD_SECONDS

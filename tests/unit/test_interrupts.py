"""SignalGuard holds Ctrl-C and SIGTERM outside its armed parts and delivers them at the end."""

from __future__ import annotations

import os
import signal

import pytest

from vdesk.interrupts import Interrupted, SignalGuard


def test_a_signal_outside_the_armed_part_is_held_until_the_guard_ends() -> None:
    steps = []
    with pytest.raises(KeyboardInterrupt):
        with SignalGuard():
            os.kill(os.getpid(), signal.SIGINT)
            steps.append("after the signal")  # not cut short
    assert steps == ["after the signal"]


def test_the_first_signal_in_the_armed_part_raises_and_later_ones_are_held() -> None:
    steps = []
    with pytest.raises(KeyboardInterrupt):
        with SignalGuard() as guard:
            try:
                with guard.armed():
                    os.kill(os.getpid(), signal.SIGINT)
                    steps.append("not reached")
            except Interrupted:
                os.kill(os.getpid(), signal.SIGTERM)  # a second one while undoing
                steps.append("undone")
    assert steps == ["undone"]


def test_a_held_signal_raises_on_entering_the_armed_part() -> None:
    with SignalGuard() as guard:
        os.kill(os.getpid(), signal.SIGINT)
        with pytest.raises(Interrupted):
            with guard.armed():
                pass
        guard.pending = None  # handled here: nothing to deliver


def test_the_previous_handlers_come_back() -> None:
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    with SignalGuard():
        pass
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before

"""A Ctrl-C that lands where the interpreter cannot raise it (a weakref callback, as importlib's
module locks use) is not lost inside a command: it surfaces in the command's own code."""

from __future__ import annotations

import gc
import time
import weakref

import pytest

from vdesk.cli import _UnraisableInterrupts


class Thing:
    pass


def test_an_interrupt_in_a_callback_surfaces_in_the_code_that_follows():
    def callback(reference: object) -> None:
        raise KeyboardInterrupt

    swallowed = _UnraisableInterrupts()
    try:
        with pytest.raises(KeyboardInterrupt):
            thing = Thing()
            reference = weakref.ref(thing, callback)
            del thing
            gc.collect()  # the interpreter calls the callback and cannot raise what it raised
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                time.sleep(0.001)
        assert swallowed.seen and reference() is None
    finally:
        swallowed.close()

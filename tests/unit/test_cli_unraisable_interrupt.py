"""A Ctrl-C that lands where the interpreter cannot raise it (a weakref callback, as importlib's
module locks use) is not lost inside a command: it surfaces in the command's own code.

The interrupt goes to the main thread, so the check runs as the main thread of an interpreter
of its own (a test runner may run tests in another thread, and its own main thread must not be
interrupted)."""

from __future__ import annotations

import subprocess
import sys

CHECK = """
import gc, time, weakref
from vdesk.cli import _UnraisableInterrupts

class Thing:
    pass

def callback(reference):
    raise KeyboardInterrupt

swallowed = _UnraisableInterrupts()
try:
    try:
        thing = Thing()
        reference = weakref.ref(thing, callback)
        del thing
        gc.collect()  # the interpreter calls the callback and cannot raise what it raised
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            time.sleep(0.001)
        print("not raised")
    except KeyboardInterrupt:
        print("surfaced" if swallowed.seen and reference() is None else "raised, but not seen")
finally:
    swallowed.close()
"""


def test_an_interrupt_in_a_callback_surfaces_in_the_code_that_follows():
    ran = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=60)
    assert (ran.returncode, ran.stdout) == (0, "surfaced\n"), ran.stderr

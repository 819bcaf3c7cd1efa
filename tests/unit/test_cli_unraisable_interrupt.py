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


TURNED = """
import os, signal, sys, types
from vdesk import cli

def invoke(argv):
    try:
        os.kill(os.getpid(), signal.SIGINT)
        signal.sigtimedwait([], 0)  # lets the handler run here, as between two bytecodes
    except KeyboardInterrupt:
        raise TypeError("expected a message argument") from None  # what the interpreter made of it
    return 0

sys.modules["vdesk.cli.app"] = types.SimpleNamespace(invoke=invoke)
print(cli.run(["up"]), signal.getsignal(signal.SIGINT) is signal.default_int_handler)
"""


def test_an_interrupt_the_interpreter_turned_into_another_error_ends_as_interrupted():
    """A SIGINT that lands in an extension module's import can surface as a TypeError (CPython
    could not build the ImportError's message): the command still ends as interrupted, exit 130,
    and Python's own handler is back afterwards."""
    ran = subprocess.run([sys.executable, "-c", TURNED], capture_output=True, text=True, timeout=60)
    assert (ran.stdout, ran.stderr) == ("130 True\n", "vdesk: interrupted\n"), (ran.returncode, ran.stderr)


EARLY = """
import sys
from vdesk import cli

def run(argv, early=None):
    raise KeyboardInterrupt  # as a SIGINT does that lands while the boundary sets itself up

cli.run = run
sys.argv = ["vdesk", "run", "NAME", "--wait", "--", "sleep", "3"]
cli.main()
"""


def test_an_interrupt_before_the_command_ran_is_the_interrupted_line():
    """A Ctrl-C that lands in the boundary's own set-up (a whole run of the suite, on a loaded
    machine, saw `vdesk run` exit 130 without a word) ends as any other: one line, exit 130."""
    ran = subprocess.run([sys.executable, "-c", EARLY], capture_output=True, text=True, timeout=60)
    assert (ran.returncode, ran.stderr) == (130, "vdesk: interrupted\n"), (ran.returncode, ran.stderr)

"""The ``vdesk`` command's entry point: a module of its own, outside the package, so that it
runs before the package does.

Python imports the ``vdesk`` package and :mod:`vdesk.cli` before a command can run: tens of
milliseconds on a loaded machine, in which a Ctrl-C would end in a traceback. From this
module's first lines until the command line's boundary (:func:`vdesk.cli.main`) takes SIGINT
over, a Ctrl-C ends the process at once with the boundary's one line and exit 130: nothing
has been made yet that would need undoing. Importing this module takes SIGINT over, so nothing
but the console script imports it.
"""

import os  # loaded already: the interpreter's start imports it
import _signal  # built into the interpreter; `signal` would first import enum, a window of its own


def _interrupted(signum: int, frame: object) -> None:
    # The boundary's own line and exit code (vdesk.cli.INTERRUPTED), written here by hand: what
    # would say them is what is still being imported.
    os.write(2, b"vdesk: interrupted\n")
    os._exit(130)


_signal.signal(_signal.SIGINT, _interrupted)


def main() -> None:
    """Console entry point (``vdesk = "vdesk_entry:main"``)."""
    from vdesk.cli import main as command_line

    command_line(early=_interrupted)

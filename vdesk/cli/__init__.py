"""The ``vdesk`` command line: parses arguments, calls the Python API, prints.

This module is the boundary every command runs inside. It imports only what the interpreter
has already loaded, so that Ctrl-C or an error at any moment — even while the commands' modules
are still being imported — ends in one line on stderr: exit 2 for an error, 130 for Ctrl-C.
Before it, while Python imports the package, the console script's own module
(:mod:`vdesk_entry`) answers Ctrl-C. Commands are in :mod:`vdesk.cli.app` and the modules it
registers.
"""

from __future__ import annotations

import os
import sys

INTERRUPTED = 130
FAILED = 2


_decided: list[int] = []  # each command's exit code, once it has said how it ended


def main(early: object = None) -> None:
    """The console script's boundary (called by :func:`vdesk_entry.main`); ``early`` is the
    SIGINT handler that answered Ctrl-C until now, which the boundary takes over from."""
    try:
        code = run(sys.argv[1:], early)
    except KeyboardInterrupt:
        # A Ctrl-C in the boundary's own teardown, after the command said how it ended: that
        # ending stands (else the interpreter prints a traceback under the command's line). One
        # in its set-up, before a command ran (a loaded machine widens that moment), is said.
        code = _decided[-1] if _decided else _fail("interrupted", INTERRUPTED)
    import signal

    # The command is over and has said how it ended: a Ctrl-C while the interpreter shuts down
    # changes nothing (the interpreter would otherwise die of it, or print a traceback).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.exit(code)


def run(argv: list[str], early: object = None) -> int:
    """Run one command line and return its exit code; nothing escapes but the code. ``early``:
    see :func:`main`."""
    swallowed, received = _UnraisableInterrupts(), _ReceivedInterrupts(early)
    try:
        code = _outcome(argv, swallowed, received)
        _decided.append(code)
        return code
    finally:
        received.close()
        swallowed.close()


def _outcome(argv: list[str], swallowed: _UnraisableInterrupts, received: _ReceivedInterrupts) -> int:
    try:
        from vdesk.cli.app import invoke  # the heavy imports happen inside the boundary

        code = invoke(argv)
        return _fail("interrupted", INTERRUPTED) if swallowed.seen else code
    except KeyboardInterrupt as interrupt:  # a command may say how far it got
        return _fail(one_line(str(interrupt)) or "interrupted", INTERRUPTED)
    except BrokenPipeError:  # `vdesk ls | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as error:  # noqa: BLE001 - the boundary: one line, whatever it is
        if os.environ.get("VDESK_DEBUG"):
            import traceback

            traceback.print_exc()
        interrupted = swallowed.seen or received.seen
        return _fail("interrupted", INTERRUPTED) if interrupted else _fail(*describe_error(error))


class _UnraisableInterrupts:
    """A Ctrl-C that lands in code the interpreter runs for itself (an import's module-lock
    callback, a finalizer) cannot be raised there: the interpreter prints "Exception ignored"
    with a traceback and goes on. While a command runs such an interrupt is delivered again, as
    a fresh SIGINT that surfaces in the command's own code, and a command that still finishes
    ends as interrupted; every other unraisable exception is reported as before."""

    def __init__(self) -> None:
        self.seen = False
        self._previous = sys.unraisablehook
        sys.unraisablehook = self._hook

    def _hook(self, unraisable: "sys.UnraisableHookArgs") -> None:
        if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
            import _thread  # built into the interpreter

            self.seen = True
            _thread.start_new_thread(_interrupt_soon, ())  # from here it would surface in this hook again
            return
        self._previous(unraisable)

    def close(self) -> None:
        sys.unraisablehook = self._previous


class _ReceivedInterrupts:
    """Whether a Ctrl-C reached this process while a command ran, whatever became of it. The
    interpreter can turn one that lands in an extension module's import into another error (an
    ImportError it could not build: "TypeError: expected a message argument", seen with a SIGINT
    0.2 s into `vdesk up`); an error after a Ctrl-C ends as interrupted, not as unexpected. The
    note is taken only where Python's own handler would have raised (main thread, default
    handler), or where the ``early`` handler of the console script answered until now; the
    interrupt is raised as Python's handler raises it."""

    def __init__(self, early: object = None) -> None:
        import signal  # a thin wrapper of the built-in _signal

        self.seen = False
        self._signal = signal
        self._installed = False
        handler = signal.getsignal(signal.SIGINT)
        if handler is signal.default_int_handler or (early is not None and handler is early):
            try:
                signal.signal(signal.SIGINT, self._note)
                self._installed = True
            except ValueError:  # not the main thread: signals are not ours to handle
                pass

    def _note(self, signum: int, frame: object) -> None:
        self.seen = True
        raise KeyboardInterrupt

    def close(self) -> None:
        if self._installed and self._signal.getsignal(self._signal.SIGINT) == self._note:
            self._signal.signal(self._signal.SIGINT, self._signal.default_int_handler)


def _interrupt_soon() -> None:
    """From another thread: a SIGINT for the main thread once it is back in the command's code."""
    import _thread
    import time

    time.sleep(0.01)
    _thread.interrupt_main()


def describe_error(error: Exception) -> tuple[str, int]:
    """The one line that stands for ``error``, and the exit code."""
    from vdesk.errors import VdeskError

    typer = sys.modules.get("typer")  # a usage error can only come from typer once it is loaded
    if isinstance(error, VdeskError):
        return one_line(str(error)), FAILED
    if typer is not None and isinstance(error, typer.Abort):
        return "interrupted", INTERRUPTED
    if typer is not None and isinstance(error, typer.TyperException):
        context = getattr(error, "ctx", None)
        path = context.command_path if context is not None else "vdesk"
        command = path.removeprefix("vdesk").strip()
        where = f"{command}: " if command else ""
        return f"{where}{one_line(error.format_message())} (see `{path} --help`)", FAILED
    if isinstance(error, OSError) and error.strerror:
        return one_line(f"{error.strerror}: {error.filename}" if error.filename else error.strerror), FAILED
    return (f"unexpected {type(error).__name__}: {one_line(str(error)) or 'no message'} "
            "(VDESK_DEBUG=1 shows where)"), FAILED


def one_line(text: str) -> str:
    """``text`` on one line, whole: line breaks and runs of spaces become one space."""
    return " ".join(text.split())


def _fail(message: str, code: int) -> int:
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    sys.stderr.write(f"vdesk: {message}\n")
    sys.stderr.flush()
    return code

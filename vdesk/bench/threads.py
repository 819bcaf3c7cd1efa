"""Calls run in threads at once, each with a deadline: the fan-out of both benches.

A measurement of many desktops starts, weighs and steps them all at once. What a call raises
is handed back in its place, to be counted: how many cope is the measurement.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from vdesk.errors import first_line

T = TypeVar("T")
Item = TypeVar("Item")
D = TypeVar("D")


def fan_out(calls: Sequence[Callable[[], T]], timeout: float) -> list[T | BaseException]:
    """Run every call in its own thread at once; each one's result, or the exception it
    raised (a :class:`TimeoutError` for one still running after ``timeout`` seconds)."""
    results: list[T | BaseException] = [TimeoutError(f"still running after {timeout:g} s")] * len(calls)

    def one(index: int) -> None:
        try:
            results[index] = calls[index]()
        except BaseException as error:  # handed back to the caller, who counts it
            results[index] = error

    threads = [threading.Thread(target=one, args=(i,), name=f"vdesk-bench-{i}", daemon=True)
               for i in range(len(calls))]
    for thread in threads:
        thread.start()
    join_all(threads, timeout)
    return list(results)


def for_each(call: Callable[[Item], T], items: Sequence[Item], timeout: float) -> list[T | BaseException]:
    """:func:`fan_out` of ``call(item)`` for every item, in the items' order."""
    return fan_out([functools.partial(call, item) for item in items], timeout)


def join_all(threads: Sequence[threading.Thread], timeout: float) -> None:
    """Wait for every thread, ``timeout`` seconds for them all."""
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))


def up_all(up: Callable[[], D], down: Callable[[D], None], count: int, timeout: float,
           errors: list[str]) -> tuple[list[D], float]:
    """Start ``count`` desktops at once; return those that came up within ``timeout`` and the
    seconds until the last of them was ready. Why the others did not goes to ``errors``; one
    that comes up after the wait ended is taken down."""
    lock = threading.Lock()
    came_up: list[D] = []
    ready: list[float] = []
    gave_up = threading.Event()
    started = time.perf_counter()

    def bring_up() -> None:
        desktop = up()
        with lock:
            if not gave_up.is_set():
                came_up.append(desktop)
                ready.append(time.perf_counter() - started)
                return
        down(desktop)  # too late: nobody would take it down otherwise

    results = fan_out([bring_up] * count, timeout)
    with lock:
        gave_up.set()
        errors += [error_line(r) for r in results if isinstance(r, BaseException)]
        return list(came_up), max(ready, default=0.0)


def error_line(error: BaseException) -> str:
    """An error in one line, for a table: its type and the first line of its message."""
    return f"{type(error).__name__}: {first_line(error, 200)}"

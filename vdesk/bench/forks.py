"""``vdesk bench --forks``: what checkpoints and forks cost, against a fresh desktop brought to
the same state (see :mod:`vdesk.forks`).

The state is a terminal showing text (lean image), Chromium showing a local page or Calc
showing a document (apps image). For each: the checkpoint, its size, a fork until its first frame, the same state
reached by ``Desktop.up`` plus starting the program and waiting for its window, the memory of
a fork, and (for the terminal) eight forks started at once. Every desktop and checkpoint made is removed.
The osworld bench (:mod:`vdesk.bench.osworld`) takes the same rows of its desktops with Chrome open.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import docker

from vdesk import forks
from vdesk.bench.machine import around
from vdesk.bench.speed import IDLE_SECONDS, MEMORY_NOTE, Measurement
from vdesk.container import DEFAULT_SIZE
from vdesk.desktop import Desktop
from vdesk.progress import Progress
from vdesk.usage import container_memory_mib

AT_ONCE = 8
FORK_TIMEOUT = 120.0  # a fork of a few hundred MB on a busy 2-core machine takes many seconds
UP_TIMEOUT = 180.0  # a GNOME osworld desktop takes many seconds to come up on a busy 2-core machine


@dataclass(frozen=True)
class State:
    """A state to fork: the image, the program that makes it, its window's title and the screen's size."""

    label: str
    image: str
    argv: tuple[str, ...]
    title: str
    size: tuple[int, int] = DEFAULT_SIZE


STATES = (
    State("lean", "lean", ("xterm", "-T", "bench-fork", "-e", "sh", "-c", "echo a forked terminal; exec sleep 100000"),
          "bench-fork"),
    State("chromium", "apps", ("chromium", "data:text/html,<title>bench page</title><h1>A local page</h1>"), "bench page"),
    # A document in Calc: a setup of several seconds, the case forks are for. The CSV filter
    # named on the command line skips the import dialog.
    State("calc", "apps", ("sh", "-c", "printf 'forked,cell\\n1,2\\n' > /home/desk/bench.csv && exec libreoffice --calc "
                           "--norestore --infilter=CSV:44,34,76 /home/desk/bench.csv"), "bench.csv"),
)


def fork_measurements(client: docker.DockerClient, repeats: int, progress: Progress = print,
                      apps: bool = True) -> list[Measurement]:
    """The fork_* rows for the lean state and (with ``apps``) Chromium's and Calc's; each row
    records the machine around it."""
    results: list[Measurement] = []
    for state in STATES if apps else STATES[:1]:
        progress(f"forks: {state.label} desktop, {repeats} times each")
        results += fresh_setup(client, state, repeats)
        with checkpointed(client, state, repeats) as (checkpoint_rows, checkpoint):
            results += checkpoint_rows
            results += fork_rows(client, checkpoint, state, repeats)
            if state.image == "lean":  # Chromium's ~230 MB eight times over: minutes, the same story
                progress(f"forks: {AT_ONCE} forks of the {state.label} desktop at once")
                results += around(client, lambda: _at_once(checkpoint, state))
    return results


@contextmanager
def checkpointed(client: docker.DockerClient, state: State, repeats: int) -> Iterator[tuple[list[Measurement], forks.Checkpoint]]:
    """A desktop brought to ``state`` and checkpointed ``repeats`` times: the checkpoints' rows
    and the last checkpoint, removed (with the desktop) on leaving."""
    with Desktop.up(size=state.size, image=state.image, timeout=UP_TIMEOUT) as desktop:
        _reach(desktop, state)
        checkpoint_rows, checkpoint = _checkpoints(desktop, state, repeats)
        try:
            yield around(client, lambda: checkpoint_rows), checkpoint
        finally:
            forks.remove(client, checkpoint.name)


def _reach(desktop: Desktop, state: State) -> None:
    desktop.programs.run(list(state.argv))
    desktop.windows.wait_for(state.title, timeout=60)
    desktop.screen.settle(quiet=0.3, timeout=30)


def fresh_setup(client: docker.DockerClient, state: State, repeats: int) -> list[Measurement]:
    """The alternative to a fork, ``repeats`` times: a new desktop brought to ``state``."""
    return around(client, lambda: _fresh(state, repeats))


def _fresh(state: State, repeats: int) -> list[Measurement]:
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        with Desktop.up(size=state.size, image=state.image, timeout=UP_TIMEOUT) as desktop:
            _reach(desktop, state)
            desktop.screen.shot()
            samples.append((time.perf_counter() - started) * 1000 - 300)  # the quiet period is not the work
    return [Measurement.of(f"fork_{state.label}_fresh_setup", "ms", samples,
                           note=f"the alternative: Desktop.up(image={state.image!r}), start {state.argv[0]}, its window shown and "
                                "the screen still, a screenshot")]


def _checkpoints(desktop: Desktop, state: State, repeats: int) -> tuple[list[Measurement], forks.Checkpoint]:
    samples, kept = [], None
    for index in range(repeats):
        started = time.perf_counter()
        checkpoint = desktop.checkpoint()
        samples.append((time.perf_counter() - started) * 1000)
        if index < repeats - 1:
            forks.remove(desktop.client, checkpoint.name)
        kept = checkpoint
    assert kept is not None
    return [Measurement.of(f"fork_{state.label}_checkpoint", "ms", samples,
                           note="desktop.checkpoint(), the desktop left running (its connections closed and reopened)"),
            Measurement.of(f"fork_{state.label}_checkpoint_size", "MiB", [kept.size / 2**20],
                           note="CRIU's image: the processes' memory and the tmpfs contents")], kept


def fork_rows(client: docker.DockerClient, checkpoint: forks.Checkpoint, state: State, repeats: int) -> list[Measurement]:
    """``repeats`` forks of ``checkpoint``, one after another: until each one's first frame, and its memory."""
    return around(client, lambda: _forks(checkpoint, state, repeats))


def _forks(checkpoint: forks.Checkpoint, state: State, repeats: int) -> list[Measurement]:
    first_frame, memory = [], []
    for _ in range(repeats):
        started = time.perf_counter()
        (fork,) = Desktop.fork(checkpoint, timeout=FORK_TIMEOUT)
        try:
            fork.screen.shot()
            first_frame.append((time.perf_counter() - started) * 1000)
            time.sleep(IDLE_SECONDS)
            memory.append(container_memory_mib(fork.container))
        finally:
            fork.down()
    return [Measurement.of(f"fork_{state.label}_first_frame", "ms", first_frame,
                           note="Desktop.fork(checkpoint) until its first frame (new password, lease, TTL), then a screenshot"),
            Measurement.of(f"fork_{state.label}_memory", "MiB", memory, note=f"one fork; {MEMORY_NOTE}")]


def _at_once(checkpoint: forks.Checkpoint, state: State) -> list[Measurement]:
    started = time.perf_counter()
    made = Desktop.fork(checkpoint, AT_ONCE, timeout=FORK_TIMEOUT)
    took = (time.perf_counter() - started) * 1000
    try:
        memory = [container_memory_mib(fork.container) for fork in made]
    finally:
        for fork in made:
            fork.down()
    return [Measurement.of(f"fork_{state.label}_{AT_ONCE}_at_once", "ms", [took],
                           note=f"Desktop.fork(checkpoint, {AT_ONCE}) until the last fork's first frame"),
            Measurement.of(f"fork_{state.label}_{AT_ONCE}_memory_total", "MiB", [sum(memory)],
                           note=f"{AT_ONCE} forks of one checkpoint (restored pages are not shared between forks)")]


#!/usr/bin/env python3
"""Soak: many desktops at once, each driven with a mix of actions and screenshots.

    .venv/bin/python scripts/soak.py --minutes 30            # what `make soak` runs
    .venv/bin/python scripts/soak.py --desktops 4 --minutes 2

Every desktop runs in its own thread: clicks, moves, scrolls, drags, hotkeys, short typing
and screenshots (fresh and not), chosen at random. Figures are printed every minute and once
at the end: operations per second, action and screenshot latency (p50/p90), failures, this
process's memory (RSS) and the desktops left over. The exit code is 1 when any operation
failed, a desktop was left behind, or memory did not come back to where it started.

tests/desktop/test_load.py runs the same workload for a fixed number of operations.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import docker  # noqa: E402

from vdesk.desktop import Desktop  # noqa: E402

MEMORY_SLACK_MIB = 150  # how far RSS may end above where it started
Operation = tuple[str, Callable[[Desktop], None]]


# -- the workload ------------------------------------------------------------------------------
class Failed(Exception):
    """An operation that did not succeed."""


def _execute(actions: list[dict[str, Any]]) -> Callable[[Desktop], None]:
    def run(desktop: Desktop) -> None:
        result = desktop.input.execute(actions)
        if result.status != "success":
            raise Failed(result.error_message)
    return run


def _screenshot(fresh: bool) -> Callable[[Desktop], None]:
    def run(desktop: Desktop) -> None:
        if desktop.screen.shot(fresh=fresh).size != desktop.screen.size:
            raise Failed("a screenshot of the wrong size")
    return run


def pick_operation(rng: random.Random, width: int, height: int) -> Operation:
    """One operation of the mix: about two thirds actions, one third screenshots."""
    def point() -> list[int]:
        return [rng.randrange(width), rng.randrange(height)]

    roll = rng.random()
    if roll < 0.12:
        return "click", _execute([{"type": "click", "inputs": {"point": point()}}])
    if roll < 0.17:
        return "double_click", _execute([{"type": "double_click", "inputs": {"point": point()}}])
    if roll < 0.32:
        return "mouse_move", _execute([{"type": "mouse_move", "inputs": {"point": point()}}])
    if roll < 0.42:
        direction = rng.choice(["up", "down", "left", "right"])
        return "scroll", _execute([{"type": "scroll", "inputs": {"point": point(), "direction": direction,
                                                                 "amount": rng.randint(1, 5)}}])
    if roll < 0.47:
        return "drag", _execute([{"type": "drag", "inputs": {"start": point(), "end": point()}}])
    if roll < 0.55:
        key = rng.choice(["shift", "ctrl+shift", "Escape", "alt"])
        return "hotkey", _execute([{"type": "hotkey", "inputs": {"key": key}}])
    if roll < 0.60:
        text = "".join(rng.choice("abcdefghij klmnop") for _ in range(rng.randint(1, 12)))
        return "type", _execute([{"type": "type", "inputs": {"content": text}}])
    if roll < 0.65:
        return "batch", _execute([{"type": "mouse_move", "inputs": {"point": point()}},
                                  {"type": "click", "inputs": {"point": point()}},
                                  {"type": "hotkey", "inputs": {"key": "shift"}}])
    if roll < 0.90:
        return "screenshot", _screenshot(fresh=True)
    return "screenshot_latest", _screenshot(fresh=False)


@dataclass
class Tally:
    """What the workers did, shared between them (under ``lock``)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    actions: list[float] = field(default_factory=list)  # seconds each
    screenshots: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def record(self, kind: str, seconds: float, failure: str | None) -> None:
        with self.lock:
            (self.screenshots if kind.startswith("screenshot") else self.actions).append(seconds)
            if failure is not None:
                self.failures.append(failure)

    @property
    def operations(self) -> int:
        return len(self.actions) + len(self.screenshots)


def drive(desktop: Desktop, tally: Tally, seed: int, *, count: int | None = None,
          until: float | None = None) -> None:
    """Run ``count`` operations on ``desktop``, or keep going until ``time.monotonic() >= until``."""
    rng = random.Random(seed)
    done = 0
    while (count is None or done < count) and (until is None or time.monotonic() < until):
        kind, operation = pick_operation(rng, *desktop.screen.size)
        started = time.perf_counter()
        failure = None
        try:
            operation(desktop)
        except Exception as error:  # every failure is counted and reported, none stops the run
            failure = f"{desktop.name} {kind}: {type(error).__name__}: {error}"
        tally.record(kind, time.perf_counter() - started, failure)
        done += 1


# -- measuring ---------------------------------------------------------------------------------
def rss_mib() -> float:
    """This process's resident memory, from /proc/self/status."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


class MemoryWatch:
    """Samples RSS in the background to know the peak."""

    def __init__(self, every: float = 0.25) -> None:
        self.peak = rss_mib()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(every,), name="memory-watch", daemon=True)
        self._thread.start()

    def _run(self, every: float) -> None:
        while not self._stop.wait(every):
            self.peak = max(self.peak, rss_mib())

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak


def percentile(samples: list[float], fraction: float) -> float:
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def ours(client: docker.DockerClient, since: float) -> list[str]:
    """Desktops this process started since ``since`` (a Unix time) that still exist: their
    owner label names our pid, and they were created after ``since`` (pids are reused)."""
    containers = client.containers.list(all=True, filters={"label": "vdesk=desktop"}, ignore_removed=True)
    return [c.name for c in containers if c.labels.get("vdesk.owner", "").endswith(f":{os.getpid()}")
            and _created(c.labels) >= since - 1]


def _created(labels: dict[str, str]) -> float:
    try:
        return datetime.fromisoformat(labels.get("vdesk.created", "")).timestamp()
    except ValueError:
        return 0.0


def all_desktops(client: docker.DockerClient) -> int:
    return len(client.containers.list(all=True, filters={"label": "vdesk=desktop"}, ignore_removed=True))


# -- a run -------------------------------------------------------------------------------------
@dataclass
class Summary:
    desktops: int
    seconds: float
    operations: int
    actions: int
    screenshots: int
    failures: list[str]
    action_p50_ms: float
    action_p90_ms: float
    screenshot_p50_ms: float
    screenshot_p90_ms: float
    start_seconds: float
    rss_before_mib: float
    rss_peak_mib: float
    rss_after_mib: float
    threads_before: int
    threads_after: int
    files_before: int
    files_after: int
    leaked: list[str]
    desktops_on_engine_before: int
    desktops_on_engine_after: int

    @property
    def per_second(self) -> float:
        return self.operations / self.seconds if self.seconds else 0.0

    @property
    def rss_growth_mib(self) -> float:
        return self.rss_after_mib - self.rss_before_mib

    @property
    def ok(self) -> bool:
        return not self.failures and not self.leaked and self.rss_growth_mib < MEMORY_SLACK_MIB

    def lines(self) -> list[str]:
        return [
            f"desktops: {self.desktops} (all up in {self.start_seconds:.1f} s); ran {self.seconds:.1f} s",
            f"operations: {self.operations} ({self.actions} actions, {self.screenshots} screenshots), "
            f"{self.per_second:.1f}/s, failed: {len(self.failures)}",
            f"action latency: p50 {self.action_p50_ms:.1f} ms, p90 {self.action_p90_ms:.1f} ms; "
            f"screenshot latency: p50 {self.screenshot_p50_ms:.1f} ms, p90 {self.screenshot_p90_ms:.1f} ms",
            f"memory (RSS): {self.rss_before_mib:.0f} MiB before, peak {self.rss_peak_mib:.0f} MiB, "
            f"{self.rss_after_mib:.0f} MiB after ({self.rss_growth_mib:+.0f} MiB)",
            f"threads: {self.threads_before} before, {self.threads_after} after; "
            f"open files: {self.files_before} before, {self.files_after} after",
            f"desktops left behind: {len(self.leaked)} {self.leaked or ''}; "
            f"vdesk desktops on the engine: {self.desktops_on_engine_before} before, "
            f"{self.desktops_on_engine_after} after",
        ]


def warm_up() -> None:
    """Load everything a desktop needs once (modules, the VNC reactor) before measuring."""
    with Desktop.up() as desktop:
        desktop.screen.shot()
        desktop.input.execute([{"type": "mouse_move", "inputs": {"point": [1, 1]}}])
    gc.collect()


def run(desktops: int = 10, *, operations: int | None = None, minutes: float | None = None,
        report: Callable[[str], None] = print, report_every: float = 60.0, seed: int = 1) -> Summary:
    """Bring up ``desktops`` at once, drive each with ``operations`` operations (or for
    ``minutes``), take them all down, and measure. Never leaves a desktop behind."""
    if (operations is None) == (minutes is None):
        raise ValueError("give either operations or minutes")
    client = docker.from_env()
    warm_up()
    settle_threads()
    rss_before, threads_before, files_before = rss_mib(), threading.active_count(), open_files()
    engine_before = all_desktops(client)
    watch = MemoryWatch()
    tally = Tally()
    since = time.time()
    started_up = time.monotonic()
    running: list[Desktop] = []
    try:
        start_desktops(desktops, running, tally)
        start_seconds = time.monotonic() - started_up
        report(f"{len(running)} desktops up in {start_seconds:.1f} s")
        began = time.monotonic()
        until = began + minutes * 60 if minutes is not None else None
        workers = [threading.Thread(target=drive, args=(desktop, tally, seed + index),
                                    kwargs={"count": operations, "until": until}, name=f"drive-{desktop.name}")
                   for index, desktop in enumerate(running)]
        for worker in workers:
            worker.start()
        _report_while_running(workers, tally, watch, began, report, report_every)
        seconds = time.monotonic() - began
    finally:
        for desktop in running:
            desktop.down()
    count = len(running)
    del running, workers  # let go of the desktops' engine clients and connections
    leaked = ours(client, since)
    deadline = time.monotonic() + 10
    while leaked and time.monotonic() < deadline:
        time.sleep(0.2)
        leaked = ours(client, since)
    settle_threads(threads_before)
    gc.collect()
    time.sleep(0.5)  # sockets closed by the collection finish closing
    peak = watch.stop()
    return Summary(
        desktops=count, seconds=seconds, operations=tally.operations, actions=len(tally.actions),
        screenshots=len(tally.screenshots), failures=tally.failures,
        action_p50_ms=percentile(tally.actions, 0.5) * 1000, action_p90_ms=percentile(tally.actions, 0.9) * 1000,
        screenshot_p50_ms=percentile(tally.screenshots, 0.5) * 1000,
        screenshot_p90_ms=percentile(tally.screenshots, 0.9) * 1000,
        start_seconds=start_seconds, rss_before_mib=rss_before, rss_peak_mib=peak, rss_after_mib=rss_mib(),
        threads_before=threads_before, threads_after=threading.active_count(),
        files_before=files_before, files_after=open_files(), leaked=leaked,
        desktops_on_engine_before=engine_before, desktops_on_engine_after=all_desktops(client),
    )


def start_desktops(count: int, running: list[Desktop], tally: Tally) -> None:
    """Bring up ``count`` desktops at once into ``running``; a failure to start is a failure."""
    with ThreadPoolExecutor(max_workers=count) as pool:
        futures = [pool.submit(Desktop.up, timeout=120) for _ in range(count)]
        for future in futures:
            try:
                running.append(future.result())
            except Exception as error:
                tally.failures.append(f"Desktop.up: {type(error).__name__}: {error}")


def settle_threads(target: int | None = None, timeout: float = 10.0) -> None:
    """Give reader threads of closed connections a moment to finish."""
    deadline = time.monotonic() + timeout
    previous = -1
    while time.monotonic() < deadline:
        count = threading.active_count()
        if (target is not None and count <= target) or (target is None and count == previous):
            return
        previous = count
        time.sleep(0.2)


def _report_while_running(workers: list[threading.Thread], tally: Tally, watch: MemoryWatch, began: float,
                          report: Callable[[str], None], every: float) -> None:
    next_report = began + every
    seen_actions = seen_shots = 0
    while any(worker.is_alive() for worker in workers):
        for worker in workers:
            worker.join(timeout=max(0.0, min(1.0, next_report - time.monotonic())))
        if time.monotonic() < next_report:
            continue
        with tally.lock:
            actions, shots = tally.actions[seen_actions:], tally.screenshots[seen_shots:]
            seen_actions, seen_shots = len(tally.actions), len(tally.screenshots)
            failures = len(tally.failures)
        elapsed = time.monotonic() - began
        report(f"[{elapsed / 60:5.1f} min] {tally.operations} operations, {(len(actions) + len(shots)) / every:.1f}/s "
               f"this minute; action p50/p90 {percentile(actions, 0.5) * 1000:.0f}/{percentile(actions, 0.9) * 1000:.0f} ms, "
               f"screenshot p50/p90 {percentile(shots, 0.5) * 1000:.0f}/{percentile(shots, 0.9) * 1000:.0f} ms; "
               f"failed {failures}; RSS {rss_mib():.0f} MiB (peak {watch.peak:.0f})")
        next_report += every


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0, help="how long to drive the desktops (default 30)")
    parser.add_argument("--desktops", type=int, default=10, help="desktops at once (default 10)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random mix")
    options = parser.parse_args()
    if options.minutes <= 0 or options.desktops <= 0:
        parser.error("--minutes and --desktops must be positive")
    say = lambda line: print(line, flush=True)  # noqa: E731
    say(f"soak: {options.desktops} desktops for {options.minutes:g} min")
    summary = run(options.desktops, minutes=options.minutes, report=say, seed=options.seed)
    say("-- summary --")
    for line in summary.lines():
        say(line)
    for failure in summary.failures[:20]:
        say(f"failed: {failure}")
    if summary.ok:
        say("soak: OK")
        return 0
    reasons = [f"{len(summary.failures)} failed operations" if summary.failures else "",
               f"{len(summary.leaked)} desktops left behind" if summary.leaked else "",
               f"memory grew {summary.rss_growth_mib:.0f} MiB" if summary.rss_growth_mib >= MEMORY_SLACK_MIB else ""]
    say("soak: FAILED: " + ", ".join(reason for reason in reasons if reason))
    return 1


if __name__ == "__main__":
    sys.exit(main())

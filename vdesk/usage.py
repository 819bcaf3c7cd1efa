"""What a desktop uses: one reading of its container's memory and CPU time, as ``docker stats``
counts them, and optionally of the process hosting it.

Low on purpose: the bench (:mod:`vdesk.bench`) reads local desktops with it and a Ray actor
(:mod:`vdesk.cluster.actors`) reads the desktop it hosts, so both figures are counted alike.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from docker.models.containers import Container

from vdesk.errors import StatsUnavailable


@dataclass(frozen=True)
class Usage:
    """A reading of what one desktop uses: its container and, through Ray, the worker hosting it.
    CPU figures are cumulative seconds; two readings make a rate."""

    memory_mib: float
    cpu_seconds: float
    at: float                      # when the engine sampled the container (seconds since the epoch)
    host_memory_mib: float = 0.0
    host_cpu_seconds: float = 0.0
    host_at: float = 0.0


def container_usage(container: Container, host: bool = False) -> Usage:
    """One ``docker stats`` sample of ``container``: memory as :func:`container_memory_mib`
    counts it (usage minus the file cache) and CPU time. ``host=True`` adds this process's
    resident memory and CPU time (what a Ray worker hosting the desktop costs)."""
    stats = container.stats(stream=False, one_shot=True)
    cpu = (stats.get("cpu_stats") or {}).get("cpu_usage", {}).get("total_usage", 0) / 1e9
    usage = Usage(stats_memory_mib(stats, container.name), cpu, _sampled_at(stats.get("read", "")))
    if not host:
        return usage
    return Usage(usage.memory_mib, usage.cpu_seconds, usage.at, resident_mib(), process_cpu(), time.time())


def container_memory_mib(container: Container) -> float:
    """A container's memory in MiB: usage minus the file cache, active and inactive (cgroup v1
    ``total_active_file`` and ``total_inactive_file``, v2 ``active_file`` and ``inactive_file``).

    ``docker stats`` subtracts only the inactive part. But the cache of the image's programs,
    libraries and fonts is read once per machine and charged to whichever desktop read it
    first: the first desktop after the image was built (or the cache was dropped) then read
    about 50 MiB more than each one after it (the bench's 89.6 against 40.7 MiB). Files in the
    desktop's tmpfs are swap-backed, not file cache, and stay counted."""
    return stats_memory_mib(container.stats(stream=False, one_shot=True), container.name)


def stats_memory_mib(stats: dict[str, Any], name: str) -> float:
    """The memory of one ``docker stats`` sample, counted as :func:`container_memory_mib` says."""
    memory = stats.get("memory_stats") or {}
    if not memory.get("usage"):
        raise StatsUnavailable(f"the engine reports no memory usage for {name}")
    detail = memory.get("stats") or {}
    cache = sum(detail.get(f"total_{part}", detail.get(part, 0)) for part in ("inactive_file", "active_file"))
    return max(0, memory["usage"] - cache) / 2**20


def idle_cores(before: Usage, after: Usage) -> float:
    """Cores a desktop used between two readings: its container plus its host-side process."""
    cores = (after.cpu_seconds - before.cpu_seconds) / max(1e-3, after.at - before.at)
    if after.host_at > before.host_at:
        cores += (after.host_cpu_seconds - before.host_cpu_seconds) / (after.host_at - before.host_at)
    return max(0.0, cores)


def process_cpu() -> float:
    """CPU seconds this process has used, user and system, to the nanosecond (``os.times()``
    counts in clock ticks of 10 ms, coarser than a few steps' worth)."""
    return time.process_time()


def resident_mib() -> float:
    """This process's resident memory in MiB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _sampled_at(read: str) -> float:
    """The engine's sample time (``2026-11-30T05:46:12.123456789Z``); now if it is missing."""
    try:
        return datetime.fromisoformat(read[:26].rstrip("Z") + "+00:00").timestamp()
    except ValueError:
        return time.time()

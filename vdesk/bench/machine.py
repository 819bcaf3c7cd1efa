"""What else the machine did while the bench measured: the load, and the CPU of other work.

A row of figures records the machine at its start and its end (:class:`Surroundings`). The
load average counts the bench's own threads and desktops too (32 desktops stepping make a
load of 20 on their own), so the warning does not go by it: it goes by the CPU time the
machine spent on everything else, the machine's busy time less the bench's own (this process,
its children such as ffmpeg, and its containers) and less the container engine's (which
serves the bench's exec sessions and cannot be told apart from serving anyone else's).

Where that cannot be read (a remote engine: its containers' CPU is not on this machine) the
warning falls back to the load average.
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import docker

BUSY_LOAD_PER_CORE = 1.0    # without CPU readings: a 1-minute load average above this per core is busy
BUSY_OTHERS_SHARE = 0.1     # other work used more than this share of the machine's cores: busy
ENGINE_PROGRAMS = ("dockerd", "containerd", "containerd-shim", "runc", "docker-proxy")
PROC = Path("/proc")
CGROUP = Path("/sys/fs/cgroup")


@dataclass(frozen=True)
class CpuTimes:
    """Cumulative CPU seconds at one moment: the whole machine's busy time, the bench's own
    (process, children, containers) and the container engine's."""

    at: float        # time.monotonic()
    machine: float
    own: float
    engine: float


@dataclass(frozen=True)
class Machine:
    """What else the machine was doing at one moment: its 1-minute load average, the running
    containers this process did not start (other desktops, other users' work) and, where they
    can be read, the CPU times that tell the bench's own work from the rest."""

    load: float
    others: list[str]
    cpu: CpuTimes | None = None

    @classmethod
    def now(cls, client: docker.DockerClient) -> Machine:
        mine = f"@{socket.gethostname()}:{os.getpid()}"
        listed = client.api.containers()  # one call: running containers, no inspect each
        own = [item for item in listed if (item.get("Labels") or {}).get("vdesk.owner", "").endswith(mine)]
        others = [item["Names"][0].lstrip("/") for item in listed if item not in own]
        return cls(round(os.getloadavg()[0], 2), sorted(others), cpu_times([item["Id"] for item in own]))


@dataclass(frozen=True)
class Surroundings:
    """The machine at the start and at the end of one row of figures."""

    start: Machine
    end: Machine

    def load_per_core(self, cpus: int) -> float:
        return max(self.start.load, self.end.load) / max(1, cpus)

    def _cores(self, part: str) -> float | None:
        """Cores ``part`` ("other", "own", "engine") used on average over the row."""
        before, after = self.start.cpu, self.end.cpu
        if before is None or after is None or after.at <= before.at:
            return None
        spent = {name: getattr(after, name) - getattr(before, name) for name in ("machine", "own", "engine")}
        # A container shim that exits takes the CPU its children used with it: the engine's
        # time can fall, and is then taken as none.
        spent["engine"] = max(0.0, spent["engine"])
        spent["other"] = spent["machine"] - spent["own"] - spent["engine"]
        return max(0.0, spent[part]) / (after.at - before.at)

    def other_cores(self) -> float | None:
        """Cores that work other than the bench's and the engine's used; None where unknown."""
        return self._cores("other")

    def own_cores(self) -> float | None:
        """Cores the bench's own process, children and containers used."""
        return self._cores("own")

    def busy(self, cpus: int) -> bool:
        other = self.other_cores()
        if other is None:
            return self.load_per_core(cpus) > BUSY_LOAD_PER_CORE
        return other > BUSY_OTHERS_SHARE * max(1, cpus)

    def brief(self) -> str:
        """``"4.1-3.9"``: the load at the start and the end."""
        return f"{self.start.load:.1f}-{self.end.load:.1f}"


def around(client: docker.DockerClient, take: Any) -> list[Any]:
    """Run ``take`` (which returns rows: dataclasses with a ``machine`` field) and record the
    machine's surroundings at its start and end in every row it returns."""
    start = Machine.now(client)
    rows = take()
    surroundings = Surroundings(start, Machine.now(client))
    return [replace(row, machine=surroundings) for row in rows]


def busy_warning(rows: list[Surroundings | None], cpus: int, *, short: bool = False) -> str | None:
    """One line saying how busy other work kept the machine, when it did during any row
    (``short``: only how much, for a plot's caption)."""
    known = [row for row in rows if row is not None]
    busy = [row for row in known if row.busy(cpus)]
    if not busy:
        return None
    peak = max(max(row.start.load, row.end.load) for row in busy)
    load = f"load average up to {peak:.1f} on {cpus} cores"
    measured = [(other, row.own_cores() or 0.0) for row in busy if (other := row.other_cores()) is not None]
    if measured:
        other, own = max(measured)
        how = (f"other work used up to {other:.2f} of {cpus} cores ({100 * other / max(1, cpus):.0f} %, above "
               f"{100 * BUSY_OTHERS_SHARE:.0f} %)")
        if short:
            return f"measured beside other work: {how}"
        counted = (f"the bench's own processes and desktops ({own:.2f} cores in that row) and the container "
                   f"engine are not counted; {load}")
    else:
        if short:
            return f"measured on a busy machine: {load}"
        how, counted = f"{load} ({peak / max(1, cpus):.1f} per core, above {BUSY_LOAD_PER_CORE:g})", (
            "the bench's own share could not be read")
    containers = max(max(len(row.start.others), len(row.end.others)) for row in known)
    return (f"warning: the machine was busy during {len(busy)} of {len(known)} rows: {how}; {counted}; up to "
            f"{containers} other containers running. These figures are slower than a quiet machine's.")


# -- reading CPU times ---------------------------------------------------------------------------
def cpu_times(own_containers: list[str]) -> CpuTimes | None:
    """The CPU times now, or None when the machine's or the bench's containers' cannot be read
    (no /proc/stat, or a container's cgroup is not on this machine)."""
    machine = machine_busy_seconds()
    containers = [container_cpu_seconds(container_id) for container_id in own_containers]
    if machine is None or any(seconds is None for seconds in containers):
        return None
    times = os.times()
    own = times.user + times.system + times.children_user + times.children_system
    return CpuTimes(time.monotonic(), machine, own + sum(s for s in containers if s is not None), engine_seconds())


def machine_busy_seconds(stat: Path = PROC / "stat") -> float | None:
    """Seconds every core of the machine spent not idle (the first line of /proc/stat)."""
    try:
        fields = stat.read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    ticks = [int(value) for value in fields[1:9]]  # user nice system idle iowait irq softirq steal
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def container_cpu_seconds(container_id: str, root: Path = CGROUP) -> float | None:
    """CPU seconds a container has used, from its cgroup (v1 or v2, either cgroup driver)."""
    for path in (root / "cpuacct/docker" / container_id / "cpuacct.usage",
                 root / f"cpuacct/system.slice/docker-{container_id}.scope/cpuacct.usage"):
        try:
            return int(path.read_text()) / 1e9
        except (OSError, ValueError):
            pass
    for path in (root / "docker" / container_id / "cpu.stat",
                 root / f"system.slice/docker-{container_id}.scope/cpu.stat"):
        try:
            usage = dict(line.split() for line in path.read_text().splitlines())
            return int(usage["usage_usec"]) / 1e6
        except (OSError, ValueError, KeyError):
            pass
    return None


def engine_seconds(proc: Path = PROC) -> float:
    """CPU seconds the container engine's processes have used, with the children they waited
    for (``runc`` runs each ``docker exec``)."""
    total = 0
    for process in proc.iterdir():
        if not process.name.isdigit():
            continue
        try:
            stat = (process / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.find("(") + 1:stat.rfind(")")]
        if name.startswith(ENGINE_PROGRAMS):
            total += sum(int(value) for value in stat[stat.rfind(")") + 2:].split()[11:15])
    return total / os.sysconf("SC_CLK_TCK")


def cpu_model(cpuinfo: Path = PROC / "cpuinfo") -> str:
    """The processor as the kernel names it, with its clock: figures from two machines of the
    same core count differ several times over (a fresh screenshot 0.5 ms on one, 3.5 ms on
    another), so a report says on which it was measured."""
    try:
        lines = cpuinfo.read_text(errors="replace").splitlines()
    except OSError:
        return "?"
    fields = dict(line.split(":", 1) for line in lines if ":" in line)
    fields = {key.strip(): value.strip() for key, value in fields.items()}
    name = fields.get("model name") or fields.get("Model") or fields.get("Hardware") or "?"
    mhz = fields.get("cpu MHz")
    return f"{name} at {float(mhz):.0f} MHz" if mhz and mhz.replace(".", "", 1).isdigit() else name

"""``vdesk bench --fleet``: capacity figures, to size a machine or a cluster on paper.

For 1, 2, 4, … desktops on this machine it measures how fast they come up when started at once
(desktops per second), how many agent steps they take per second when each is driven by its own
thread (a step: a click, wait until the screen settles, a fresh screenshot), and how much
memory each holds, idle and after stepping. With a Ray address it measures the same through
actor-hosted desktops (:mod:`vdesk.cluster`). From the figures it estimates what a node of a given
size holds at a given step rate.

    report = run_fleet(counts=(1, 2, 4, 8), address=None)
    rich.print(render(report))
    plot(report, Path("images/fleet.png"))

Every desktop it brings up is taken down before it returns, whatever happens. Nothing here
asserts a timing.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFont
from rich.console import Group
from rich.table import Table
from rich.text import Text

from vdesk import engine, images as desktop_image
from vdesk.bench.machine import Machine, Surroundings, busy_warning, cpu_model
from vdesk.bench.speed import CLICK, percentile
from vdesk.bench.threads import error_line, for_each, up_all
from vdesk.container import DEFAULT_SIZE, LABEL
from vdesk.desktop import Desktop
from vdesk.errors import BenchError, InvalidArgument
from vdesk.progress import Progress
from vdesk.usage import Usage, container_usage, idle_cores, process_cpu, resident_mib
from vdesk.version import __version__

COUNTS = (1, 2, 4, 8, 16)
STEP_SECONDS = 5.0     # of stepping per count
IDLE_SECONDS = 2.0     # between two readings of idle desktops' CPU time
UP_TIMEOUT = 120.0     # many desktops starting at once on few cores are slow, not broken
THREAD_GRACE = 60.0    # seconds a thread may overrun its own timeouts before it is given up
MEMORY_GUESS_MIB = 300.0  # per desktop, before the first count has measured it
MEMORY_HEADROOM = 0.7  # use at most this share of the memory available for the next count
RESERVE_GIB = 1.0      # kept for the node's system and its own processes in the estimate
STEP_RATES = (1.0, 0.5, 0.2)  # steps per second of one desktop's agent (0.2: a 5 s model call)
NODE_SIZES = ((4, 16), (8, 32), (16, 64), (32, 128))  # cores, GiB


@dataclass(frozen=True)
class FleetPoint:
    """Figures for ``desktops`` desktops at once, ``way`` "local" or "ray"."""

    way: str
    desktops: int
    came_up: int
    up_seconds: float          # from starting them all until the last was ready
    ups_per_second: float      # came_up / up_seconds
    steps: int
    step_seconds: float
    steps_per_second: float    # all desktops together
    step_ms_median: float
    step_ms_p90: float
    memory_idle_mib: float     # per desktop: its container, median
    memory_busy_mib: float     # per desktop after stepping
    host_mib: float            # per desktop on the host: the Ray worker hosting it, or this process's share
    idle_cores: float          # per desktop while idle: container + host side, in cores (0.01 = 1 %)
    errors: list[str] = field(default_factory=list)
    machine: Surroundings | None = None  # the load, other containers and CPU times at the row's start and end

    @property
    def steps_per_desktop(self) -> float:
        return self.steps_per_second / self.came_up if self.came_up else 0.0


@dataclass(frozen=True)
class NodeEstimate:
    """Per-desktop costs measured one way, to estimate what a node holds."""

    way: str
    memory_mib: float         # per desktop: container after stepping + its host-side process share
    idle_cores: float         # per desktop doing nothing
    step_core_seconds: float  # CPU time one step costs, all processes together

    def holds(self, cores: int, memory_gib: float, step_rate: float) -> tuple[int, str]:
        """Desktops a node of ``cores`` and ``memory_gib`` holds when each takes ``step_rate``
        steps per second, and what limits it ("memory" or "cpu"). A desktop costs its idle
        CPU plus ``step_rate`` steps' worth."""
        by_memory = int(max(0.0, memory_gib - RESERVE_GIB) * 1024 / self.memory_mib) if self.memory_mib else 0
        per_desktop = self.idle_cores + step_rate * self.step_core_seconds
        by_cpu = int(cores / per_desktop) if per_desktop > 0 else by_memory
        return (by_memory, "memory") if by_memory <= by_cpu else (by_cpu, "cpu")


@dataclass(frozen=True)
class FleetReport:
    points: list[FleetPoint]
    environment: dict[str, str]
    skipped: list[str] = field(default_factory=list)

    def ways(self) -> list[str]:
        return list(dict.fromkeys(point.way for point in self.points))

    def of(self, way: str) -> list[FleetPoint]:
        return [point for point in self.points if point.way == way]

    def estimate(self, way: str) -> NodeEstimate:
        """Costs per desktop from the measured points: the largest memory seen (the safe side),
        the median idle CPU (the first desktop's reading also holds its start-up), and the CPU
        per step of the most efficient row: the cores its desktops left free when idle, divided
        by its steps per second. Rows that did not fill the cores overstate that cost: safe too.
        Cores are this machine's: through Ray the estimate holds when the cluster ran here."""
        points = [p for p in self.of(way) if p.came_up and p.steps_per_second > 0]
        if not points:
            raise BenchError(f"no {way} desktops stepped: nothing to estimate from")
        cores = int(self.environment.get("cpus", "1"))
        per_step = min(max(0.0, cores - p.came_up * p.idle_cores) / p.steps_per_second for p in points)
        return NodeEstimate(way, max(p.memory_busy_mib + p.host_mib for p in points),
                            statistics.median(p.idle_cores for p in points), per_step)

    def to_json(self) -> str:
        points = [{**asdict(p), "steps_per_desktop": p.steps_per_desktop} for p in self.points]
        estimates = {way: asdict(self.estimate(way)) for way in self.ways() if any(p.steps for p in self.of(way))}
        return json.dumps({"points": points, "estimates": estimates, "skipped": self.skipped,
                           "environment": self.environment}, indent=2)


# -- the two ways of hosting a desktop -------------------------------------------------------
@dataclass(frozen=True)
class _Way:
    """How to bring up, weigh and take down one desktop (both are driven by :func:`_step`)."""

    name: str
    up: Callable[[], Any]
    usage: Callable[[Any], Usage]
    down: Callable[[Any], None]


def _local_way() -> _Way:
    return _Way("local", lambda: Desktop.up(size=DEFAULT_SIZE, timeout=UP_TIMEOUT),
                lambda desktop: container_usage(desktop.container), lambda desktop: desktop.down())


def _ray_way() -> _Way:
    from vdesk.cluster.actors import RemoteDesktop
    from vdesk.spec import DesktopSpec

    spec = DesktopSpec(size=DEFAULT_SIZE)
    return _Way("ray", lambda: RemoteDesktop.up(spec, timeout=UP_TIMEOUT + 30),
                lambda desktop: desktop.usage(), lambda desktop: desktop.close())


def _step(desktop: Any) -> None:
    """One agent step; the same for a local and a remote desktop (same method names)."""
    result = desktop.input.execute(CLICK, settle=True)
    if result.status != "success":
        raise BenchError(f"click failed: {result.error_message}")
    desktop.screen.shot(fresh=True)


# -- the run ----------------------------------------------------------------------------------
def run_fleet(counts: Sequence[int] = COUNTS, *, seconds: float = STEP_SECONDS, address: str | None = None,
              local: bool = True, progress: Progress = print) -> FleetReport:
    """Measure ``counts`` desktops at once, locally (unless ``local=False``) and through the Ray
    cluster at ``address`` when given. A count is skipped when this machine lacks the memory
    for it, the cluster lacks the ``vdesk_desktop`` slots, or a smaller count already failed."""
    counts = sorted(set(counts))
    if not counts or counts[0] < 1 or seconds <= 0:
        raise InvalidArgument("counts must be positive and seconds more than 0")
    client = engine.connect()
    desktop_image.ensure(client, progress=progress)
    environment = _environment(client, seconds)
    points: list[FleetPoint] = []
    skipped: list[str] = []
    if local:
        points += _sweep(client, _local_way(), counts, seconds, None, skipped, progress)
    if address:
        points += _through_ray(client, address, counts, seconds, environment, skipped, progress)
    environment["load_at_end"] = f"{os.getloadavg()[0]:.2f}"  # others' work skews the figures: say so
    progress("done")
    return FleetReport(points, environment, skipped)


def _through_ray(client: Any, address: str, counts: list[int], seconds: float, environment: dict[str, str],
                 skipped: list[str], progress: Progress) -> list[FleetPoint]:
    from vdesk.cluster.membership import RESOURCE, connect, desktop_nodes, leave  # Ray: optional

    joined = connect(address)
    try:
        nodes = desktop_nodes()
        slots = sum(node.slots for node in nodes)
        environment.update(ray_nodes=str(len(nodes)), ray_slots=str(slots), ray_address=address)
        progress(f"through Ray at {address}: {len(nodes)} nodes, {slots} {RESOURCE} slots")
        return _sweep(client, _ray_way(), counts, seconds, slots, skipped, progress)
    finally:
        if joined:
            leave()


def _sweep(client: Any, way: _Way, counts: list[int], seconds: float, slots: int | None, skipped: list[str],
           progress: Progress) -> list[FleetPoint]:
    points: list[FleetPoint] = []
    progress(f"{way.name}: warming up (one desktop, untimed)")
    way.down(way.up())  # the first desktop of a run also pays for cold caches and, through Ray, imports
    for count in counts:
        reason = _why_skip(way, count, points, slots)
        if reason:
            skipped.append(f"{way.name} {count}: {reason}")
            progress(f"{way.name}: skipping {count} desktops: {reason}")
            continue
        progress(f"{way.name}: {count} desktops")
        points.append(_measure(client, way, count, seconds, progress))
    return points


def _why_skip(way: _Way, count: int, done: list[FleetPoint], slots: int | None) -> str | None:
    if done and done[-1].errors:
        return f"{done[-1].desktops} already failed ({done[-1].errors[0]})"
    if slots is not None and count > slots:
        return f"the cluster offers {slots} slots"
    if way.name == "local":  # a cluster's nodes are sized by their slots, this machine by its memory
        per_desktop = (done[-1].memory_busy_mib + done[-1].host_mib) if done else MEMORY_GUESS_MIB
        available = _available_mib()
        if count * per_desktop > available * MEMORY_HEADROOM:
            return f"needs ~{count * per_desktop:.0f} MiB, {available:.0f} MiB available"
    return None


def _measure(client: Any, way: _Way, count: int, seconds: float, progress: Progress) -> FleetPoint:
    """Bring ``count`` desktops up at once, weigh them, step them all for ``seconds``, take them
    down. The machine is read before they start and once more before they go (their CPU time is
    read from their containers, which are gone after)."""
    errors: list[str] = []
    start = Machine.now(client)
    host_before = resident_mib()
    desktops, up_seconds = up_all(way.up, way.down, count, UP_TIMEOUT + THREAD_GRACE, errors)
    try:
        host_share = max(0.0, resident_mib() - host_before) / max(1, len(desktops))
        progress(f"{way.name}: {len(desktops)} of {count} up in {up_seconds:.1f} s; idle for {IDLE_SECONDS:g} s")
        idle, cores = _idle(way, desktops, errors)
        progress(f"{way.name}: stepping {len(desktops)} desktops for {seconds:g} s")
        samples, wall = _step_all(desktops, seconds, errors)
        busy = _weigh(way, desktops, errors)
        surroundings = Surroundings(start, Machine.now(client))
    finally:
        for_each(way.down, desktops, UP_TIMEOUT)
    host = _median([u.host_memory_mib for u in idle]) if way.name == "ray" else host_share
    steps_ms = [s * 1000 for s in samples] or [0.0]
    return FleetPoint(
        way.name, count, len(desktops), up_seconds, len(desktops) / up_seconds if up_seconds else 0.0,
        len(samples), wall, len(samples) / wall if wall else 0.0, statistics.median(steps_ms),
        percentile(steps_ms, 0.9), _median([u.memory_mib for u in idle]), _median([u.memory_mib for u in busy]),
        host, cores, errors, surroundings)


def _idle(way: _Way, desktops: list[Any], errors: list[str]) -> tuple[list[Usage], float]:
    """Read every desktop twice, ``IDLE_SECONDS`` apart, doing nothing; return the second
    readings and the median cores one desktop used (for a local desktop, with this process's
    share of CPU: it holds every desktop's VNC connection)."""
    process_before, clock_before = process_cpu(), time.monotonic()
    before = _readings(way, desktops, errors)
    time.sleep(IDLE_SECONDS)
    after = _readings(way, desktops, errors)
    per_desktop = [idle_cores(b, a) for b, a in zip(before, after, strict=True) if b and a]
    if way.name == "local" and desktops:
        share = (process_cpu() - process_before) / (time.monotonic() - clock_before) / len(desktops)
        per_desktop = [cores + share for cores in per_desktop]
    return [a for a in after if a], _median(per_desktop)


def _step_all(desktops: list[Any], seconds: float, errors: list[str]) -> tuple[list[float], float]:
    """Step every desktop in its own thread for ``seconds``; return every step's duration and
    the wall time from the common start to the last step's end."""
    if not desktops:
        return [], 0.0
    starts: list[float] = []
    barrier = threading.Barrier(len(desktops), action=lambda: starts.append(time.perf_counter()))
    durations: list[float] = []
    ends: list[float] = []
    lock = threading.Lock()

    def drive(desktop: Any) -> None:
        barrier.wait(timeout=THREAD_GRACE)
        mine: list[float] = []
        end = time.perf_counter()
        until = end + seconds
        try:
            while end < until:
                began = time.perf_counter()
                _step(desktop)
                end = time.perf_counter()
                mine.append(end - began)
        finally:
            with lock:
                durations.extend(mine)
                ends.append(end)

    results = for_each(drive, desktops, THREAD_GRACE + seconds + THREAD_GRACE)
    # Counted in the point, not raised: the figure is how many cope.
    errors += [error_line(r) for r in results if isinstance(r, BaseException)]
    with lock:
        start = starts[0] if starts else time.perf_counter()  # every thread left the barrier then
        return list(durations), max(ends, default=start) - start


def _weigh(way: _Way, desktops: list[Any], errors: list[str]) -> list[Usage]:
    """Every desktop's usage, read at once; a failed reading is counted as an error and left out."""
    return [r for r in _readings(way, desktops, errors) if r]


def _readings(way: _Way, desktops: list[Any], errors: list[str]) -> list[Usage | None]:
    """Every desktop's usage, read at once, in desktop order (None where a reading failed)."""
    results = for_each(way.usage, desktops, THREAD_GRACE)
    errors += [error_line(r) for r in results if isinstance(r, BaseException)]
    return [None if isinstance(r, BaseException) else r for r in results]


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


# -- the machine --------------------------------------------------------------------------------
def _available_mib() -> float:
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
    return math.inf


def _environment(client: Any, seconds: float) -> dict[str, str]:
    info = client.info()
    others = client.containers.list(filters={"label": f"{LABEL}=desktop"})
    return {"vdesk": __version__, "cpus": str(os.cpu_count() or 1), "cpu": cpu_model(),
            "memory_gib": f"{info.get('MemTotal', 0) / 2**30:.1f}", "docker": str(info.get("ServerVersion", "?")),
            "screen": f"{DEFAULT_SIZE[0]}x{DEFAULT_SIZE[1]}", "step_seconds": f"{seconds:g}",
            "other_desktops_running": str(len(others)), "load_at_start": f"{os.getloadavg()[0]:.2f}",
            "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def parse_counts(text: str) -> list[int]:
    """``"1,2,4"`` → ``[1, 2, 4]``; raises :class:`InvalidArgument` naming the bad text."""
    try:
        counts = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InvalidArgument(f"invalid counts {text!r}: write numbers separated by commas, e.g. 1,2,4,8") from None
    if not counts or min(counts) < 1 or max(counts) > 256:
        raise InvalidArgument(f"invalid counts {text!r}: each must be between 1 and 256")
    return counts


# -- for people -------------------------------------------------------------------------------
FIGURES: tuple[tuple[str, Callable[[FleetPoint], str]], ...] = (
    ("came up", lambda p: f"{p.came_up}/{p.desktops}"),
    ("all up (s)", lambda p: f"{p.up_seconds:.1f}"),
    ("up/s", lambda p: f"{p.ups_per_second:.2f}"),
    ("steps/s", lambda p: f"{p.steps_per_second:.1f}"),
    ("steps/s each", lambda p: f"{p.steps_per_desktop:.1f}"),
    ("step p50 (ms)", lambda p: f"{p.step_ms_median:.0f}"),
    ("step p90 (ms)", lambda p: f"{p.step_ms_p90:.0f}"),
    ("MiB each, idle", lambda p: f"{p.memory_idle_mib:.0f}"),
    ("MiB each, busy", lambda p: f"{p.memory_busy_mib:.0f}"),
    ("host MiB each", lambda p: f"{p.host_mib:.0f}"),
    ("idle CPU each (%)", lambda p: f"{p.idle_cores * 100:.1f}"),
    ("load, start-end", lambda p: p.machine.brief() if p.machine else ""),
    ("other containers", lambda p: str(max(len(p.machine.start.others), len(p.machine.end.others))) if p.machine else ""),
    ("errors", lambda p: str(len(p.errors))),
)
LABEL_WIDTH = max(len(label) for label, _ in FIGURES)


def render(report: FleetReport, width: int = 80) -> Group:
    """The figures, one column per number of desktops (a table per way, split so that each fits
    ``width`` columns), the errors, a warning when the machine was busy, and what nodes hold."""
    env = report.environment
    cpus = int(env.get("cpus") or 1)
    parts: list[Any] = [Text(
        f"vdesk bench --fleet: {env.get('cpus')} CPUs ({env.get('cpu', '?')}), {env.get('memory_gib')} GiB, docker {env.get('docker')}, "
        f"{env.get('screen')} screens, {env.get('step_seconds')} s of steps (click + settle + screenshot) per "
        f"column; load {env.get('load_at_start')} at the start, {env.get('load_at_end')} at the end")]
    cell = max([len(figure(p)) for p in report.points for _, figure in FIGURES] + [3])
    per_table = max(1, (width - LABEL_WIDTH - 2) // (cell + 2))  # each column has two spaces before it
    for way in report.ways():
        points = report.of(way)
        for first in range(0, len(points), per_table):
            parts.append(_figures_table(way, points[first:first + per_table]))
    errors = [f"{p.way} {p.desktops}: {_errors(p.errors)}" for p in report.points if p.errors]
    parts += [Text("errors: " + "; ".join(errors))] if errors else []
    parts += [Text("skipped: " + "; ".join(report.skipped))] if report.skipped else []
    warning = busy_warning([p.machine for p in report.points], cpus)
    parts += [Text(warning, style="bold yellow")] if warning else []
    parts.append(render_holds(report))
    return Group(*parts)


def _figures_table(way: str, points: list[FleetPoint]) -> Table:
    table = Table(title=f"{way}: desktops at once", box=None, padding=(0, 0, 0, 2), title_justify="left",
                  header_style="bold")
    table.add_column("", no_wrap=True, min_width=LABEL_WIDTH)
    for point in points:
        table.add_column(str(point.desktops), justify="right", no_wrap=True)
    for label, figure in FIGURES:
        table.add_row(label, *(figure(point) for point in points))
    return table


def _errors(errors: list[str]) -> str:
    return "; ".join(errors[:2]) + (f" (+{len(errors) - 2})" if len(errors) > 2 else "")


def render_holds(report: FleetReport, rates: Sequence[float] = STEP_RATES,
                 sizes: Sequence[tuple[int, int]] = NODE_SIZES) -> Table:
    """Desktops a node of each size holds at each step rate, and what limits it."""
    table = Table(title="desktops a node holds, at N steps/s each", title_justify="left", caption=(
        f"from this machine's figures, per desktop: memory = busy container + host share; CPU = idle CPU "
        f"+ step rate × CPU per step; {RESERVE_GIB:g} GiB kept for the system"))
    table.add_column("node", no_wrap=True)
    table.add_column("way", no_wrap=True)
    for rate in rates:
        table.add_column(f"{rate:g}/s", justify="right", no_wrap=True)
    for way in report.ways():
        if not any(p.steps for p in report.of(way)):
            continue
        estimate = report.estimate(way)
        for cores, gib in sizes:
            cells = [f"{n} {'mem' if why == 'memory' else why}" for n, why in (estimate.holds(cores, gib, rate) for rate in rates)]
            table.add_row(f"{cores} CPU {gib} GiB", way, *cells)
    return table


# -- the curve, drawn with Pillow --------------------------------------------------------------
COLOURS = {"local": (31, 119, 180), "ray": (230, 120, 20)}
PANEL = (640, 420)  # width, height of one chart
MARGIN = (70, 50, 20, 60)  # left, top, right, bottom inside a panel


def plot(report: FleetReport, path: Path) -> Path:
    """Draw desktops up per second and steps per second against the number of desktops, one
    line per way, and write the PNG to ``path``."""
    width, height = PANEL[0] * 2 + 40, PANEL[1] + 110
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    title, small = ImageFont.load_default(size=20), ImageFont.load_default(size=14)
    env = report.environment
    draw.text((20, 12), f"vdesk fleet: {env.get('cpus')} cores, {env.get('memory_gib')} GiB, "
                        f"{env.get('screen')} desktops", fill="black", font=title)
    counts = sorted({p.desktops for p in report.points}) or [1]
    _panel(draw, (10, 50), "desktops brought up per second (started at once)", counts,
           {way: [(p.desktops, p.ups_per_second) for p in report.of(way)] for way in report.ways()}, small)
    _panel(draw, (PANEL[0] + 30, 50), "steps per second, all desktops together", counts,
           {way: [(p.desktops, p.steps_per_second) for p in report.of(way)] for way in report.ways()}, small)
    footer = (f"vdesk {env.get('vdesk')}, measured {env.get('when')}, load {env.get('load_at_start')} at the start "
              f"and {env.get('load_at_end')} at the end; x: desktops at once (log scale); step: click + settle + "
              f"fresh screenshot")
    draw.text((20, height - 30), footer, fill=(90, 90, 90), font=small)
    warning = busy_warning([p.machine for p in report.points], int(env.get("cpus") or 1), short=True)
    if warning:  # a curve measured beside other work says so on its face
        draw.text((20, height - 52), warning, fill=(200, 30, 30), font=small)
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, format="PNG", optimize=True)
    return path


def _panel(draw: ImageDraw.ImageDraw, origin: tuple[int, int], label: str, counts: list[int],
           lines: dict[str, list[tuple[int, float]]], font: Any) -> None:
    """One chart: axes with ticks, a polyline with dots per way, a legend."""
    left, top = origin[0] + MARGIN[0], origin[1] + MARGIN[1]
    right, bottom = origin[0] + PANEL[0] - MARGIN[2], origin[1] + PANEL[1] - MARGIN[3]
    draw.text((origin[0] + 10, origin[1] + 10), label, fill="black", font=font)
    top_value = _nice_top(max((v for points in lines.values() for _, v in points), default=1.0))
    low, high = math.log2(counts[0]), math.log2(counts[-1])

    inset = 24  # keeps the first and last points off the frame

    def at(count: int, value: float) -> tuple[float, float]:
        share = (math.log2(count) - low) / (high - low) if high > low else 0.5
        return left + inset + (right - left - 2 * inset) * share, bottom - (bottom - top) * value / top_value

    for index in range(6):  # y ticks and light grid
        value = top_value * index / 5
        y = bottom - (bottom - top) * index / 5
        draw.line([(left, y), (right, y)], fill=(230, 230, 230))
        draw.text((left - 8, y), f"{value:g}", fill="black", font=font, anchor="rm")
    for count in counts:  # x ticks
        x, _ = at(count, 0)
        draw.line([(x, bottom), (x, bottom + 5)], fill="black")
        draw.text((x, bottom + 8), str(count), fill="black", font=font, anchor="mt")
    draw.line([(left, top), (left, bottom), (right, bottom)], fill="black", width=2)
    draw.text(((left + right) / 2, bottom + 28), "desktops at once", fill="black", font=font, anchor="mt")
    for row, (way, points) in enumerate(lines.items()):
        colour = COLOURS.get(way, (80, 80, 80))
        xy = [at(count, value) for count, value in sorted(points)]
        if len(xy) > 1:
            draw.line(xy, fill=colour, width=3)
        for (x, y), (_, value) in zip(xy, sorted(points), strict=True):
            draw.ellipse([(x - 4, y - 4), (x + 4, y + 4)], fill=colour)
            # The first way's values go above its dots, the second's below, so equal values stay legible.
            above = row % 2 == 0 or y + 24 > bottom  # nor into the axis labels
            draw.text((x, y - 8 if above else y + 8), f"{value:.1f}" if value >= 1 else f"{value:.2f}",
                      fill=colour, font=font, anchor="mb" if above else "mt")
        legend_y = top + 8 + row * 20
        draw.line([(right - 110, legend_y), (right - 80, legend_y)], fill=colour, width=3)
        draw.text((right - 72, legend_y), "through Ray" if way == "ray" else way, fill="black", font=font, anchor="lm")


def _nice_top(value: float) -> float:
    """The smallest 1, 2, 2.5 or 5 × 10^k at or above ``value`` (an axis that ends on a round number)."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    return next(step * power for step in (1, 2, 2.5, 5, 10) if step * power >= value)

"""``vdesk bench``: how fast and how lean real desktops are, measured on real desktops.

Every number comes from timing real operations with :func:`time.perf_counter` after a few
warm-up runs, and is reported as a median and a 90th percentile; nothing here asserts a
timing. With ``baseline=True`` the same run also times the naive ways of doing the same
things (a new ``docker exec`` per action, a new VNC connection per screenshot, a screenshot
made inside the container and copied out through ``docker exec``) and reports how many
times slower they are.

    report = run_bench(baseline=True)
    rich.print(render(report))
    Path("bench.json").write_text(report.to_json())

Every desktop the bench brings up is taken down before it returns, whatever happens.
"""

from __future__ import annotations

import json
import os
import platform
import random
import statistics
import string
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any

import docker
import docker.errors
from docker.models.containers import Container
from PIL import Image
from rich.table import Table
from vncdotool import api as vnc_api

from vdesk import __version__, engine, images as desktop_image
from vdesk.desktop import DEFAULT_SIZE, LABEL, Desktop
from vdesk.errors import VdeskError
from vdesk.operator import encode

Progress = Callable[[str], None]

WARMUP = 3  # untimed runs before sampling each operation
TYPING_LENGTHS = (100, 1000)
TYPING_ALPHABET = string.ascii_letters + string.digits + string.punctuation + " "
TYPING_TITLE = "vdesk-bench-typing"
TYPING_FILE = "/tmp/typed.txt"
TYPING_LANDED_TIMEOUT = 10.0  # seconds to wait for a typed line to reach the file
IDLE_SECONDS = 1.0  # how long a desktop idles before its memory is read
POINT = {"raw": {"x": 640, "y": 400}}
CLICK = [{"type": "click", "inputs": {"point": POINT}}]
KEY = [{"type": "hotkey", "inputs": {"key": "shift"}}]
# The naive action sends the very xdotool arguments vdesk sends for a click, so the two differ
# only in how the command reaches the desktop. (`xdotool click 1` would add its own 100 ms sleep.)
NAIVE_CLICK = ["xdotool", "mousemove", "640", "400", "mousedown", "1", "mouseup", "1"]

# A screenshot tool run inside the desktop: python3 and libX11 are in the image (xwd is not).
# It writes "WIDTH HEIGHT BYTES_PER_LINE\n" and the raw 32-bit ZPixmap of the root window.
IN_CONTAINER_SCREENSHOT = r"""
import ctypes, sys
class XImage(ctypes.Structure):
    _fields_ = [("width", ctypes.c_int), ("height", ctypes.c_int), ("xoffset", ctypes.c_int),
                ("format", ctypes.c_int), ("data", ctypes.c_void_p), ("byte_order", ctypes.c_int),
                ("bitmap_unit", ctypes.c_int), ("bitmap_bit_order", ctypes.c_int),
                ("bitmap_pad", ctypes.c_int), ("depth", ctypes.c_int),
                ("bytes_per_line", ctypes.c_int), ("bits_per_pixel", ctypes.c_int)]
x = ctypes.CDLL("libX11.so.6")
x.XOpenDisplay.restype = ctypes.c_void_p
x.XOpenDisplay.argtypes = [ctypes.c_char_p]
x.XDefaultRootWindow.restype = ctypes.c_ulong
x.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
x.XDisplayWidth.argtypes = x.XDisplayHeight.argtypes = [ctypes.c_void_p, ctypes.c_int]
x.XGetImage.restype = ctypes.POINTER(XImage)
x.XGetImage.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_int,
                        ctypes.c_uint, ctypes.c_uint, ctypes.c_ulong, ctypes.c_int]
display = x.XOpenDisplay(None)
if not display:
    sys.exit("cannot open the display")
width, height = x.XDisplayWidth(display, 0), x.XDisplayHeight(display, 0)
image = x.XGetImage(display, x.XDefaultRootWindow(display), 0, 0, width, height, 0xFFFFFFFF, 2).contents
out = sys.stdout.buffer
out.write(b"%d %d %d\n" % (width, height, image.bytes_per_line))
out.write(ctypes.string_at(image.data, image.bytes_per_line * height))
out.flush()
"""


class BenchError(VdeskError):
    """The bench could not take a measurement (an action failed, a desktop did not come up)."""


@dataclass(frozen=True)
class Measurement:
    """One operation's samples, in ``unit``, with their median and 90th percentile."""

    name: str
    unit: str
    samples: list[float]
    median: float
    p90: float
    note: str = ""

    @classmethod
    def of(cls, name: str, unit: str, samples: list[float], note: str = "") -> Measurement:
        if not samples:
            raise BenchError(f"{name}: no samples")
        return cls(name, unit, list(samples), statistics.median(samples), percentile(samples, 0.9), note)


@dataclass(frozen=True)
class BenchReport:
    """Every measurement of a run, the naive/vdesk ratios and where it ran.

    ``checks`` holds the run's yes/no outcomes (``type_100_exact``, ``type_1000_exact``: every
    typed text arrived in the program exactly).
    """

    measurements: list[Measurement]
    ratios: dict[str, float]
    environment: dict[str, str]
    checks: dict[str, bool] = field(default_factory=dict)

    def get(self, name: str) -> Measurement:
        """The measurement called ``name``; :class:`KeyError` names the ones there are."""
        for measurement in self.measurements:
            if measurement.name == name:
                return measurement
        raise KeyError(f"no measurement {name!r} (have: {', '.join(m.name for m in self.measurements)})")

    def to_json(self) -> str:
        return json.dumps({"measurements": [asdict(m) for m in self.measurements], "ratios": self.ratios,
                           "checks": self.checks, "environment": self.environment}, indent=2)


def percentile(samples: list[float], fraction: float) -> float:
    """The ``fraction`` quantile of ``samples``, interpolating linearly between ranks."""
    ordered = sorted(samples)
    position = (len(ordered) - 1) * fraction
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


# -- the run ----------------------------------------------------------------------------------
def run_bench(*, baseline: bool = False, repeats: int = 30, desktops: int = 10,
              progress: Progress = print) -> BenchReport:
    """Measure vdesk on real 1280x800 desktops and return the report.

    ``repeats`` samples are taken of each timed operation (after a few warm-up runs);
    ``desktops`` are brought up at once for the parallel measurement. ``baseline=True`` also
    times the naive ways and fills :attr:`BenchReport.ratios`. Progress lines go to ``progress``.
    """
    if repeats < 1 or desktops < 1:
        raise ValueError("repeats and desktops must be at least 1")
    client = engine.connect()
    desktop_image.ensure(client, progress=progress)
    environment = _environment(client, repeats, desktops)
    measurements: list[Measurement] = []
    checks: dict[str, bool] = {}

    progress("bringing up a desktop for the per-operation measurements")
    desktop = Desktop.up(size=DEFAULT_SIZE)
    try:
        measurements += _operations(desktop, repeats, baseline, checks, progress)
    finally:
        desktop.down()

    progress(f"up and down, {repeats} times")
    measurements += _lifecycle(repeats)
    progress(f"{desktops} desktops up at once")
    measurements += _parallel(client, desktops, progress)

    ratios: dict[str, float] = {}
    if baseline:
        by_name = {m.name: m for m in measurements}
        for naive, ours in (("naive_exec_action", "click"), ("naive_vnc_screenshot", "fresh_screenshot"),
                            ("naive_exec_screenshot", "fresh_screenshot")):
            ratios[f"{naive}/{ours}"] = by_name[naive].median / by_name[ours].median
    progress("done")
    return BenchReport(measurements, ratios, environment, checks)


def _operations(desktop: Desktop, repeats: int, baseline: bool, checks: dict[str, bool],
                progress: Progress) -> list[Measurement]:
    """Everything measured on one desktop: frames, actions, typing, a full step, memory."""
    results: list[Measurement] = []
    desktop.wait_until_settled()

    progress("idle memory")
    time.sleep(IDLE_SECONDS)
    memory = []
    for _ in range(min(repeats, 5)):
        memory.append(container_memory_mib(desktop.container))
        time.sleep(0.2)
    results.append(Measurement.of("idle_memory", "MiB", memory, note=MEMORY_NOTE))

    progress("screenshots")
    results.append(Measurement.of("fresh_screenshot", "ms", _timed(lambda: desktop.screenshot(fresh=True), repeats),
                                  note="screenshot(fresh=True): one round trip on the held VNC connection"))
    results.append(Measurement.of("unchanged_screenshot", "ms", _timed(lambda: desktop.screenshot(fresh=False), repeats),
                                  note="screenshot(fresh=False): a copy of the live framebuffer"))
    if baseline:
        progress("baseline: a new VNC connection per screenshot")
        results.append(Measurement.of("naive_vnc_screenshot", "ms",
                                      _timed(lambda: _naive_vnc_screenshot(desktop), repeats),
                                      note="connect, full refresh, disconnect (through the same tunnel)"))
        progress("baseline: a screenshot made in the container, copied out by docker exec")
        results.append(Measurement.of("naive_exec_screenshot", "ms",
                                      _timed(lambda: _naive_exec_screenshot(desktop), repeats),
                                      note="docker exec of XGetImage in the desktop, raw pixels to an image"))

    progress("actions")
    results.append(Measurement.of("click", "ms", _timed(lambda: _act(desktop, CLICK), repeats),
                                  note="execute() of one click"))
    results.append(Measurement.of("key_press", "ms", _timed(lambda: _act(desktop, KEY), repeats),
                                  note="execute() of one hotkey 'shift'"))
    if baseline:
        progress("baseline: a new docker exec per action")
        results.append(Measurement.of("naive_exec_action", "ms",
                                      _timed(lambda: _naive_exec_action(desktop), repeats),
                                      note="container.exec_run(xdotool …) per click, same xdotool arguments"))
    results.append(Measurement.of("full_step", "ms", _timed(lambda: _full_step(desktop), repeats),
                                  note="click with settle=True, then a fresh screenshot, on a static screen"))

    progress("typing into a program")
    results += _typing(desktop, repeats, checks)

    progress("encoding a frame")
    frame = _busy_frame(desktop)
    png, jpeg = encode(frame, "png"), encode(frame, "jpeg")
    results.append(Measurement.of("png_encode", "ms", _timed(lambda: encode(frame, "png"), repeats),
                                  note=f"{frame.width}x{frame.height} frame of text windows → {len(png) // 1024} KiB"))
    results.append(Measurement.of("jpeg_encode", "ms", _timed(lambda: encode(frame, "jpeg"), repeats),
                                  note=f"quality 85 → {len(jpeg) // 1024} KiB"))
    return results


def _typing(desktop: Desktop, repeats: int, checks: dict[str, bool]) -> list[Measurement]:
    """Type random printable ASCII into ``cat > FILE`` in an xterm and check every line landed exactly."""
    desktop.run(["xterm", "-title", TYPING_TITLE, "-geometry", "120x30+0+0",
                 "-e", "sh", "-c", f"cat > {TYPING_FILE}"])
    window = desktop.windows.wait_for(TYPING_TITLE)
    desktop.windows.focus(window)
    _act(desktop, [{"type": "click", "inputs": {"point": {"raw": {"x": window.x + 20, "y": window.y + 20}}}}])
    desktop.wait_until_settled()
    landed = 0  # bytes of the file accounted for so far
    results = []
    for length in TYPING_LENGTHS:
        generator = random.Random(length)
        samples: list[float] = []
        matched = 0
        for index in range(WARMUP + repeats):
            text = "".join(generator.choices(TYPING_ALPHABET, k=length))
            started = time.perf_counter()
            _act(desktop, [{"type": "type", "inputs": {"content": text}}])
            elapsed = (time.perf_counter() - started) * 1000
            _act(desktop, [{"type": "type", "inputs": {"content": "\n"}}])  # cat reads the line
            received, landed = _read_line(desktop, landed, len(text) + 1)
            if index >= WARMUP:
                samples.append(elapsed)
                matched += received == text + "\n"
        exact = matched == repeats
        checks[f"type_{length}_exact"] = exact
        results.append(Measurement.of(
            f"type_{length}", "ms", samples,
            note=f"{length} ASCII chars into xterm; {'exact' if exact else 'NOT exact'}: {matched}/{repeats} matched"))
    desktop.run(["pkill", "-f", TYPING_TITLE], wait=True)
    return results


def _read_line(desktop: Desktop, offset: int, expected: int) -> tuple[str, int]:
    """Wait until ``expected`` more bytes reached the typing file (or time runs out); return
    them as text and the new file size."""
    deadline = time.monotonic() + TYPING_LANDED_TIMEOUT
    size = offset
    while time.monotonic() < deadline:
        result = desktop.run(["stat", "-c", "%s", TYPING_FILE], wait=True)
        size = int(result.stdout) if result.returncode == 0 else 0
        if size >= offset + expected:
            break
        time.sleep(0.01)
    content = desktop.run(["cat", TYPING_FILE], wait=True).check().stdout.encode()
    return content[offset:].decode(errors="replace"), len(content)


def _busy_frame(desktop: Desktop) -> Image.Image:
    """A frame with something on it: a full-screen terminal of coloured listings."""
    desktop.run(["xterm", "-title", "vdesk-bench-listing", "-geometry", "200x60+0+0", "-e", "sh", "-c",
                 "ls -laR --color=always /usr/lib /usr/share | head -2000; exec sleep 600"])
    desktop.windows.wait_for("vdesk-bench-listing")
    frame = desktop.wait_until_settled(quiet=0.3)
    desktop.run(["pkill", "-f", "vdesk-bench-listing"], wait=True)
    return frame


def _full_step(desktop: Desktop) -> None:
    _act(desktop, CLICK, settle=True)
    desktop.screenshot(fresh=True)


def _act(desktop: Desktop, actions: list[dict[str, Any]], *, settle: bool = False) -> None:
    result = desktop.execute(actions, settle=settle)
    if result.status != "success":
        raise BenchError(f"{actions[0]['type']} failed: {result.error_message}")


# -- the naive ways ---------------------------------------------------------------------------
def _naive_exec_action(desktop: Desktop) -> None:
    code, output = desktop.container.exec_run(NAIVE_CLICK, user="desk")
    if code != 0:
        raise BenchError(f"docker exec of xdotool failed ({code}): {output!r}")


def _naive_vnc_screenshot(desktop: Desktop) -> Image.Image:
    client = vnc_api.connect(desktop.frames.address, desktop.vnc_password, timeout=30)
    try:
        client.refreshScreen(False)  # a full frame on a brand-new connection
        assert client.protocol is not None and client.protocol.screen is not None
        return client.protocol.screen.copy()
    finally:
        client.disconnect()  # never vnc_api.shutdown(): the reactor is shared with the held connection


def _naive_exec_screenshot(desktop: Desktop) -> Image.Image:
    code, output = desktop.container.exec_run(["python3", "-c", IN_CONTAINER_SCREENSHOT], user="desk")
    if code != 0:
        raise BenchError(f"in-container screenshot failed ({code}): {output[-300:]!r}")
    header, _, pixels = output.partition(b"\n")
    width, height, stride = (int(v) for v in header.split())
    return Image.frombuffer("RGB", (width, height), pixels, "raw", "BGRX", stride, 1)


# -- lifecycle and many desktops --------------------------------------------------------------
def _lifecycle(repeats: int) -> list[Measurement]:
    ups: list[float] = []
    downs: list[float] = []
    for index in range(WARMUP + repeats):
        started = time.perf_counter()
        desktop = Desktop.up(size=DEFAULT_SIZE)
        up = time.perf_counter() - started
        try:
            desktop.screenshot(fresh=False)  # it really is ready
        finally:
            started = time.perf_counter()
            desktop.down()
            down = time.perf_counter() - started
        if index >= WARMUP:
            ups.append(up * 1000)
            downs.append(down * 1000)
    return [Measurement.of("up", "ms", ups, note="Desktop.up() until X answers and the first VNC frame arrived"),
            Measurement.of("down", "ms", downs, note="desktop.down(): disconnect and remove the container")]


def _parallel(client: docker.DockerClient, count: int, progress: Progress) -> list[Measurement]:
    """Bring ``count`` desktops up at once, read their memory, take them all down."""
    up: list[Desktop | None] = [None] * count
    ready_at: list[float] = [0.0] * count
    errors: list[str] = []
    lock = threading.Lock()
    started = time.perf_counter()

    def bring_up(index: int) -> None:
        try:
            desktop = Desktop.up(size=DEFAULT_SIZE)
        except Exception as error:  # counted and reported, not raised: how many came up is the measurement
            with lock:
                errors.append(f"{type(error).__name__}: {error}")
            return
        up[index], ready_at[index] = desktop, time.perf_counter() - started

    threads = [threading.Thread(target=bring_up, args=(i,), name=f"bench-up-{i}", daemon=True) for i in range(count)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        running = [d for d in up if d is not None]
        all_ready = max(ready_at) * 1000
        progress(f"{len(running)} of {count} up; reading their memory after {IDLE_SECONDS:g} s idle")
        time.sleep(IDLE_SECONDS)
        memory = _in_threads(lambda d: container_memory_mib(d.container), running)
    finally:
        for thread in threads:  # a desktop still starting is taken down too
            thread.join()
        for desktop in up:
            if desktop is not None:
                desktop.down()
    failed = f"; {len(errors)} failed: {errors[0]}" if errors else ""
    results = [Measurement.of("parallel_up", "count", [float(len(running))], note=f"{len(running)} of {count} came up{failed}")]
    if running:
        results.append(Measurement.of("parallel_all_ready", "ms", [all_ready],
                                      note=f"until the last of {len(running)} desktops started at once was ready"))
        results.append(Measurement.of("parallel_memory_total", "MiB", [sum(memory)], note=f"{len(running)} idle desktops"))
        results.append(Measurement.of("parallel_memory_per_desktop", "MiB", memory, note=MEMORY_NOTE))
    return results


def _in_threads(call: Callable[[Desktop], float], desktops: list[Desktop]) -> list[float]:
    results: list[float | BaseException] = [0.0] * len(desktops)

    def one(index: int) -> None:
        try:
            results[index] = call(desktops[index])
        except BaseException as error:
            results[index] = error

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(len(desktops))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for result in results:
        if isinstance(result, BaseException):
            raise BenchError(f"reading a desktop's memory failed: {result}") from result
    return [r for r in results if isinstance(r, float)]


MEMORY_NOTE = "container memory usage minus inactive file cache, as `docker stats` counts it"


def container_memory_mib(container: Container) -> float:
    """A container's memory in MiB as ``docker stats`` shows it: usage minus the inactive
    file cache (cgroup v1 ``total_inactive_file``, v2 ``inactive_file``). Files in the
    desktop's tmpfs are real memory and stay counted."""
    return stats_memory_mib(container.stats(stream=False, one_shot=True), container.name)


def stats_memory_mib(stats: dict[str, Any], name: str) -> float:
    """The memory of one ``docker stats`` sample, counted as :func:`container_memory_mib` says."""
    memory = stats.get("memory_stats") or {}
    if not memory.get("usage"):
        raise BenchError(f"the engine reports no memory usage for {name}")
    detail = memory.get("stats") or {}
    inactive = detail.get("total_inactive_file", detail.get("inactive_file", 0))
    return (memory["usage"] - inactive) / 2**20


# -- the run's surroundings -------------------------------------------------------------------
def _timed(call: Callable[[], object], repeats: int) -> list[float]:
    for _ in range(WARMUP):
        call()
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def _environment(client: docker.DockerClient, repeats: int, desktops: int) -> dict[str, str]:
    info = client.info()
    others = client.containers.list(filters={"label": f"{LABEL}=desktop"})
    try:
        image_id = client.images.get(desktop_image.IMAGE).short_id
    except docker.errors.ImageNotFound:
        image_id = "?"
    return {
        "vdesk": __version__,
        "when": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": str(os.cpu_count()),
        "memory": f"{info.get('MemTotal', 0) / 2**30:.1f} GiB",
        "docker": str(info.get("ServerVersion", "?")),
        "storage_driver": str(info.get("Driver", "?")),
        "cgroup": str(info.get("CgroupVersion", "?")),
        "image": f"{desktop_image.IMAGE} ({image_id})",
        "screen": f"{DEFAULT_SIZE[0]}x{DEFAULT_SIZE[1]}",
        "repeats": str(repeats),
        "desktops": str(desktops),
        "other_desktops_running": str(len(others)),
    }


# -- for people -------------------------------------------------------------------------------
def render(report: BenchReport) -> Table:
    """The report as a table: one row per measurement, then the naive/vdesk ratios."""
    env = report.environment
    table = Table(title="vdesk bench",
                  caption=(f"{env.get('cpus', '?')} CPUs, {env.get('memory', '?')}, docker {env.get('docker', '?')}, "
                           f"{env.get('repeats', '?')} samples each, {env.get('other_desktops_running', '?')} "
                           f"other desktops running at the start"))
    table.add_column("measurement")
    table.add_column("median", justify="right")
    table.add_column("p90", justify="right")
    table.add_column("n", justify="right")
    table.add_column("note", overflow="fold")
    for m in report.measurements:
        table.add_row(m.name, _quantity(m.median, m.unit), _quantity(m.p90, m.unit), str(len(m.samples)), m.note)
    if report.ratios:
        table.add_section()
        for name, ratio in report.ratios.items():
            table.add_row(name, f"{ratio:.1f}x", "", "", "medians: how many times slower the naive way is")
    return table


def _quantity(value: float, unit: str) -> str:
    if unit == "count":
        return f"{value:g}"
    digits = 2 if unit == "ms" and value < 10 else 1
    return f"{value:.{digits}f} {unit}"

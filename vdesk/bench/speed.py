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

Every row also records the machine around it (:class:`~vdesk.bench.machine.Surroundings`: the
load average, the other running containers and the CPU times at its start and end), and the
table warns when other work kept the machine busy (the bench's own work is not counted):
figures taken beside other work are slower than the machine's own.

Every desktop the bench brings up is taken down before it returns, whatever happens.
"""

from __future__ import annotations

import json
import os
import platform
import queue
import random
import shutil
import statistics
import string
import tempfile
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import docker
import docker.errors
from PIL import Image
from rich.console import Group
from rich.table import Table
from rich.text import Text
from vncdotool import api as vnc_api

from vdesk import engine, images as desktop_image
from vdesk.accessibility import text as text_on_screen
from vdesk.channel import ReplyLines
from vdesk.bench.machine import BUSY_OTHERS_SHARE, Surroundings, around, busy_warning, cpu_model
from vdesk.bench.threads import error_line, for_each, up_all
from vdesk.container import DEFAULT_SIZE, LABEL
from vdesk.desktop import Desktop
from vdesk.input import SETTLE_QUIET, SETTLE_TIMEOUT
from vdesk.execstream import ExecStream
from vdesk.frames import changed_regions
from vdesk.errors import BenchError, InvalidArgument
from vdesk.encoding import encode
from vdesk.progress import Progress
from vdesk.usage import container_memory_mib, container_usage, process_cpu
from vdesk.version import __version__

WARMUP = 3  # untimed runs before sampling each operation
TYPING_LENGTHS = (100, 1000)
TYPING_ALPHABET = string.ascii_letters + string.digits + string.punctuation + " "
TYPING_TITLE = "vdesk-bench-typing"
TYPING_FILE = "/tmp/typed.txt"
TYPING_LANDED_TIMEOUT = 10.0  # seconds to wait for a typed line to reach the file
IDLE_SECONDS = 1.0  # how long a desktop idles before its memory is read
UP_TIMEOUT = 180.0  # seconds for many desktops started at once on few cores to come up (or go)
READING_TIMEOUT = 60.0  # seconds for the engine's stats of every desktop
CPU_WINDOW = 1.0  # seconds of one reading of this process's CPU while nobody looks
CPU_READINGS = 3
RECORD_SECONDS = 10.0  # of one timed recording, its start and finish included (an episode's length, not a blip)
RECORD_FPS = 10.0
BUSY_SETTLE_REPEATS = 10  # samples of settle=True on the busy screen: each takes its whole bound
SCREENSHOT_GAP = 0.1  # between two fresh screenshots of a busy screen: an agent looks now and then
BUSY_TITLE = "vdesk-bench-busy"
# A terminal that prints a line (and scrolls) about 50 times a second: a screen that never rests.
BUSY_SCRIPT = "while :; do date +%N; sleep 0.02; done"
POINT = {"raw": {"x": 640, "y": 400}}
CLICK = [{"type": "click", "inputs": {"point": POINT}}]
# Beside the busy terminal (120x45 at the top left), on the bare root: the click itself changes nothing.
BESIDE_BUSY = [{"type": "click", "inputs": {"point": {"raw": {"x": 1200, "y": 760}}}}]
KEY = [{"type": "hotkey", "inputs": {"key": "shift"}}]
# The naive action: a docker exec of xdotool with the events vdesk sends by XTEST for a click.
# (`xdotool click 1` would add its own 100 ms sleep.)
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


@dataclass(frozen=True)
class Measurement:
    """One operation's samples, in ``unit``, with their median and 90th percentile."""

    name: str
    unit: str
    samples: list[float]
    median: float
    p90: float
    note: str = ""
    machine: Surroundings | None = None

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
QUICK_REPEATS = 5  # the defaults: a run of about a minute; figures for the README take --repeats 20
QUICK_DESKTOPS = 2
# Seconds each part takes on an idle 2-core machine, for the estimate a run announces: once; per
# sample of the per-sample rows (up and down, OCR, typing, settle on the busy screen, the rest);
# per long reading (a 10 s recording, the throughput stages); per desktop started at once.
ESTIMATE_ONCE = 15.0
ESTIMATE_PER_SAMPLE = 2.9
ESTIMATE_PER_SAMPLE_BASELINE = 0.3
ESTIMATE_PER_READING = 14.5
ESTIMATE_PER_DESKTOP = 0.7


def long_readings(repeats: int) -> int:
    """How many of the long readings (recordings, throughput) a run takes: one per five
    samples asked for, from one to :data:`CPU_READINGS`."""
    return max(1, min(CPU_READINGS, repeats // 5))


def plan_line(baseline: bool, repeats: int, desktops: int) -> str:
    """What a run will do and roughly how long it takes, in one line, said before it starts."""
    seconds = (ESTIMATE_ONCE + (repeats + WARMUP) * (ESTIMATE_PER_SAMPLE + baseline * ESTIMATE_PER_SAMPLE_BASELINE)
               + long_readings(repeats) * ESTIMATE_PER_READING + desktops * ESTIMATE_PER_DESKTOP)
    took = f"about {seconds / 60:.0f} min" if seconds >= 90 else f"about {5 * round(seconds / 5):.0f} s"
    return (f"bench: {repeats} samples of each measurement (after {WARMUP} warm-up runs) on one desktop, "
            f"{WARMUP + repeats} desktops up and down one after another, then {desktops} up at once"
            f"{', with the naive ways beside' if baseline else ''}; {took} on an idle 2-core machine, "
            "longer on a busy one")


def run_bench(*, baseline: bool = False, repeats: int = QUICK_REPEATS, desktops: int = QUICK_DESKTOPS,
              progress: Progress = print) -> BenchReport:
    """Measure vdesk on real 1280x800 desktops and return the report.

    ``repeats`` samples are taken of each timed operation (after a few warm-up runs);
    ``desktops`` are brought up at once for the parallel measurement. ``baseline=True`` also
    times the naive ways and fills :attr:`BenchReport.ratios`. Progress lines go to ``progress``,
    the first one saying what the run will do and about how long it takes (:func:`plan_line`).
    """
    if repeats < 1 or desktops < 1:
        raise InvalidArgument("repeats and desktops must be at least 1")
    progress(plan_line(baseline, repeats, desktops))
    client = engine.connect()
    desktop_image.ensure(client, progress=progress)
    environment = _environment(client, repeats, desktops)
    measurements: list[Measurement] = []
    checks: dict[str, bool] = {}

    progress("bringing up a desktop for the per-operation measurements")
    desktop = Desktop.up(size=DEFAULT_SIZE)
    try:
        measurements += _operations(client, desktop, repeats, baseline, checks, progress)
        measurements += _busy_screen(client, desktop, repeats, progress)
    finally:
        desktop.down()

    progress(f"up and down, {repeats} times")
    measurements += around(client, lambda: _lifecycle(repeats))
    progress(f"{desktops} desktops up at once")
    measurements += around(client, lambda: parallel(desktops, progress))
    environment["load_at_end"] = f"{os.getloadavg()[0]:.2f}"

    ratios: dict[str, float] = {}
    if baseline:
        by_name = {m.name: m for m in measurements}
        for naive, ours in (("naive_exec_action", "click"), ("naive_vnc_screenshot", "fresh_screenshot"),
                            ("naive_exec_screenshot", "fresh_screenshot")):
            ratios[f"{naive}/{ours}"] = by_name[naive].median / by_name[ours].median
    progress("done")
    return BenchReport(measurements, ratios, environment, checks)


def _operations(client: docker.DockerClient, desktop: Desktop, repeats: int, baseline: bool,
                checks: dict[str, bool], progress: Progress) -> list[Measurement]:
    """Everything measured on one desktop: frames, actions, typing, a full step, memory."""
    results: list[Measurement] = []

    def take(measure: Callable[[], Measurement]) -> None:
        results.extend(around(client, lambda: [measure()]))

    def timed(name: str, call: Callable[[], object], note: str) -> None:
        take(lambda: Measurement.of(name, "ms", _timed(call, repeats), note=note))

    desktop.screen.settle()
    progress("idle memory")
    take(lambda: Measurement.of("idle_memory", "MiB", _idle_memory(desktop, repeats), note=MEMORY_NOTE))
    progress("controller CPU while nobody looks, static screen")
    take(lambda: Measurement.of("static_idle_cpu", "% core", _idle_cpu(), note=IDLE_CPU_NOTE))

    progress("screenshots")
    timed("fresh_screenshot", lambda: desktop.screen.shot(fresh=True),
          "screenshot(fresh=True): one round trip on the held VNC connection")
    timed("unchanged_screenshot", lambda: desktop.screen.shot(fresh=False),
          "screenshot(fresh=False): a copy of the last frame pulled")
    if baseline:
        progress("baseline: a new VNC connection per screenshot")
        timed("naive_vnc_screenshot", lambda: _naive_vnc_screenshot(desktop),
              "connect, full refresh, disconnect (through the same tunnel)")
        progress("baseline: a screenshot made in the container, copied out by docker exec")
        timed("naive_exec_screenshot", lambda: _naive_exec_screenshot(desktop),
              "docker exec of XGetImage in the desktop, raw pixels to an image")

    progress("actions")
    timed("click", lambda: _act(desktop, CLICK, receipt=False),
          "execute(receipt=False) of one click")
    timed("key_press", lambda: _act(desktop, KEY, receipt=False),
          "execute(receipt=False) of one hotkey 'shift'")
    timed("click_receipt", lambda: _act(desktop, CLICK),
          "the same click with its receipt (the default) on a static screen: the X server says nothing was "
          "drawn before and after (two X round trips, no frame), no waiting; minus click = its cost per step "
          "(target ≤ 2 ms)")
    timed("click_settle", lambda: _act(desktop, CLICK, settle=True),
          f"the same click with settle=True and its receipt: the screen held still for {SETTLE_QUIET * 1000:g} ms")
    if baseline:
        progress("baseline: a new docker exec per action")
        timed("naive_exec_action", lambda: _naive_exec_action(desktop),
              "container.exec_run(xdotool …) per click, same xdotool arguments")
    timed("full_step", lambda: _full_step(desktop),
          "click with settle=True and its receipt, then a fresh screenshot, on a static screen")
    container_cpu, controller_cpu = _step_cpu(desktop, repeats)
    take(lambda: Measurement.of("step_container_cpu", "ms", container_cpu, note=(
        f"CPU time of the desktop's container per full step ({repeats} steps a reading, docker stats): "
        "with this process's, what bounds steps per second on a machine")))
    take(lambda: Measurement.of("step_controller_cpu", "ms", controller_cpu,
                                note="this process's CPU time per full step, in the same readings"))

    progress("typing into a program")
    results += around(client, lambda: _typing(desktop, repeats, checks))

    progress("channel and file throughput")
    results += around(client, lambda: _throughput(desktop, long_readings(repeats)))

    progress("encoding a frame")
    frame = _busy_frame(desktop)
    png, jpeg = encode(frame, "png"), encode(frame, "jpeg")
    take(lambda: Measurement.of("png_encode", "ms", _timed(lambda: encode(frame, "png"), repeats),
                                  note=f"{frame.width}x{frame.height} frame of text windows → {len(png) // 1024} KiB"))
    take(lambda: Measurement.of("jpeg_encode", "ms", _timed(lambda: encode(frame, "jpeg"), repeats),
                                  note=f"quality 85 → {len(jpeg) // 1024} KiB"))
    blank = Image.new("RGB", frame.size)
    take(lambda: Measurement.of("receipt_compare", "ms", _timed(lambda: changed_regions(blank, frame), repeats),
                                  note="a receipt's comparison of two frames that differ all over (that frame and a blank one)"))
    progress("reading the text of a frame")
    take(lambda: Measurement.of("ocr_full_frame", "ms", _timed(lambda: text_on_screen.read(frame), repeats),
                                  note=f"OCR (Tesseract) of that {frame.width}x{frame.height} frame: "
                                       f"{len(text_on_screen.read(frame))} lines; target ≤ 500 ms"))
    return results


IDLE_CPU_NOTE = "this process's CPU, no frame asked for: the controller's cost of a desktop nobody looks at"


def _busy_screen(client: docker.DockerClient, desktop: Desktop, repeats: int, progress: Progress) -> list[Measurement]:
    """The same desktop with a terminal scrolling text 50 times a second: what a busy screen
    costs while nobody looks, a click on it with and without a receipt and with settle, a fresh
    screenshot of it, and recording it."""
    desktop.programs.run(["xterm", "-title", BUSY_TITLE, "-geometry", "120x45+0+0", "-e", "sh", "-c", BUSY_SCRIPT])
    desktop.windows.wait_for(BUSY_TITLE)
    results: list[Measurement] = []
    try:
        desktop.screen.wait_for_change(timeout=10)
        time.sleep(1.0)  # its 45 lines are full: from now on every line scrolls the terminal
        progress("controller CPU while nobody looks, busy screen")
        results += around(client, lambda: [Measurement.of("busy_idle_cpu", "% core", _idle_cpu(), note=(
            IDLE_CPU_NOTE + "; a terminal prints and scrolls 50 times a second"))])
        progress("actions on a busy screen")
        results += around(client, lambda: _busy_actions(desktop, repeats))
        progress("screenshots of a busy screen")
        results += around(client, lambda: [Measurement.of(
            "busy_fresh_screenshot", "ms", _timed(lambda: desktop.screen.shot(fresh=True), repeats, gap=SCREENSHOT_GAP),
            note=f"screenshot(fresh=True) every {SCREENSHOT_GAP:g} s of that screen: the change since the last one")])
        progress(f"recording the busy screen at {RECORD_FPS:g} fps")
        results += around(client, lambda: [Measurement.of(
            "record_cpu", "% core", [_record_cpu(desktop) for _ in range(long_readings(repeats))],
            note=f"desktop.screen.record() at {RECORD_FPS:g} fps of that screen: this process + ffmpeg, {RECORD_SECONDS:g} s each")])
    finally:
        desktop.programs.run(["pkill", "-f", BUSY_TITLE], wait=True)
    return results


def _busy_actions(desktop: Desktop, repeats: int) -> list[Measurement]:
    """A click on the busy screen without a receipt, with the default one, and with settle=True
    (which ends at its bound there: how many samples never settled is in its note)."""
    rows = [Measurement.of("busy_click", "ms", _timed(lambda: _act(desktop, BESIDE_BUSY, receipt=False), repeats),
                           note="execute(receipt=False) of one click beside the terminal (on the bare root)"),
            Measurement.of("busy_click_receipt", "ms", _timed(lambda: _act(desktop, BESIDE_BUSY), repeats),
                           note="the same click with its receipt (the default): it never waits for calm; "
                                "minus busy_click = its cost (target ≤ 50 ms)")]
    outcomes: list[bool | None] = []
    samples = _timed(lambda: outcomes.append(_act(desktop, BESIDE_BUSY, settle=True)), min(repeats, BUSY_SETTLE_REPEATS))
    unsettled = outcomes[WARMUP:].count(False)
    rows.append(Measurement.of("busy_click_settle", "ms", samples, note=(
        f"the same click with settle=True: at most {SETTLE_TIMEOUT:g} s and a round trip; "
        f"{unsettled} of {len(samples)} never settled")))
    return rows


def _idle_memory(desktop: Desktop, repeats: int) -> list[float]:
    time.sleep(IDLE_SECONDS)
    memory = []
    for _ in range(min(repeats, 5)):
        memory.append(container_memory_mib(desktop.container))
        time.sleep(0.2)
    return memory


def _idle_cpu() -> list[float]:
    """This process's CPU, in percent of a core, over a few windows in which nothing is asked."""
    readings = []
    for _ in range(CPU_READINGS):
        cpu, wall = time.process_time(), time.monotonic()
        time.sleep(CPU_WINDOW)
        readings.append(100 * (time.process_time() - cpu) / (time.monotonic() - wall))
    return readings


def _record_cpu(desktop: Desktop) -> float:
    """Percent of a core one recording costs: this process and the ffmpeg child it waits for."""
    folder = Path(tempfile.mkdtemp(prefix="vdesk-bench-video-"))
    try:
        before, wall = _cpu_with_children(), time.monotonic()
        with desktop.screen.record(folder / "bench.mp4", fps=RECORD_FPS):
            time.sleep(RECORD_SECONDS)
        return 100 * (_cpu_with_children() - before) / (time.monotonic() - wall)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _cpu_with_children() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _typing(desktop: Desktop, repeats: int, checks: dict[str, bool]) -> list[Measurement]:
    """Type random printable ASCII into ``cat > FILE`` in an xterm and check every line landed exactly."""
    desktop.programs.run(["xterm", "-title", TYPING_TITLE, "-geometry", "120x30+0+0",
                 "-e", "sh", "-c", f"cat > {TYPING_FILE}"])
    window = desktop.windows.wait_for(TYPING_TITLE)
    desktop.windows.focus(window)
    _act(desktop, [{"type": "click", "inputs": {"point": {"raw": {"x": window.x + 20, "y": window.y + 20}}}}])
    desktop.screen.settle()
    landed = 0  # bytes of the file accounted for so far
    results = []
    for length in TYPING_LENGTHS:
        generator = random.Random(length)
        samples: list[float] = []
        matched = 0
        for index in range(WARMUP + repeats):
            text = "".join(generator.choices(TYPING_ALPHABET, k=length))
            started = time.perf_counter()
            _act(desktop, [{"type": "type", "inputs": {"content": text}}], receipt=False)  # as click and key_press
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
            note=f"execute(receipt=False) of {length} ASCII chars into xterm; {'exact' if exact else 'NOT exact'}: {matched}/{repeats} matched"))
    desktop.programs.run(["pkill", "-f", TYPING_TITLE], wait=True)
    return results


THROUGHPUT_BYTES = 32_000_000  # per command output
FILE_BYTES = 100_000_000
THROUGHPUT_TARGET = "target ≥ 50 MB/s; a 100 MB file ≤ 3 s"


def _throughput(desktop: Desktop, repeats: int) -> list[Measurement]:
    """MB/s of each stage that carries data out of a desktop: a command's output through the
    channel (end to end, then its in-container and host stages alone), and files through their
    own tar stream."""
    size = THROUGHPUT_BYTES
    argv = ["sh", "-c", f"head -c {size} /dev/zero | tr '\\0' x"]  # text: JSON carries it as is

    def rate(seconds: float, count: int = size) -> float:
        return count / 1e6 / seconds

    channel = [rate(_seconds(lambda: desktop.programs.run(argv, wait=True, output_limit=size))) for _ in range(repeats)]
    request = json.dumps({"id": 1, "argv": argv, "timeout": 60, "limit": size})
    inside = ("import subprocess, sys, time; t = time.monotonic(); subprocess.run(['/usr/local/bin/vdesk-channel'], "
              "input=sys.argv[1].encode() + b'\\n', stdout=subprocess.DEVNULL); print(time.monotonic() - t)")
    in_container = [rate(float(desktop.programs.run(["python3", "-c", inside, request], wait=True).check().stdout))
                    for _ in range(repeats)]
    reply = (json.dumps({"id": 1, "rc": 0, "stdout": "x" * size, "stderr": ""}, ensure_ascii=False) + "\n").encode()
    host = [rate(_seconds(lambda: _parse_reply(reply)), len(reply)) for _ in range(repeats)]
    transport = [rate(_seconds(lambda: _exec_stream(desktop, argv))) for _ in range(repeats)]
    payload = os.urandom(FILE_BYTES)
    written = [rate(_seconds(lambda: desktop.files.write_file("/tmp/vdesk-bench.bin", payload)), FILE_BYTES)
               for _ in range(repeats)]
    read = [rate(_seconds(lambda: desktop.files.read_file("/tmp/vdesk-bench.bin")), FILE_BYTES) for _ in range(repeats)]
    desktop.programs.run(["rm", "-f", "/tmp/vdesk-bench.bin"], wait=True)
    mb = f"{size // 1_000_000} MB"
    return [
        Measurement.of("channel_output", "MB/s", channel, note=f"run(wait=True) of {mb} of output; {THROUGHPUT_TARGET}"),
        Measurement.of("channel_in_container", "MB/s", in_container, note=f"vdesk-channel alone: run, read, reply in JSON ({mb})"),
        Measurement.of("channel_host_parse", "MB/s", host, note="the controller splitting and decoding that reply"),
        Measurement.of("exec_stream", "MB/s", transport, note=f"the engine carrying {mb} of a bare exec's stdout"),
        Measurement.of("file_write", "MB/s", written, note=f"write_file of 100 MB (tar stream); {THROUGHPUT_TARGET}"),
        Measurement.of("file_read", "MB/s", read, note=f"read_file of 100 MB (tar stream); {THROUGHPUT_TARGET}"),
    ]


def _seconds(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def _exec_stream(desktop: Desktop, argv: list[str]) -> int:
    """Bytes a bare exec session carries from ``argv``'s stdout to here."""
    received = [0]
    ended = threading.Event()
    ExecStream(desktop.client.api, desktop.id, argv, on_data=lambda data: received.__setitem__(0, received[0] + len(data)),
               on_close=ended.set).finish_input()
    if not ended.wait(120):
        raise BenchError("the exec stream did not end within 120 s")
    return received[0]


def _parse_reply(reply: bytes) -> None:
    replies: queue.Queue[object] = queue.Queue()
    lines = ReplyLines(replies, "bench")
    lines.cap = len(reply) + 1
    for start in range(0, len(reply), 32768):  # the engine's frames are at most 32 KiB
        lines.feed(reply[start:start + 32768])
    assert isinstance(replies.get_nowait(), dict)


def _read_line(desktop: Desktop, offset: int, expected: int) -> tuple[str, int]:
    """Wait until ``expected`` more bytes reached the typing file (or time runs out); return
    them as text and the new file size."""
    deadline = time.monotonic() + TYPING_LANDED_TIMEOUT
    size = offset
    while time.monotonic() < deadline:
        result = desktop.programs.run(["stat", "-c", "%s", TYPING_FILE], wait=True)
        size = int(result.stdout) if result.returncode == 0 else 0
        if size >= offset + expected:
            break
        time.sleep(0.01)
    content = desktop.programs.run(["cat", TYPING_FILE], wait=True).check().stdout.encode()
    return content[offset:].decode(errors="replace"), len(content)


def _busy_frame(desktop: Desktop) -> Image.Image:
    """A frame with something on it: a full-screen terminal of coloured listings."""
    desktop.programs.run(["xterm", "-title", "vdesk-bench-listing", "-geometry", "200x60+0+0", "-e", "sh", "-c",
                 "ls -laR --color=always /usr/lib /usr/share | head -2000; exec sleep 600"])
    desktop.windows.wait_for("vdesk-bench-listing")
    frame = desktop.screen.settle(quiet=0.3)
    desktop.programs.run(["pkill", "-f", "vdesk-bench-listing"], wait=True)
    return frame


def _step_cpu(desktop: Desktop, steps: int) -> tuple[list[float], list[float]]:
    """CPU milliseconds per full step, of the desktop's container and of this process, over
    :data:`CPU_READINGS` readings of ``steps`` steps."""
    container, controller = [], []
    for _ in range(CPU_READINGS):
        before, own = container_usage(desktop.container), process_cpu()
        for _ in range(steps):
            _full_step(desktop)
        own = process_cpu() - own  # before the reading below: a stats call costs this process ~2 ms
        after = container_usage(desktop.container)
        controller.append(1000 * own / steps)
        container.append(1000 * (after.cpu_seconds - before.cpu_seconds) / steps)
    return container, controller


def _full_step(desktop: Desktop) -> None:
    _act(desktop, CLICK, settle=True)
    desktop.screen.shot(fresh=True)


def _act(desktop: Desktop, actions: list[dict[str, Any]], *, settle: bool = False, receipt: bool = True) -> bool | None:
    """Run a batch that must succeed; whether the screen settled after it (None: not asked)."""
    result = desktop.input.execute(actions, settle=settle, receipt=receipt)
    if result.status != "success":
        raise BenchError(f"{actions[0]['type']} failed: {result.error_message}")
    return result.settled


# -- the naive ways ---------------------------------------------------------------------------
def _naive_exec_action(desktop: Desktop) -> None:
    code, output = desktop.container.exec_run(NAIVE_CLICK, user="desk")
    if code != 0:
        raise BenchError(f"docker exec of xdotool failed ({code}): {output!r}")


def _naive_vnc_screenshot(desktop: Desktop) -> Image.Image:
    tunnel = desktop.vnc.forward()
    client = vnc_api.connect(f"127.0.0.1::{tunnel.port}", desktop.vnc.password, timeout=30)
    try:
        with warnings.catch_warnings():  # vncdotool's own client takes DES from its deprecated home
            warnings.filterwarnings("ignore", message="TripleDES has been moved")
            client.refreshScreen(False)  # a full frame on a brand-new connection
        assert client.protocol is not None and client.protocol.screen is not None
        return client.protocol.screen.copy()
    finally:
        client.disconnect()  # never vnc_api.shutdown(): the reactor is shared with the held connection
        tunnel.close()


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
            desktop.screen.shot(fresh=False)  # it really is ready
        finally:
            started = time.perf_counter()
            desktop.down()
            down = time.perf_counter() - started
        if index >= WARMUP:
            ups.append(up * 1000)
            downs.append(down * 1000)
    return [Measurement.of("up", "ms", ups, note="Desktop.up() until X answers and the first VNC frame arrived"),
            Measurement.of("down", "ms", downs, note="desktop.down(): disconnect and remove the container")]


def parallel(count: int, progress: Progress, image: str = "lean", prefix: str = "") -> list[Measurement]:
    """Bring ``count`` desktops of ``image`` up at once, read their memory, take them all down;
    the rows' names start with ``prefix``."""
    errors: list[str] = []  # counted and reported, not raised: how many came up is the measurement
    running, ready = up_all(lambda: Desktop.up(size=DEFAULT_SIZE, image=image, timeout=UP_TIMEOUT),
                            Desktop.down, count, UP_TIMEOUT, errors)
    try:
        all_ready = ready * 1000
        progress(f"{len(running)} of {count} up; reading their memory after {IDLE_SECONDS:g} s idle")
        time.sleep(IDLE_SECONDS)
        memory = _memory_of(running)
    finally:
        for_each(Desktop.down, running, UP_TIMEOUT)
    failed = f"; {len(errors)} failed: {errors[0]}" if errors else ""
    results = [Measurement.of(f"{prefix}parallel_up", "count", [float(len(running))], note=f"{len(running)} of {count} came up{failed}")]
    if running:
        results.append(Measurement.of(f"{prefix}parallel_all_ready", "ms", [all_ready],
                                      note=f"until the last of {len(running)} desktops started at once was ready"))
        results.append(Measurement.of(f"{prefix}parallel_memory_total", "MiB", [sum(memory)], note=f"{len(running)} idle desktops"))
        results.append(Measurement.of(f"{prefix}parallel_memory_per_desktop", "MiB", memory, note=MEMORY_NOTE))
    return results


def _memory_of(desktops: list[Desktop]) -> list[float]:
    """Every desktop's memory, read at once; a reading that fails fails the measurement."""
    results = for_each(lambda desktop: container_memory_mib(desktop.container), desktops, READING_TIMEOUT)
    for result in results:
        if isinstance(result, BaseException):
            raise BenchError(f"reading a desktop's memory failed: {error_line(result)}") from result
    return [r for r in results if isinstance(r, float)]


MEMORY_NOTE = ("container memory usage minus the file cache (`docker stats` keeps its active part: the image's "
               "files, charged to the first desktop that read them)")


# -- the run's surroundings -------------------------------------------------------------------
def _timed(call: Callable[[], object], repeats: int, gap: float = 0.0) -> list[float]:
    """Milliseconds of ``repeats`` calls after the warm-up ones, ``gap`` seconds apart."""
    for _ in range(WARMUP):
        call()
    samples = []
    for _ in range(repeats):
        time.sleep(gap)
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
        "cpu": cpu_model(),
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
def render(report: BenchReport) -> Group:
    """The report as a table that reads at 80 columns: one row per measurement (its note under
    its name), then the naive/vdesk ratios, then a warning when the machine was busy."""
    env = report.environment
    cpus = int(env.get("cpus") or 1)
    table = Table(title="vdesk bench", caption=(
        f"{env.get('cpus', '?')} CPUs ({env.get('cpu', '?')}), {env.get('memory', '?')}, docker {env.get('docker', '?')}, "
        f"{env.get('repeats', '?')} samples each; load: 1-minute load average at a row's start and end "
        f"(!: other work used more than {100 * BUSY_OTHERS_SHARE:.0f} % of the cores)"))
    table.add_column("measurement", ratio=1, min_width=24)
    for header in ("median", "p90"):
        table.add_column(header, justify="right", no_wrap=True)
    table.add_column("n", justify="right", no_wrap=True)
    table.add_column("load", justify="right", no_wrap=True)
    for m in report.measurements:
        table.add_row(_named(m.name, m.note), _quantity(m.median, m.unit), _quantity(m.p90, m.unit),
                      str(len(m.samples)), _load(m.machine, cpus))
    if report.ratios:
        table.add_section()
        for name, ratio in report.ratios.items():
            table.add_row(_named(name.replace("/", " / "), "medians: how many times slower the naive way is"),
                          f"{ratio:.1f}x", "", "", "")
    warning = busy_warning([m.machine for m in report.measurements], cpus)
    return Group(table, *([Text(warning, style="bold yellow")] if warning else []))


def _named(name: str, note: str) -> Text:
    return Text.assemble((name, "bold"), *(("\n", (note, "dim")) if note else ()))


def _load(machine: Surroundings | None, cpus: int) -> str:
    if machine is None:
        return ""
    return machine.brief() + (" !" if machine.busy(cpus) else "")


def _quantity(value: float, unit: str) -> str:
    if unit == "count":
        return f"{value:g}"
    digits = 2 if unit in ("ms", "% core") and value < 10 else 1
    return f"{value:.{digits}f} {'%' if unit == '% core' else unit}"

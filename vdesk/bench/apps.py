"""Figures of the apps desktop for ``vdesk bench --apps``, side by side with the lean one's:
image sizes, up to ready, idle memory, program launches, a screenshot and a click, memory with
Chromium and Calc open, and many apps desktops at once.

Kept beside the bench's run (which measures the lean desktop) and added to its report as
more measurements; the names start with ``apps_``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import docker

from vdesk import images
from vdesk.bench.machine import around
from vdesk.bench.speed import IDLE_SECONDS, MEMORY_NOTE, Measurement, _timed, parallel
from vdesk.accessibility import text as text_on_screen
from vdesk.container import DEFAULT_SIZE
from vdesk.desktop import Desktop
from vdesk.progress import Progress
from vdesk.usage import container_memory_mib

UP_TIMEOUT = 120.0


@dataclass(frozen=True)
class Launch:
    """A program started as a user would, and a part of its main window's title."""

    name: str
    argv: tuple[str, ...]
    title: str


LAUNCHES = (
    Launch("chromium", ("chromium", "data:text/html,<title>bench page</title><h1>A local page</h1>"), "bench page"),
    Launch("writer", ("libreoffice", "--writer"), "LibreOffice Writer"),
    Launch("calc", ("libreoffice", "--calc"), "LibreOffice Calc"),
)


def apps_measurements(client: docker.DockerClient, repeats: int, desktops: int = 10,
                      progress: Progress = print) -> list[Measurement]:
    """Measure the apps desktop (building its image first if needed); ``desktops`` of them are
    brought up at once for the parallel rows. Every row records the machine's load around it."""
    images.ensure(client, "apps", progress=progress)
    results = [_image_size(client, "lean"), _image_size(client, "apps")]
    progress(f"apps desktop: up and down, {repeats} times")
    results += around(client, lambda: [up_times("apps_up", "apps", DEFAULT_SIZE, repeats, (
        "Desktop.up(image='apps') until the first frame, its taskbar drawn, the accessibility bus up"))])
    with Desktop.up(size=DEFAULT_SIZE, image="apps", timeout=UP_TIMEOUT) as desktop:
        results += around(client, lambda: _programs(desktop, repeats, progress))
    progress("apps desktop: Chromium on a page and Calc, in a fresh desktop")
    results += around(client, lambda: [_memory_with_programs()])
    progress(f"apps desktop: {desktops} up at once")
    results += around(client, lambda: parallel(desktops, progress, image="apps", prefix="apps_"))
    return results


def _programs(desktop: Desktop, repeats: int, progress: Progress) -> list[Measurement]:
    """Idle memory, each program's launch, then a screenshot and a click with Calc open."""
    progress("apps desktop: idle memory")
    time.sleep(IDLE_SECONDS)
    results = [Measurement.of("apps_idle_memory", "MiB", [container_memory_mib(desktop.container) for _ in range(3)],
                              note=MEMORY_NOTE)]
    for launch in LAUNCHES:
        progress(f"apps desktop: launching {launch.name}, {repeats} times")
        results += _launch(desktop, launch, repeats)
    _open(desktop, LAUNCHES[2])
    desktop.screen.settle(quiet=0.5, timeout=30)
    results.append(Measurement.of("apps_fresh_screenshot", "ms", _timed(lambda: desktop.screen.shot(fresh=True), repeats),
                                  note="a fresh frame of an apps desktop with Calc open"))
    calc = desktop.screen.shot()
    results.append(Measurement.of("apps_ocr_full_frame", "ms", _timed(lambda: text_on_screen.read(calc), repeats),
                                  note=f"OCR (Tesseract) of that {calc.width}x{calc.height} frame with Calc open; "
                                       "target ≤ 500 ms"))
    click = [{"type": "click", "inputs": {"point": {"raw": {"x": 600, "y": 400}}}}]
    results.append(Measurement.of("apps_click", "ms", _timed(lambda: desktop.input.execute(click, receipt=False), repeats),
                                  note="a click into Calc's sheet (receipt off)"))
    results.append(Measurement.of("apps_click_receipt", "ms", _timed(lambda: desktop.input.execute(click), repeats),
                                  note="the same click with its receipt (the default): the cell cursor moves"))
    progress(f"apps desktop: the accessibility tree, {repeats} times each")
    results += _tree_rows(desktop, "calc", repeats)
    _open(desktop, LAUNCHES[0])  # Chromium on a page beside Calc
    results += _tree_rows(desktop, "calc_chromium", repeats)
    results.append(Measurement.of("apps_marks", "ms", _timed(desktop.elements.marks, repeats),
                                  note="marks(): a tree, a screenshot, the boxes drawn (Calc and Chromium open)"))
    _close(desktop, LAUNCHES[2], LAUNCHES[2].title)
    results += _tree_rows(desktop, "chromium", repeats)
    return results


def _tree_rows(desktop: Desktop, label: str, repeats: int) -> list[Measurement]:
    """The whole tree read through DesktopElements.tree, the part of it spent inside the
    desktop (the reader's own clock), and nodes per second."""
    desktop.elements.tree()  # a program builds its accessible objects on the first read
    whole, inside, rates = [], [], []
    for _ in range(repeats):
        started = time.perf_counter()
        tree = desktop.elements.tree()
        seconds = time.perf_counter() - started
        whole.append(seconds * 1000)
        inside.append(tree.elapsed_ms)
        rates.append(sum(1 for _ in tree.nodes()) / seconds)
    what = label.replace("_", " and ").replace("calc", "Calc").replace("chromium", "Chromium on a page")
    return [Measurement.of(f"apps_tree_{label}", "ms", whole, note=f"accessibility_tree() with {what} open"),
            Measurement.of(f"apps_tree_{label}_reader", "ms", inside, note="...of which the reader in the desktop"),
            Measurement.of(f"apps_tree_{label}_rate", "nodes/s", rates, note="...nodes read per second")]


def _image_size(client: docker.DockerClient, name: str) -> Measurement:
    size = client.images.get(images.resolve(name)).attrs["Size"] / 2**20
    return Measurement.of(f"image_size_{name}", "MiB", [size], note=images.resolve(name))


def up_times(name: str, image: str, size: tuple[int, int], repeats: int, note: str) -> Measurement:
    """``Desktop.up(image=image)`` until ready and its ``down``, ``repeats`` times: the row ``name``."""
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        with Desktop.up(size=size, image=image, timeout=UP_TIMEOUT):
            samples.append((time.perf_counter() - started) * 1000)
    return Measurement.of(name, "ms", samples, note=note)


def _launch(desktop: Desktop, launch: Launch, repeats: int) -> list[Measurement]:
    mapped, idle = [], []
    for _ in range(repeats):
        started = time.perf_counter()
        desktop.programs.run(list(launch.argv))
        window = desktop.windows.wait_for(launch.title, timeout=60)
        mapped.append((time.perf_counter() - started) * 1000)
        desktop.screen.settle(quiet=0.3, timeout=30)
        idle.append((time.perf_counter() - started) * 1000 - 300)  # the quiet period is not the program's
        _close(desktop, launch, window.title)
    return [Measurement.of(f"apps_{launch.name}_mapped", "ms", mapped, note=f"{launch.argv[0]} started until its window is shown"),
            Measurement.of(f"apps_{launch.name}_idle", "ms", idle, note="...until the screen holds still")]


def _close(desktop: Desktop, launch: Launch, title: str) -> None:
    process = "chromium" if launch.name == "chromium" else "soffice.bin"
    desktop.programs.run(["pkill", "-x", process], wait=True)
    deadline = time.monotonic() + 30
    while any(title in w.title for w in desktop.windows.list()) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # LibreOffice's lock and Chromium's profile are released after the window


def _memory_with_programs() -> Measurement:
    # A fresh desktop: one that has launched each program ten times holds their caches and
    # profiles in its tmpfs home, which is not what a task's desktop carries.
    with Desktop.up(size=DEFAULT_SIZE, image="apps", timeout=UP_TIMEOUT) as desktop:
        _open(desktop, LAUNCHES[0])
        _open(desktop, LAUNCHES[2])
        time.sleep(IDLE_SECONDS)
        return Measurement.of("apps_memory_calc_chromium", "MiB", [container_memory_mib(desktop.container)],
                              note=f"Chromium on a page and Calc open; {MEMORY_NOTE}")


def _open(desktop: Desktop, launch: Launch) -> None:
    desktop.programs.run(list(launch.argv))
    desktop.windows.wait_for(launch.title, timeout=60)

"""Figures of the osworld desktop for ``vdesk bench --osworld``: what an OSWorld task's machine
costs here, beside the reference's (a QEMU VM of 4 GiB and 4 vCPUs that needs KVM and waits up
to 300 s to boot, then sleeps 60 s after each reset).

Rows: the image's size, the desktop up to ready (its first frame, the taskbar, the accessibility
and session buses), its idle memory, and the three programs OSWorld's tasks use most — the
browser on a page, Writer and Thunderbird — started at once, until all three windows show, and
the memory with them open. The names start with ``osworld_``.
"""

from __future__ import annotations

import time

import docker

from vdesk import images
from vdesk.bench.apps import Launch, up_times
from vdesk.bench.machine import around
from vdesk.bench.speed import IDLE_SECONDS, MEMORY_NOTE, Measurement
from vdesk.desktop import Desktop
from vdesk.progress import Progress
from vdesk.usage import container_memory_mib

SIZE = (1920, 1080)  # the reference machine's screen
UP_TIMEOUT = 180.0
REFERENCE = "the reference's VM: 4 GiB, up to 300 s to boot"

PROGRAMS = (
    Launch("chrome", ("google-chrome", "data:text/html,<title>bench page</title><h1>A local page</h1>"), "Google Chrome"),
    Launch("writer", ("libreoffice", "--writer"), "LibreOffice Writer"),
    Launch("thunderbird", ("thunderbird",), "Thunderbird"),
)


def osworld_measurements(client: docker.DockerClient, repeats: int, progress: Progress = print) -> list[Measurement]:
    """Measure the osworld desktop (building its image first if needed); every row records the
    machine's load around it."""
    images.ensure(client, "osworld", progress=progress)
    size = client.images.get(images.resolve("osworld")).attrs["Size"] / 2**20
    results = [Measurement.of("image_size_osworld", "MiB", [size], note=images.resolve("osworld"))]
    progress(f"osworld desktop: up and down, {repeats} times")
    results += around(client, lambda: [up_times("osworld_up", "osworld", SIZE, repeats,
                                                 f"Desktop.up(image='osworld') until ready; {REFERENCE}")])
    progress("osworld desktop: idle, then the browser, Writer and Thunderbird at once")
    results += around(client, _with_programs)
    return results


def _with_programs() -> list[Measurement]:
    with Desktop.up(size=SIZE, image="osworld", timeout=UP_TIMEOUT) as desktop:
        time.sleep(IDLE_SECONDS)
        idle = Measurement.of("osworld_idle_memory", "MiB", [container_memory_mib(desktop.container) for _ in range(3)],
                              note=MEMORY_NOTE)
        started = time.perf_counter()
        for program in PROGRAMS:
            desktop.programs.run(list(program.argv))
        for program in PROGRAMS:
            desktop.windows.wait_for(program.title, timeout=120)
        shown = (time.perf_counter() - started) * 1000
        time.sleep(IDLE_SECONDS)
        memory = container_memory_mib(desktop.container)
    names = ", ".join(program.argv[0] for program in PROGRAMS)
    return [idle,
            Measurement.of("osworld_programs_shown", "ms", [shown], note=f"{names} started at once until all three windows show"),
            Measurement.of("osworld_memory_programs", "MiB", [memory], note=f"with {names} open; {MEMORY_NOTE}; {REFERENCE}")]

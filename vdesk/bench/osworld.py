"""Figures of the osworld desktops for ``vdesk bench --osworld``: what an OSWorld task's machine
costs here, the faithful GNOME one (``osworld``) beside the openbox one kept for speed
(``osworld-openbox``), and beside the reference's (a QEMU VM of 4 GiB and 4 vCPUs that needs KVM
and waits up to 300 s to boot, then sleeps 60 s after each reset).

Rows of each desktop, named after it (``osworld_…``, ``osworld_openbox_…``): the image's size;
the desktop up to ready; once its start has settled, its idle memory and the container's CPU at
rest (an idle desktop must not burn CPU); a step as a user takes it by default (a click with its
receipt and settle, then a fresh screenshot) and the container's CPU per step; the three programs
OSWorld's tasks use most — the browser on a page, Writer and Thunderbird — started at once, until
all three windows show, and the memory with them open; and a fork of the desktop with Chrome open
(``fork_osworld_chrome_…``, ``fork_osworld_openbox_chrome_…``): checkpointed once, each fork
until its first frame, against a fresh desktop brought to the same state.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import docker

from vdesk import images
from vdesk.bench.apps import Launch, up_times
from vdesk.bench.forks import State, checkpointed, fork_rows, fresh_setup
from vdesk.bench.machine import around
from vdesk.bench.speed import CPU_READINGS, IDLE_SECONDS, MEMORY_NOTE, Measurement, _full_step, _step_cpu, _timed
from vdesk.desktop import Desktop
from vdesk.errors import CheckpointError, CheckpointUnavailable
from vdesk.progress import Progress
from vdesk.usage import container_memory_mib, container_usage, idle_cores

SIZE = (1920, 1080)  # the reference machine's screen
UP_TIMEOUT = 180.0
REFERENCE = "the reference's VM: 4 GiB, up to 300 s to boot"
PAGE = "data:text/html,<title>bench page</title><h1>A local page</h1>"
# At rest: the screen held still this long, then this long again (a GNOME session's start goes on
# after its first still screen: Tracker indexes the home for some seconds), then readings this long.
START_QUIET = 1.0
START_TAIL = 10.0
IDLE_CPU_WINDOW = 5.0

PROGRAMS = (
    Launch("chrome", ("google-chrome", PAGE), "Google Chrome"),
    Launch("writer", ("libreoffice", "--writer"), "LibreOffice Writer"),
    Launch("thunderbird", ("thunderbird",), "Thunderbird"),
)


@dataclass(frozen=True)
class OsworldDesktop:
    """One osworld image measured: its name and the prefix of its rows."""

    image: str
    prefix: str
    what: str


DESKTOPS = (
    OsworldDesktop("osworld", "osworld", "GNOME Shell with Ubuntu's top bar and dock (the faithful one)"),
    OsworldDesktop("osworld-openbox", "osworld_openbox", "openbox and a taskbar (speed over fidelity)"),
)


def osworld_measurements(client: docker.DockerClient, repeats: int, progress: Progress = print) -> list[Measurement]:
    """Measure both osworld desktops (building their images first if needed); every row but the
    images' sizes records the machine's load around it. Where this engine's checkpoints fail, the
    fork rows are left out and a progress line says why: the other rows are kept."""
    results: list[Measurement] = []
    for desktop in DESKTOPS:
        results += _desktop_rows(client, desktop, repeats, progress)
    for desktop in DESKTOPS:
        try:
            results += _fork_rows(client, desktop, repeats, progress)
        except (CheckpointError, CheckpointUnavailable) as error:
            progress(f"{desktop.image} desktop: no fork rows: {error}")
    return results


def _desktop_rows(client: docker.DockerClient, desktop: OsworldDesktop, repeats: int, progress: Progress) -> list[Measurement]:
    images.ensure(client, desktop.image, progress=progress)
    name = images.resolve(desktop.image)
    size = client.images.get(name).attrs["Size"] / 2**20
    results = [Measurement.of(f"image_size_{desktop.prefix}", "MiB", [size], note=f"{name}: {desktop.what}")]
    progress(f"{desktop.image} desktop: up and down, {repeats} times")
    results += around(client, lambda: [up_times(f"{desktop.prefix}_up", desktop.image, SIZE, repeats,
                                                 f"Desktop.up(image={desktop.image!r}) until ready; {REFERENCE}")])
    progress(f"{desktop.image} desktop: at rest, a step, then the browser, Writer and Thunderbird at once")
    with Desktop.up(size=SIZE, image=desktop.image, timeout=UP_TIMEOUT) as running:
        results += around(client, lambda: _at_rest(running, desktop.prefix, repeats))
        results += around(client, lambda: _steps(running, desktop.prefix, repeats))
        results += around(client, lambda: _with_programs(running, desktop.prefix))
    return results


def _fork_rows(client: docker.DockerClient, desktop: OsworldDesktop, repeats: int, progress: Progress) -> list[Measurement]:
    """Chrome open on a page: reached on a fresh desktop, then checkpointed once and forked."""
    progress(f"{desktop.image} desktop: with Chrome open, checkpointed once and forked {repeats} times")
    state = State(f"{desktop.prefix}_chrome", desktop.image, ("google-chrome", PAGE), "bench page", SIZE)
    with checkpointed(client, state, 1) as (checkpoint_rows, checkpoint):
        results = checkpoint_rows + fork_rows(client, checkpoint, state, repeats)
    return fresh_setup(client, state, repeats) + results


def _at_rest(desktop: Desktop, prefix: str, repeats: int) -> list[Measurement]:
    """Idle memory and the container's CPU, once the desktop's start has settled."""
    desktop.screen.settle(quiet=START_QUIET, timeout=60)
    time.sleep(START_TAIL)
    memory = Measurement.of(f"{prefix}_idle_memory", "MiB", [container_memory_mib(desktop.container) for _ in range(3)],
                            note=MEMORY_NOTE)
    readings = []
    for _ in range(max(1, min(repeats, CPU_READINGS))):
        before = container_usage(desktop.container)
        time.sleep(IDLE_CPU_WINDOW)
        readings.append(100 * idle_cores(before, container_usage(desktop.container)))
    cpu = Measurement.of(f"{prefix}_idle_cpu", "% core", readings, note=(
        f"the container's CPU at rest (docker stats), readings of {IDLE_CPU_WINDOW:g} s from {START_TAIL:g} s after "
        f"the screen first held still for {START_QUIET:g} s; no program open, nobody looking"))
    return [memory, cpu]


def _steps(desktop: Desktop, prefix: str, repeats: int) -> list[Measurement]:
    """A step as a user takes it by default on the idle desktop, and the container's CPU per step."""
    step = Measurement.of(f"{prefix}_step", "ms", _timed(lambda: _full_step(desktop), repeats), note=(
        "a click on the bare desktop with settle=True and its receipt, then a fresh screenshot"))
    container_cpu, _ = _step_cpu(desktop, repeats)
    return [step, Measurement.of(f"{prefix}_step_container_cpu", "ms", container_cpu, note=(
        f"CPU time of the desktop's container per step ({repeats} steps a reading, docker stats)"))]


def _with_programs(desktop: Desktop, prefix: str) -> list[Measurement]:
    started = time.perf_counter()
    for program in PROGRAMS:
        desktop.programs.run(list(program.argv))
    for program in PROGRAMS:
        desktop.windows.wait_for(program.title, timeout=120)
    shown = (time.perf_counter() - started) * 1000
    time.sleep(IDLE_SECONDS)
    memory = container_memory_mib(desktop.container)
    names = ", ".join(program.argv[0] for program in PROGRAMS)
    return [Measurement.of(f"{prefix}_programs_shown", "ms", [shown], note=f"{names} started at once until all three windows show"),
            Measurement.of(f"{prefix}_memory_programs", "MiB", [memory], note=f"with {names} open; {MEMORY_NOTE}; {REFERENCE}")]

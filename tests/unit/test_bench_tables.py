"""The bench's tables read at 80 columns: no line longer, no header or cell broken mid-word."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from vdesk.bench.machine import Machine, Surroundings, busy_warning
from vdesk.bench.speed import BenchReport, Measurement, render
from vdesk.bench.fleet import FleetPoint, FleetReport, render as render_fleet

QUIET = Surroundings(Machine(0.2, []), Machine(0.3, []))
BUSY = Surroundings(Machine(7.9, ["other-1", "other-2"]), Machine(6.5, ["other-1"]))
NOTES = {
    "fresh_screenshot": "screenshot(fresh=True): the change since the last frame, one round trip on the held VNC connection",
    "parallel_memory_per_desktop": "container memory usage minus inactive file cache, as `docker stats` counts it",
    "naive_exec_action": "container.exec_run(xdotool …) per click, same xdotool arguments",
    "busy_idle_cpu": "this process's CPU, no frame asked for: the controller's cost of a desktop nobody looks at",
    "parallel_all_ready": "until the last of 50 desktops started at once was ready",
}


def printed(renderable: object, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The lines ``renderable`` prints in a terminal of COLUMNS=80."""
    monkeypatch.setenv("COLUMNS", "80")
    console = Console(file=io.StringIO(), record=True)
    assert console.width == 80
    console.print(renderable)
    return console.export_text().splitlines()


def assert_whole(lines: list[str], texts: list[str]) -> None:
    assert max(len(line) for line in lines) <= 80, "\n".join(lines)
    for text in texts:
        for word in text.split():
            assert any(word in line for line in lines), f"{word!r} is broken or missing:\n" + "\n".join(lines)


def bench_report(machine: Surroundings) -> BenchReport:
    measurements = [Measurement.of(name, unit, [value], NOTES.get(name, ""))
                    for name, unit, value in (("fresh_screenshot", "ms", 1.26), ("parallel_memory_per_desktop", "MiB", 41.0),
                                              ("naive_exec_action", "ms", 61.6), ("busy_idle_cpu", "% core", 0.18),
                                              ("parallel_all_ready", "ms", 33312.5), ("parallel_up", "count", 50))]
    measurements = [Measurement(**{**m.__dict__, "machine": machine}) for m in measurements]
    return BenchReport(measurements, {"naive_vnc_screenshot/fresh_screenshot": 71.3}, {"cpus": "2", "memory": "7.8 GiB",
                                                                          "docker": "27.5.1", "repeats": "20"})


def test_the_bench_table_fits_80_columns_with_every_word_whole(monkeypatch):
    report = bench_report(BUSY)
    lines = printed(render(report), monkeypatch)
    cells = [f"{m.name} {m.note}" for m in report.measurements] + ["measurement median p90 load 33312.5 ms 0.18 % 7.9-6.5"]
    assert_whole(lines, cells + [name.replace("/", " / ") for name in report.ratios])


def test_a_busy_machine_is_warned_of_with_how_busy_it_was(monkeypatch):
    text = "\n".join(printed(render(bench_report(BUSY)), monkeypatch))
    assert "busy during 6 of 6 rows" in " ".join(text.split()) and "7.9 on 2 cores" in " ".join(text.split())
    assert busy_warning([QUIET, None], cpus=2) is None
    assert "warning" not in "\n".join(printed(render(bench_report(QUIET)), monkeypatch))


def fleet_point(way: str, desktops: int, machine: Surroundings) -> FleetPoint:
    return FleetPoint(way, desktops, desktops, 0.6 * desktops, 1 / 0.6, 40 * desktops, 8.0, 5.0 * desktops, 180.0,
                      1234.0, 38.5, 44.1, 12.0, 0.011, [], machine)


def test_the_fleet_tables_fit_80_columns_with_every_word_whole(monkeypatch):
    points = [fleet_point(way, count, BUSY) for way in ("local", "ray") for count in (1, 2, 4, 8, 16, 32, 64)]
    report = FleetReport(points, {"cpus": "2", "memory_gib": "7.8", "docker": "27.5.1", "screen": "1280x800",
                                  "step_seconds": "8", "load_at_start": "7.90", "load_at_end": "6.50"})
    lines = printed(render_fleet(report, 80), monkeypatch)
    assert_whole(lines, ["came up", "idle CPU each (%)", "load, start-end", "other containers", "64/64", "7.9-6.5",
                         "1234", "32 CPU 128 GiB", "0.5/s", "busy during 14 of 14 rows"])
    assert all(any(f"{count}/{count}" in line for line in lines) for count in (1, 2, 4, 8, 16, 32, 64))
    assert not any("…" in line for line in lines)  # nothing cut short either

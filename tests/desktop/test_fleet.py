"""The capacity figures are measured on real desktops, drawn, and leave no desktop behind.

A quick run (1 and 2 desktops, locally, one second of steps each). Timings are reported, never
asserted: this checks that every figure is there and plausible in kind, and that the PNG is written.
"""

from __future__ import annotations

import json
import os

import pytest
from PIL import Image
from rich.console import Console

from tests.desktop.helpers import own_desktops
from vdesk.errors import InvalidArgument
from vdesk.bench.fleet import FleetReport, NodeEstimate, parse_counts, plot, render, run_fleet

from tests.engine import CLIENT  # noqa: E402  (made on first use, not at import)


@pytest.fixture(scope="module")
def report() -> FleetReport:
    before = own_desktops(CLIENT)
    lines: list[str] = []
    result = run_fleet(counts=(2, 1), seconds=1.0, progress=lines.append)
    assert not own_desktops(CLIENT) - before, "the fleet run left desktops behind"
    assert lines[-1] == "done"
    return result


def test_each_count_has_its_figures(report):
    assert [(p.way, p.desktops) for p in report.points] == [("local", 1), ("local", 2)]
    for point in report.points:
        assert point.came_up == point.desktops and not point.errors, point.errors
        assert point.up_seconds > 0 and point.ups_per_second > 0
        assert point.steps >= point.desktops and point.steps_per_second > 0 and point.step_seconds >= 1.0
        assert 0 < point.step_ms_median <= point.step_ms_p90
        assert point.memory_idle_mib > 0 and point.memory_busy_mib > 0 and 0 <= point.host_mib < 500  # a share of this process, not a whole one
        assert 0 < point.idle_cores < 2  # a share of the machine's cores, not a count of desktops
        assert point.steps_per_desktop == pytest.approx(point.steps_per_second / point.desktops)
    assert report.environment["cpus"] == str(os.cpu_count())


def test_the_estimate_is_limited_by_memory_or_cpu(report):
    estimate = report.estimate("local")
    assert estimate.memory_mib > 0 and estimate.step_core_seconds > 0 and estimate.idle_cores > 0
    count, limit = estimate.holds(cores=8, memory_gib=32, step_rate=0.5)
    assert count > 0 and limit in ("memory", "cpu")
    assert estimate.holds(cores=8, memory_gib=64, step_rate=0.5)[0] >= count  # more memory never holds fewer


def test_holds_names_the_tighter_limit():
    estimate = NodeEstimate("local", memory_mib=100.0, idle_cores=0.0, step_core_seconds=0.1)
    assert estimate.holds(cores=1, memory_gib=11, step_rate=1.0) == (10, "cpu")       # 10 by cpu, 102 by memory
    assert estimate.holds(cores=64, memory_gib=11, step_rate=1.0) == (102, "memory")  # 640 by cpu
    polling = NodeEstimate("local", memory_mib=100.0, idle_cores=0.1, step_core_seconds=0.1)
    assert polling.holds(cores=1, memory_gib=11, step_rate=1.0) == (5, "cpu")  # 0.1 idle + 0.1 stepping each


def test_the_table_json_and_plot_carry_the_report(report, tmp_path):
    console = Console(record=True, width=80)
    console.print(render(report, console.width))
    text = console.export_text()
    assert "vdesk bench --fleet" in text and "desktops a node holds" in text
    data = json.loads(report.to_json())
    assert len(data["points"]) == 2 and "local" in data["estimates"]
    for point in data["points"]:  # the machine around each row: load and other containers, at start and end
        assert point["machine"]["start"]["load"] >= 0 and isinstance(point["machine"]["end"]["others"], list)
    path = plot(report, tmp_path / "images" / "fleet.png")
    with Image.open(path) as image:
        assert image.format == "PNG" and image.width > 600 and image.height > 300
        colours = {colour for _, colour in image.convert("RGB").getcolors(maxcolors=1 << 16) or []}
        assert (31, 119, 180) in colours  # the local line was drawn


def test_counts_are_parsed_or_refused():
    assert parse_counts("1,2, 4,8") == [1, 2, 4, 8]
    for bad in ("", "1,x", "0,2", "1,1000"):
        with pytest.raises(InvalidArgument):
            parse_counts(bad)

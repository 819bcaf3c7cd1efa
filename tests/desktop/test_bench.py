"""The bench measures everything it promises on real desktops and leaves none behind.

Timings are reported, never asserted: this only checks that each measurement exists, that
typed text arrived exactly, and that the naive baselines were compared.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.desktop.helpers import own_desktops
from vdesk.bench.speed import MEMORY_NOTE, BenchReport, render, run_bench

MEASUREMENTS = {
    "fresh_screenshot": "ms", "unchanged_screenshot": "ms", "png_encode": "ms", "jpeg_encode": "ms",
    "click": "ms", "key_press": "ms", "type_100": "ms", "type_1000": "ms", "full_step": "ms",
    "click_receipt": "ms", "click_settle": "ms", "receipt_compare": "ms", "ocr_full_frame": "ms",
    "busy_click": "ms", "busy_click_receipt": "ms", "busy_click_settle": "ms",
    "up": "ms", "down": "ms", "idle_memory": "MiB",
    "parallel_up": "count", "parallel_all_ready": "ms", "parallel_memory_total": "MiB",
    "parallel_memory_per_desktop": "MiB",
    "naive_exec_action": "ms", "naive_vnc_screenshot": "ms", "naive_exec_screenshot": "ms",
    "static_idle_cpu": "% core", "busy_idle_cpu": "% core", "busy_fresh_screenshot": "ms", "record_cpu": "% core",
    "step_container_cpu": "ms", "step_controller_cpu": "ms",
    "channel_output": "MB/s", "channel_in_container": "MB/s", "channel_host_parse": "MB/s",
    "exec_stream": "MB/s", "file_write": "MB/s", "file_read": "MB/s",
}
CPU_ROWS = {"static_idle_cpu", "busy_idle_cpu"}  # nobody looks: a reading may well be 0
RATIOS = ("naive_exec_action/click", "naive_vnc_screenshot/fresh_screenshot",
          "naive_exec_screenshot/fresh_screenshot")
from tests.engine import CLIENT  # noqa: E402  (made on first use, not at import)


@pytest.fixture(scope="module")
def report() -> BenchReport:
    before = own_desktops(CLIENT)  # a shared desktop of this test run may be up already: compare, not expect none
    lines: list[str] = []
    result = run_bench(baseline=True, repeats=3, desktops=2, progress=lines.append)
    leftover = own_desktops(CLIENT) - before
    assert not leftover, f"the bench left desktops behind: {sorted(leftover)}"
    assert lines and lines[-1] == "done"
    # What it will do, said before it does anything: the samples, the desktops, about how long.
    assert lines[0].startswith("bench: 3 samples of each measurement") and " then 2 up at once" in lines[0], lines[0]
    assert re.search(r"about \d+ (s|min) on an idle", lines[0]), lines[0]
    return result


def test_every_measurement_is_there_with_positive_samples(report):
    by_name = {m.name: m for m in report.measurements}
    assert set(MEASUREMENTS) <= set(by_name), f"missing: {set(MEASUREMENTS) - set(by_name)}"
    for name, unit in MEASUREMENTS.items():
        measurement = by_name[name]
        assert measurement.unit == unit, name
        assert measurement.samples and all(s > 0 or (name in CPU_ROWS and s >= 0) for s in measurement.samples), (
            name, measurement.samples)
        assert min(measurement.samples) <= measurement.median <= measurement.p90 <= max(measurement.samples), name


def test_timed_operations_have_the_requested_number_of_samples(report):
    for name in ("fresh_screenshot", "click", "type_1000", "full_step", "up", "down", "naive_exec_action",
                 "busy_click_receipt", "busy_click_settle"):
        assert len(report.get(name).samples) == 3, name


def test_settle_on_the_busy_screen_says_how_many_samples_never_settled(report):
    assert re.search(r"\d of 3 never settled", report.get("busy_click_settle").note)


def test_both_desktops_came_up_at_once(report):
    assert report.get("parallel_up").samples == [2.0]
    assert len(report.get("parallel_memory_per_desktop").samples) == 2


def test_typed_text_arrived_exactly(report):
    assert report.checks == {"type_100_exact": True, "type_1000_exact": True}
    assert "exact: 3/3 matched" in report.get("type_1000").note


def test_baseline_ratios_are_reported(report):
    assert set(RATIOS) <= set(report.ratios)
    assert all(ratio > 0 for ratio in report.ratios.values())


def test_json_and_table_carry_the_report(report):
    data = json.loads(report.to_json())
    assert {m["name"] for m in data["measurements"]} >= set(MEASUREMENTS)
    assert data["checks"]["type_100_exact"] is True and data["checks"]["type_1000_exact"] is True
    assert set(RATIOS) <= set(data["ratios"]) and data["environment"]["repeats"] == "3"
    assert all(m["machine"]["start"]["load"] >= 0 and isinstance(m["machine"]["end"]["others"], list)
               for m in data["measurements"])


def test_the_table_carries_every_row_and_reads_at_80_columns(report, monkeypatch):
    from tests.unit.test_bench_tables import assert_whole, printed

    lines = printed(render(report), monkeypatch)
    assert_whole(lines, [f"{m.name} {m.note}" for m in report.measurements]
                 + [name.replace("/", " / ") for name in report.ratios])


def test_the_table_in_a_file_wraps_nothing():
    """Not on a terminal (a file, a pipe), no width is made up: each note is one line under its
    name (at 80 columns the table wrapped to about 150 lines)."""
    vdesk = str(Path(sys.executable).parent / "vdesk")
    environment = {key: value for key, value in os.environ.items() if key != "COLUMNS"}
    ran = subprocess.run([vdesk, "bench", "--repeats", "1", "--desktops", "1"], capture_output=True, text=True,
                         timeout=900, env=environment)
    assert ran.returncode == 0, ran.stderr
    assert any(MEMORY_NOTE in line for line in ran.stdout.splitlines()), ran.stdout  # the longest note, whole
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in ran.stdout.splitlines() if line.startswith("│")]
    assert len([row for row in rows if row[1]]) > 20  # the measurements, a line each
    assert all(row[1] or previous[1] for previous, row in zip(rows, rows[1:])), ran.stdout  # a note: one line

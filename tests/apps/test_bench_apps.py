"""`vdesk bench --apps` measures every apps row it promises on real apps desktops, records the
machine's load around each, and leaves no desktop behind. Timings are reported, never asserted."""

from __future__ import annotations

import pytest

from tests.desktop.helpers import own_desktops
from vdesk.bench.apps import apps_measurements

pytestmark = pytest.mark.desktop
from tests.engine import CLIENT  # noqa: E402  (made on first use, not at import)
ROWS = {
    "image_size_lean": "MiB", "image_size_apps": "MiB", "apps_up": "ms", "apps_idle_memory": "MiB",
    "apps_chromium_mapped": "ms", "apps_chromium_idle": "ms", "apps_writer_mapped": "ms", "apps_writer_idle": "ms",
    "apps_calc_mapped": "ms", "apps_calc_idle": "ms", "apps_fresh_screenshot": "ms", "apps_click": "ms",
    "apps_memory_calc_chromium": "MiB", "apps_parallel_up": "count", "apps_parallel_all_ready": "ms",
    "apps_parallel_memory_total": "MiB", "apps_parallel_memory_per_desktop": "MiB", "apps_marks": "ms",
    **{f"apps_tree_{apps}{part}": unit for apps in ("calc", "calc_chromium", "chromium")
       for part, unit in (("", "ms"), ("_reader", "ms"), ("_rate", "nodes/s"))},
}


def test_every_apps_row_is_measured_with_its_load_and_no_desktop_is_left():
    before = own_desktops(CLIENT)
    lines: list[str] = []
    rows = {row.name: row for row in apps_measurements(CLIENT, repeats=1, desktops=2, progress=lines.append)}
    assert not own_desktops(CLIENT) - before, "the apps bench left desktops behind"
    assert set(ROWS) <= set(rows), f"missing: {set(ROWS) - set(rows)}"
    for name, unit in ROWS.items():
        assert rows[name].unit == unit and rows[name].samples and min(rows[name].samples) > 0, (name, rows[name])
    assert rows["apps_parallel_up"].samples == [2.0], rows["apps_parallel_up"].note
    assert len(rows["apps_parallel_memory_per_desktop"].samples) == 2
    measured = [row for name, row in rows.items() if not name.startswith("image_size")]
    assert all(row.machine is not None for row in measured), [r.name for r in measured if r.machine is None]
    assert "apps desktop: 2 up at once" in lines

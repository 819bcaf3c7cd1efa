"""`vdesk bench --osworld` measures every osworld row it promises on real osworld desktops (the
browser, Writer and Thunderbird shown at once), records the machine's load around each, and
leaves no desktop behind. Timings are reported, never asserted."""

from __future__ import annotations

import pytest

from tests.desktop.helpers import own_desktops
from vdesk.bench.osworld import osworld_measurements

pytestmark = pytest.mark.desktop
from tests.engine import CLIENT  # noqa: E402  (made on first use, not at import)
ROWS = {"image_size_osworld": "MiB", "osworld_up": "ms", "osworld_idle_memory": "MiB",
        "osworld_programs_shown": "ms", "osworld_memory_programs": "MiB"}


def test_every_osworld_row_is_measured_with_its_load_and_no_desktop_is_left():
    before = own_desktops(CLIENT)
    lines: list[str] = []
    rows = {row.name: row for row in osworld_measurements(CLIENT, repeats=1, progress=lines.append)}
    assert not own_desktops(CLIENT) - before, "the osworld bench left desktops behind"
    assert set(rows) == set(ROWS)
    for name, unit in ROWS.items():
        assert rows[name].unit == unit and rows[name].samples and min(rows[name].samples) > 0, (name, rows[name])
    # three programs' memory on top of an idle desktop's: they were open when it was read
    assert rows["osworld_memory_programs"].samples[0] > rows["osworld_idle_memory"].samples[0] + 100
    assert all(row.machine is not None for name, row in rows.items() if name != "image_size_osworld")
    assert "osworld desktop: up and down, 1 times" in lines

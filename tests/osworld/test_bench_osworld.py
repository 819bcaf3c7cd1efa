"""`vdesk bench --osworld` measures every osworld row it promises on real osworld desktops, the
GNOME one and the openbox one (up, at rest, a step, the browser, Writer and Thunderbird shown at
once, a fork with Chrome open), records the machine's load around each, and leaves no desktop
or checkpoint behind. Timings are reported, never asserted."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import pytest

from tests.desktop.helpers import own_desktops
from vdesk import forks
from vdesk.bench.osworld import osworld_measurements
from vdesk.bench.speed import Measurement

pytestmark = pytest.mark.desktop
from tests.engine import CLIENT  # noqa: E402  (made on first use, not at import)
PREFIXES = ("osworld", "osworld_openbox")
DESKTOP_ROWS = {"image_size_{}": "MiB", "{}_up": "ms", "{}_idle_memory": "MiB", "{}_idle_cpu": "% core", "{}_step": "ms",
                "{}_step_container_cpu": "ms", "{}_programs_shown": "ms", "{}_memory_programs": "MiB"}
FORK_ROWS = {"fork_{}_chrome_fresh_setup": "ms", "fork_{}_chrome_checkpoint": "ms", "fork_{}_chrome_checkpoint_size": "MiB",
             "fork_{}_chrome_first_frame": "ms", "fork_{}_chrome_memory": "MiB"}


@dataclass(frozen=True)
class Run:
    rows: dict[str, Measurement]
    lines: list[str]
    left_desktops: set[str]
    left_checkpoints: list[str]


@pytest.fixture(scope="module")
def run() -> Run:
    """One run of the osworld bench, one sample a row, and what it left behind."""
    before, started = own_desktops(CLIENT), int(time.time())
    lines: list[str] = []
    rows = {row.name: row for row in osworld_measurements(CLIENT, repeats=1, progress=lines.append)}
    made = _desktops_made_since(started)
    assert any(name.startswith("vdesk-") for name in made), made
    return Run(rows, lines, own_desktops(CLIENT) - before,
               [c.name for c in forks.list_checkpoints(CLIENT) if c.source in made])


def test_every_row_of_both_osworld_desktops_is_measured_with_its_load_and_nothing_is_left(run: Run):
    assert not run.left_desktops, "the osworld bench left desktops behind"
    assert not run.left_checkpoints, f"the osworld bench left checkpoints behind: {run.left_checkpoints}"
    rows = _expected(DESKTOP_ROWS)
    assert not set(rows) - set(run.rows), set(rows) - set(run.rows)
    _sane(run, rows)
    for prefix in PREFIXES:
        # three programs' memory on top of an idle desktop's: they were open when it was read
        assert run.rows[f"{prefix}_memory_programs"].samples[0] > run.rows[f"{prefix}_idle_memory"].samples[0] + 100
        assert run.rows[f"{prefix}_idle_cpu"].samples[0] <= 100 * (os.cpu_count() or 1), "more than the machine's cores"
        assert f"{prefix.replace('_', '-')} desktop: up and down, 1 times" in run.lines


def test_a_fork_of_each_osworld_desktop_with_chrome_open_is_measured(run: Run):
    rows = _expected(FORK_ROWS)
    missing = set(rows) - set(run.rows)
    assert not missing, [line for line in run.lines if "no fork rows" in line] or missing
    _sane(run, rows)
    for prefix in PREFIXES:
        # a fork with Chrome open holds Chrome: more than the idle desktop the bench measured
        assert run.rows[f"fork_{prefix}_chrome_memory"].samples[0] > run.rows[f"{prefix}_idle_memory"].samples[0]


def _expected(rows: dict[str, str]) -> dict[str, str]:
    return {row.format(prefix): unit for prefix in PREFIXES for row, unit in rows.items()}


def _sane(run: Run, rows: dict[str, str]) -> None:
    """Each row in its unit, with samples, positive (CPU at rest may read 0: nothing ran), and
    but for the images' sizes with the machine's load around it."""
    for name, unit in rows.items():
        row = run.rows[name]
        assert row.unit == unit and row.samples, (name, row)
        assert min(row.samples) >= 0 if unit == "% core" else min(row.samples) > 0, (name, row)
        assert row.machine is not None or name.startswith("image_size"), name


def _desktops_made_since(started: int) -> set[str]:
    """The containers this process created since ``started`` (the engine's events; other test
    runs make and remove their own desktops and checkpoints meanwhile)."""
    events = CLIENT.events(since=started, until=int(time.time()) + 1, decode=True,
                           filters={"type": "container", "event": "create"})
    attributes = [event["Actor"]["Attributes"] for event in events]
    return {a["name"] for a in attributes if a.get("vdesk.owner", "").endswith(f":{os.getpid()}")}

"""The bench warns about other work only: its own processes, desktops and the engine are left out."""

from __future__ import annotations

import os
from pathlib import Path

from vdesk.bench.machine import (CpuTimes, Machine, Surroundings, busy_warning, container_cpu_seconds,
                                 engine_seconds, machine_busy_seconds)

TICK = os.sysconf("SC_CLK_TCK")


def row(load: float, seconds: float, machine: float, own: float, engine: float = 0.0,
        others: tuple[str, ...] = ()) -> Surroundings:
    """A row of ``seconds`` in which the machine spent ``machine`` CPU seconds, the bench ``own``."""
    return Surroundings(Machine(1.0, list(others), CpuTimes(100.0, 1000.0, 50.0, 20.0)),
                        Machine(load, list(others), CpuTimes(100.0 + seconds, 1000.0 + machine, 50.0 + own,
                                                             20.0 + engine)))


def test_the_bench_alone_is_not_warned_of_however_high_the_load():
    # 32 desktops stepping: both cores busy with the bench's own work, a load of 28.
    own_only = row(load=28.0, seconds=10, machine=19.6, own=17.0, engine=2.5)
    assert not own_only.busy(cpus=2)
    assert own_only.other_cores() is not None and own_only.other_cores() < 0.02
    assert busy_warning([own_only], cpus=2) is None


def test_other_work_is_warned_of_with_how_many_cores_it_took():
    beside = row(load=9.0, seconds=10, machine=18.0, own=12.0, engine=1.0, others=("someone-else",))
    assert beside.busy(cpus=2)
    assert abs(beside.other_cores() - 0.5) < 1e-9 and abs(beside.own_cores() - 1.2) < 1e-9
    text = busy_warning([beside, row(1.0, 10, 3.0, 3.0)], cpus=2)
    assert text is not None
    assert "busy during 1 of 2 rows" in text
    assert "other work used up to 0.50 of 2 cores (25 %" in text
    assert "own processes and desktops (1.20 cores" in text
    assert "up to 1 other containers" in text
    assert busy_warning([beside], cpus=2, short=True) == "measured beside other work: other work used up to " \
                                                         "0.50 of 2 cores (25 %, above 10 %)"


def test_a_little_other_work_is_not_busy():
    assert not row(load=3.0, seconds=10, machine=11.0, own=10.0).busy(cpus=2)  # 0.1 of 2 cores


def test_without_cpu_readings_the_load_decides():
    quiet = Surroundings(Machine(0.5, []), Machine(1.9, []))
    busy = Surroundings(Machine(4.5, []), Machine(3.0, []))
    assert not quiet.busy(cpus=2) and busy.busy(cpus=2)
    assert quiet.other_cores() is None
    text = busy_warning([quiet, busy], cpus=2)
    assert text is not None and "load average up to 4.5 on 2 cores (2.2 per core" in text
    assert "could not be read" in text


def test_machine_busy_time_is_all_but_idle_and_iowait(tmp_path: Path):
    stat = tmp_path / "stat"
    stat.write_text(f"cpu  {TICK * 3} 0 {TICK} {TICK * 50} {TICK * 7} 0 {TICK} 0 0 0\ncpu0 1 2 3 4\n")
    assert machine_busy_seconds(stat) == 5.0
    assert machine_busy_seconds(tmp_path / "missing") is None


def test_a_containers_cpu_is_read_from_its_cgroup_v1_or_v2(tmp_path: Path):
    v1 = tmp_path / "v1/cpuacct/docker/abc"
    v1.mkdir(parents=True)
    (v1 / "cpuacct.usage").write_text("2500000000\n")
    assert container_cpu_seconds("abc", tmp_path / "v1") == 2.5
    v2 = tmp_path / "v2/system.slice/docker-abc.scope"
    v2.mkdir(parents=True)
    (v2 / "cpu.stat").write_text("usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n")
    assert container_cpu_seconds("abc", tmp_path / "v2") == 1.5
    assert container_cpu_seconds("other", tmp_path / "v1") is None


def test_the_engine_counts_its_daemons_and_the_runc_children_they_waited_for(tmp_path: Path):
    def process(pid: int, name: str, utime: int, stime: int, cutime: int, cstime: int) -> None:
        (tmp_path / str(pid)).mkdir()
        fields = ["S", "1", "1", "1", "0", "-1", "0", "0", "0", "0", "0", str(utime), str(stime), str(cutime),
                  str(cstime), "20", "0"]
        (tmp_path / str(pid) / "stat").write_text(f"{pid} ({name}) {' '.join(fields)}\n")

    process(10, "dockerd", TICK, TICK, 0, 0)
    process(11, "containerd-shim", 0, 0, TICK * 2, 0)
    process(12, "python3", TICK * 40, 0, 0, 0)  # not the engine
    (tmp_path / "self").mkdir()
    assert engine_seconds(tmp_path) == 4.0


def test_engine_time_that_falls_is_taken_as_none():
    # A shim exited during the row: the engine's total fell, which must not count as other work.
    assert abs(row(load=2.0, seconds=10, machine=10.0, own=9.0, engine=-5.0).other_cores() - 0.1) < 1e-9


def test_the_processor_is_named_with_its_clock(tmp_path):
    from vdesk.bench.machine import cpu_model

    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: AMD EPYC\ncpu MHz\t\t: 2445.422\n\nprocessor\t: 1\nmodel name\t: AMD EPYC\n")
    assert cpu_model(info) == "AMD EPYC at 2445 MHz"
    info.write_text("processor\t: 0\nModel\t: Raspberry Pi 4\n")
    assert cpu_model(info) == "Raspberry Pi 4"
    assert cpu_model(tmp_path / "missing") == "?"

"""How the wait for what a setup started tells programs apart and judges them settled (pure logic
of vdesk.started: its looks are given, not taken)."""

from __future__ import annotations

from vdesk.started import INIT, QUIET, WINDOW_PATIENCE, WINDOWLESS_QUIET, Program, Row, _programs

SESSION_BUS = 27  # a desktop service that ran before the setup


def row(pid: int, parent: int, name: str, cpu: int = 0, timer: bool = False, wanted: int | None = None) -> Row:
    """A process with one thread that ran ``cpu`` ns and wanted ``wanted`` (default: as much)."""
    return (pid, parent, name, timer, cpu, [(pid, cpu if wanted is None else wanted)])


def test_a_launched_program_is_one_with_all_it_started_and_services_count_only_with_a_window() -> None:
    rows = [row(100, INIT, "sh"), row(101, 100, "sleep"),                 # launched: sh -c "sleep 2; …"
            row(200, INIT, "xterm"), row(201, 200, "bash"),               # launched, with its shell
            row(300, SESSION_BUS, "tracker-extract"),                     # a service's, windowless
            row(400, SESSION_BUS, "gnome-terminal-"), row(401, 400, "bash"),  # a service's, with a window
            row(50, SESSION_BUS, "nautilus")]                             # ran before; shows a new window
    programs = _programs(rows, older={50}, shown={200, 400, 50})
    assert {key: ([r[0] for r in members], shown) for key, (members, shown) in programs.items()} == {
        100: ([100, 101], []), 200: ([200, 201], [200]), 400: ([400, 401], [400]), 50: ([50], [50])}


def looks(program: Program, *seen: tuple[float, list[Row], list[int]]) -> list[bool]:
    settled = []
    for when, rows, shown in seen:
        program.look(when, rows, shown)
        settled.append(program.settled)
    return settled


def test_a_program_with_a_window_settles_once_at_rest_for_the_quiet_period() -> None:
    at_rest = [row(1, INIT, "xterm", cpu=5_000_000)]
    assert looks(Program("xterm"), (0.0, at_rest, [1]), (QUIET / 2, at_rest, [1]), (QUIET, at_rest, [1])) == [
        False, False, True]


def test_a_busy_program_or_one_whose_processes_change_is_not_at_rest() -> None:
    program = Program("soffice.bin")
    busy = [row(1, INIT, "soffice.bin", cpu=int(0.5e9 * n)) for n in range(4)]  # half a CPU
    assert looks(program, *((QUIET * n, [busy[n]], [1]) for n in range(4))) == [False] * 4
    grown = [busy[3], row(2, 1, "soffice.bin")]
    assert looks(program, (3.5 * QUIET, grown, [1]), (4 * QUIET, grown, [1]), (5 * QUIET, grown, [1])) == [
        False, False, True]


def test_a_program_starved_while_it_works_is_not_at_rest() -> None:
    """It runs 1 % of a CPU, but its thread waits to run all the time."""
    starved = [[row(1, INIT, "soffice.bin", cpu=int(0.01e9 * t), wanted=int(1e9 * t))] for t in range(4)]
    assert looks(Program("soffice.bin"), *((float(t), rows, [1]) for t, rows in enumerate(starved))) == [False] * 4


def test_a_windowless_program_is_a_daemon_only_when_at_rest_and_not_waiting_on_a_timer() -> None:
    sleeping = [row(1, INIT, "sh"), row(2, 1, "sleep", timer=True)]
    assert not any(looks(Program("sh"), *((t, sleeping, []) for t in (0.0, 2 * WINDOWLESS_QUIET, 4 * WINDOWLESS_QUIET))))
    daemon = [row(1, INIT, "socat", cpu=1000)]
    assert looks(Program("socat"), (0.0, daemon, []), (QUIET, daemon, []), (WINDOWLESS_QUIET, daemon, [])) == [
        False, False, True]


def test_a_window_that_stays_busy_is_taken_as_it_is_past_the_patience_and_noted() -> None:
    program = Program("vlc")
    playing = [[row(1, INIT, "vlc", cpu=int(0.2e9 * t))] for t in range(int(WINDOW_PATIENCE) + 2)]
    settled = looks(program, *((float(t), rows, [1]) for t, rows in enumerate(playing)))
    assert settled.index(True) == int(WINDOW_PATIENCE)
    assert program.note == f"vlc was still busy {WINDOW_PATIENCE:g} s after its window showed"

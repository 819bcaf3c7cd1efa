"""What a setup started: waiting until the programs it launched show their windows and settle.

OSWorld's runner waits 60 s after a task's setup, so its agent's first frame shows every program
the setup launched, loaded and still. vdesk waits for that itself, not for a fixed time::

    before = snapshot(desktop)                 # what runs before the setup
    ...                                        # the setup's steps
    started = wait_started(desktop, before)    # its programs up and at rest (or the bound passed)

What a setup started are the processes that run now and did not before, as *programs*: a
process the desktop's init adopted (a launched program, a command's background job) with all
it started; a new process a desktop service started, when it shows a window (a terminal its
server opened); and a program that ran before and shows a new window (a launcher that handed
its file to a running instance). vdesk's own processes (the command channel, tunnels, the
probe) are left out. A program has settled once

- it ended;
- it shows a window (a viewable top-level window that is no splash screen, found by its
  ``_NET_WM_PID``) and has been at rest for :data:`QUIET` seconds, or, still busy
  :data:`WINDOW_PATIENCE` seconds after its window showed (a video playing), noted so;
- it shows none and has been at rest for :data:`WINDOWLESS_QUIET` seconds: a daemon, such as
  the ``socat`` OSWorld's Chrome tasks start. A program waiting for a timer (``sleep 2;
  program``) is not at rest.

At rest, over the quiet period: its processes together ran under :data:`~vdesk.idle.IDLE_SHARE`
of a CPU, none of their threads ran or waited to run for :data:`STARVED_SHARE` of it, none
slept on a timer, and none came or went. Unlike :func:`vdesk.idle.wait_idle`, the time threads
waited to run is not summed: with several desktops on two cores a Chrome at rest ran 1–2 % of a
CPU while its many threads together waited 5–60 % on the run queue (measured at a load of 32);
a program starved while it loads has one thread that wants the CPU all along (Chrome starting:
its first thread ran or waited 80–90 % of the time while the program ran 6 %). What has not
settled within the bound is named in the result's notes and the caller goes on: the agent gets
the screen as it is.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from pydantic import TypeAdapter, ValidationError

from vdesk.desktop import Desktop
from vdesk.errors import DesktopError
from vdesk.idle import IDLE_SHARE

START_TIMEOUT = 60.0      # the most a setup's programs are waited for: what OSWorld's runner always waits
QUIET = 1.0               # seconds a program with a window must be at rest
WINDOWLESS_QUIET = 2.0    # ... and one without a window, before it counts as a daemon
WINDOW_PATIENCE = 20.0    # seconds a shown program may stay busy before it is taken as it is
STARVED_SHARE = 0.5       # of the quiet period: a thread that ran or waited to run this long is working
POLL = 0.25               # seconds between two looks
PROBE_TIMEOUT = 20.0      # for one look, on a loaded machine
PROBE_LIMIT = 4 << 20     # bytes of a look's answer (a desktop runs a few hundred processes)
INIT = 1                  # the container's init, which adopts what the setup starts

# Runs in the desktop. With no argument: the processes running now, as [pid, start time]. Else
# argv[1] is such a list (what ran before) and argv[2] a list of pids to report anyway: each
# process not in the first (or in the second) as [pid, parent, name, timer, ran, wanted], leaving
# out the probe's own session and sessions led by a process from outside the container
# (``docker exec``: vdesk's command channel and tunnels). ``timer``: it sleeps on a timer
# (nanosleep); ``ran``: ns its threads ran; ``wanted``: [thread id, ns it ran or waited to run]
# for each thread (schedstat).
PROBE = r"""
import json, os, sys
def read(path):
    try:
        with open(path) as file:
            return file.read()
    except OSError:  # it ended meanwhile
        return ""
def fields(pid):
    stat = read(f"/proc/{pid}/stat")
    return (stat.partition("(")[2].rpartition(")")[0], stat.rpartition(")")[2].split()) if stat else ("", [])
before = {tuple(pair) for pair in json.loads(sys.argv[1])} if len(sys.argv) > 1 else None
watched = set(json.loads(sys.argv[2])) if len(sys.argv) > 2 else set()
me, rows = os.getsid(0), []
for pid in map(int, filter(str.isdigit, os.listdir("/proc"))):
    name, stat = fields(pid)
    if len(stat) < 20:
        continue
    state, sid, start = stat[0], int(stat[3]), int(stat[19])
    if before is None:
        rows.append([pid, start])
        continue
    if state in "ZX" or sid == me or ((pid, start) in before and pid not in watched):
        continue
    leader = fields(sid)[1]
    if len(leader) > 1 and leader[1] == "0":
        continue
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        continue
    wanted = [[int(tid), [int(n) for n in read(f"/proc/{pid}/task/{tid}/schedstat").split()[:2]]] for tid in threads]
    wanted = [[tid, ran] for tid, ran in wanted if len(ran) == 2]
    timer = "nanosleep" in read(f"/proc/{pid}/wchan") or name == "sleep"
    rows.append([pid, int(stat[1]), name, timer, sum(ran for _, (ran, _) in wanted),
                 [[tid, ran + waited] for tid, (ran, waited) in wanted]])
print(json.dumps(rows))
"""
Row = tuple[int, int, str, bool, int, list[tuple[int, int]]]  # pid, parent, name, timer, ran, wanted
_ROWS = TypeAdapter(list[Row])
_PAIRS = TypeAdapter(list[tuple[int, int]])


@dataclass(frozen=True)
class Before:
    """What ran on a desktop before a setup: its processes (pid, start time) and windows."""

    processes: frozenset[tuple[int, int]]
    windows: frozenset[int]


@dataclass(frozen=True)
class Started:
    """What :func:`wait_started` found: the programs it waited for (by name), those that showed
    no window, what had not settled within the bound (one line each), and how long it took."""

    programs: tuple[str, ...] = ()
    windowless: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    waited_s: float = 0.0

    @property
    def note(self) -> str | None:
        """The notes as one line, None when everything settled."""
        return "; ".join(self.notes) or None


@dataclass(frozen=True)
class Look:
    """A program's processes at one look: when, the ns they ran, and what each thread wanted."""

    when: float
    ran: int
    wanted: dict[int, int]


@dataclass
class Program:
    """One program a setup started, as the wait follows it from look to look."""

    name: str
    pids: frozenset[int] = frozenset()
    calm: list[Look] = field(default_factory=list)  # the looks since a process came or went
    window_at: float | None = None   # the first look that found its window shown
    settled: bool = False
    note: str | None = None

    def look(self, now: float, rows: list[Row], shown: list[int]) -> None:
        """Take in one look at its processes (``shown``: those that show a window)."""
        pids = frozenset(row[0] for row in rows)
        if pids != self.pids or any(row[3] for row in rows):  # a process came or went, or a timer runs
            self.calm = []
        self.calm.append(Look(now, sum(row[4] for row in rows), {tid: want for row in rows for tid, want in row[5]}))
        self.name, self.pids = _name(rows, shown), pids
        if shown and self.window_at is None:
            self.window_at = now
        if self.window_at is None:
            self.settled = self._rested(WINDOWLESS_QUIET)
        elif self._rested(QUIET):
            self.settled = True
        elif now - self.window_at >= WINDOW_PATIENCE:  # a video playing: taken as it is
            self.settled, self.note = True, f"{self.name} was still busy {WINDOW_PATIENCE:g} s after its window showed"
        else:
            self.settled = False

    def _rested(self, quiet: float) -> bool:
        """Whether it was at rest over the last ``quiet`` seconds at least (see the module)."""
        last = self.calm[-1]
        first = next((look for look in reversed(self.calm) if last.when - look.when >= quiet), None)
        if first is None:
            return False
        span = (last.when - first.when) * 1e9
        return last.ran - first.ran < IDLE_SHARE * span and all(
            last.wanted[tid] - first.wanted[tid] < STARVED_SHARE * span for tid in last.wanted.keys() & first.wanted.keys())

    def unsettled(self, timeout: float) -> str:
        """What it was when the bound passed."""
        if self.window_at is not None:
            return f"{self.name} showed its window but was not at rest within {timeout:g} s"
        return f"{self.name} showed no window and was not at rest within {timeout:g} s"


def snapshot(desktop: Desktop) -> Before:
    """What runs on ``desktop`` now: the ``before`` of :func:`wait_started`."""
    try:
        processes = frozenset(_PAIRS.validate_json(_probe(desktop)))
    except ValidationError as error:
        raise DesktopError(f"the desktop's processes could not be read: {error.errors()[0]['msg']}") from None
    return Before(processes, frozenset(window.id for window in desktop.windows.list()))


def wait_started(desktop: Desktop, before: Before, timeout: float = START_TIMEOUT) -> Started:
    """Wait until what started on ``desktop`` since ``before`` has settled (see the module),
    for ``timeout`` seconds at most; past it, the notes name what had not."""
    began = time.monotonic()
    deadline = began + timeout
    programs: dict[int, Program] = {}
    while True:
        now = time.monotonic()
        try:
            looked = _look(desktop, before)
        except (DesktopError, ValidationError) as error:  # the setup is done: the wait is not worth failing it
            why = str(error) if isinstance(error, DesktopError) else "the desktop's processes could not be read"
            return Started(notes=(why,), waited_s=round(now - began, 3))
        for key, (rows, shown) in looked.items():
            program = programs.setdefault(key, Program(_name(rows, shown)))
            program.look(now, rows, shown)
        for key in programs.keys() - looked.keys():
            programs[key].settled = True  # it ended
        pending = [program for program in programs.values() if not program.settled]
        if not pending or now >= deadline:
            break
        time.sleep(min(POLL, max(0.0, deadline - time.monotonic())))
    names = tuple(dict.fromkeys(program.name for program in programs.values()))
    windowless = tuple(dict.fromkeys(p.name for p in programs.values() if p.window_at is None))
    notes = tuple(p.note for p in programs.values() if p.note) + tuple(p.unsettled(timeout) for p in pending)
    return Started(names, windowless, notes, round(time.monotonic() - began, 3))


def _look(desktop: Desktop, before: Before) -> dict[int, tuple[list[Row], list[int]]]:
    """The programs started since ``before`` by their first process, each with its processes
    and those that show a window (see :func:`_programs`)."""
    owners = _window_owners(desktop)
    handed = sorted({pid for window, pid in owners.items() if window not in before.windows})
    rows = _ROWS.validate_json(_probe(desktop, sorted(before.processes), handed))
    return _programs(rows, {pid for pid, _ in before.processes}.intersection(handed), set(owners.values()))


def _programs(rows: list[Row], older: set[int], shown: set[int]) -> dict[int, tuple[list[Row], list[int]]]:
    """New processes (and the ``older`` ones that show a new window) as programs: a process and
    all it started, keyed by its first process's pid, with those of them that are ``shown``.
    A program the desktop's init adopted is one a setup launched (a started program's parent
    exits at once); a new one whose parent ran before was started by a service of the desktop
    (the session bus, the shell, an indexer): it counts only when it shows a window (a terminal
    its server opened)."""
    parents = {row[0]: row[1] for row in rows if row[0] not in older}

    def first(pid: int) -> int:
        while parents.get(pid) in parents:
            pid = parents[pid]
        return pid

    programs: dict[int, tuple[list[Row], list[int]]] = {}
    for row in rows:
        members, showing = programs.setdefault(row[0] if row[0] in older else first(row[0]), ([], []))
        members.append(row)
        if row[0] in shown:
            showing.append(row[0])
    return {key: (members, showing) for key, (members, showing) in programs.items()
            if showing or key in older or parents.get(key) == INIT}


def _window_owners(desktop: Desktop) -> dict[int, int]:
    """The shown top-level windows that are no splash screen, each with its program's pid."""
    owners = {}
    for window in desktop.windows.list():
        if window.viewable and desktop.windows.window_type(window) != "splash":
            pid = desktop.windows.pid(window)
            if pid is not None:
                owners[window.id] = pid
    return owners


def _probe(desktop: Desktop, *arguments: Iterable[object]) -> str:
    """The probe's answer; :class:`DesktopError` when it gave none."""
    argv = ["python3", "-c", PROBE, *(json.dumps(list(argument)) for argument in arguments)]
    # vdesk's own probe, not the task's program: on the desktop's real clock.
    done = desktop.programs.run(argv, wait=True, timeout=PROBE_TIMEOUT, output_limit=PROBE_LIMIT, clock=False)
    if done.returncode != 0 or done.cut:
        why = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}, {done.stdout_bytes} bytes"]
        raise DesktopError(f"the desktop's processes could not be read: {why[0][:200]}")
    return done.stdout


def _name(rows: list[Row], shown: list[int]) -> str:
    """What a program is called in notes: its process that shows a window, else its first."""
    named = [row for row in rows if row[0] in shown] or sorted(rows)
    return named[0][2] if named else "?"

"""The whole suite's rules and shared desktop.

A run with a skipped test has left something untested, so it fails. Every test in the folders
of :data:`DESKTOP_FOLDERS` needs a Docker engine and the desktop images, and carries the
`desktop` marker (`-m "not desktop"` leaves them out); elsewhere a test file marks itself.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.desktop.probe import EventProbe
from vdesk.desktop import Desktop

DESKTOP_FOLDERS = ("desktop", "protocols")

# The files that take longest, started first: `make test` runs files in parallel (pytest-xdist,
# a file to a worker), and a long file picked up last would run alone at the end.
LONGEST_FIRST = ("osworld/test_examples.py", "apps/test_apps_suite.py", "desktop/test_ray.py",
                 "osworld/test_browser_getters.py", "desktop/test_bench.py", "osworld/test_desktop_env.py",
                 "desktop/test_hostile.py", "desktop/test_forks.py", "apps/test_frames_every_start.py",
                 "desktop/test_cli.py", "desktop/test_lifecycle.py", "desktop/test_readme.py")

# Hypothesis times each example against a 200 ms deadline by default: a speed assertion that a
# loaded 2-core machine fails (one property writes files per example). Speed is the bench's.
settings.register_profile("vdesk", deadline=None)
settings.load_profile("vdesk")


def pytest_configure(config: pytest.Config) -> None:
    # A run started as a background job without job control inherits SIGINT ignored, and so would
    # every vdesk process the tests start and then interrupt (an ignored signal stays ignored
    # across exec): with a handler here, each child starts with the default again.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    folders = [Path(__file__).parent / name for name in DESKTOP_FOLDERS]
    for item in items:
        if any(folder in Path(item.fspath).parents for folder in folders):
            item.add_marker(pytest.mark.desktop)
    here = Path(__file__).parent
    rank = {here / name: place for place, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(Path(item.fspath), len(rank)))  # stable: a file's order stays


@pytest.fixture(scope="session")
def shared_desktop() -> Iterator[Desktop]:
    """One 1280x800 desktop for the tests that only need a screen (a probe covers it);
    tests/apps has its own, of the apps image."""
    with Desktop.up(size=(1280, 800)) as desktop:
        yield desktop


@pytest.fixture
def probe(shared_desktop: Desktop) -> Iterator[EventProbe]:
    with EventProbe(shared_desktop) as probe:
        yield probe


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = len(reporter.stats.get("skipped", [])) if reporter is not None else 0
    if skipped and exitstatus == pytest.ExitCode.OK:
        reporter.ensure_newline()
        reporter.write_line(f"vdesk: {skipped} test(s) skipped: something they need is missing "
                            "(`make engine` installs it); the run fails", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED

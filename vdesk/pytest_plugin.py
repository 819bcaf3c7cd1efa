"""The pytest plugin installed with vdesk: a ``desktop`` fixture for GUI-agent test suites.

    def test_opens_terminal(desktop):
        desktop.programs.run(["xterm"])
        desktop.windows.wait_for("xterm")

    def test_says_done(desktop):
        desktop.programs.run(["xterm", "-e", "sh", "-c", "echo Done; sleep 60"])
        desktop.text.wait_for("Done", timeout=30)   # OCR of the live screen; find_text reads it now

Options: ``--vdesk-size WxH``, ``--vdesk-scale S``, ``--vdesk-image NAME``,
``--vdesk-frames DIR`` (where the last frame of a failing test is saved; default
``vdesk-failures``). ``desktop`` is a fresh desktop per test; ``session_desktop`` is shared by
the whole session.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from vdesk.container import parse_size, screen_of
from vdesk.desktop import Desktop
from vdesk.errors import VdeskError
from vdesk.images import DEFAULT as DEFAULT_IMAGE


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("vdesk", "vdesk desktops")
    group.addoption("--vdesk-size", default="1280x800", help="logical screen size of desktops")
    group.addoption("--vdesk-scale", default=1.0, type=float, help="HiDPI scale of desktops")
    group.addoption("--vdesk-image", default=DEFAULT_IMAGE, help="desktop image")
    group.addoption("--vdesk-frames", default="vdesk-failures", help="folder for frames of failing tests")


def pytest_configure(config: pytest.Config) -> None:
    """A bad option is one usage error before any test runs, not an error in every test."""
    try:
        screen_of(parse_size(config.getoption("--vdesk-size")), config.getoption("--vdesk-scale"))
    except VdeskError as error:
        raise pytest.UsageError(f"--vdesk-size/--vdesk-scale: {error}") from None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        for name in ("desktop", "session_desktop"):
            desktop = getattr(item, "funcargs", {}).get(name)
            if isinstance(desktop, Desktop):
                report.sections.append(("vdesk", _save_frame(item, desktop)))


def _start(config: pytest.Config) -> Desktop:
    return Desktop.up(parse_size(config.getoption("--vdesk-size")), scale=config.getoption("--vdesk-scale"),
                      image=config.getoption("--vdesk-image"))


@pytest.fixture
def desktop(request: pytest.FixtureRequest) -> Iterator[Desktop]:
    """A fresh desktop for one test, removed afterwards whatever happens."""
    with _start(request.config) as started:
        yield started


@pytest.fixture(scope="session")
def session_desktop(request: pytest.FixtureRequest) -> Iterator[Desktop]:
    """One desktop shared by the whole test session."""
    with _start(request.config) as started:
        yield started


def _save_frame(item: pytest.Item, desktop: Desktop) -> str:
    """Save the desktop's screen next to the report; say where (or why not)."""
    folder = Path(item.config.getoption("--vdesk-frames"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (re.sub(r"[^A-Za-z0-9_.-]+", "_", item.nodeid) + ".png")
    try:
        desktop.screen.shot().save(path)
    except Exception as error:  # a failing test's report must not fail on top
        return f"could not save the desktop's frame: {error}"
    return f"desktop frame saved to {path}"

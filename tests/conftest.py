"""The whole suite's rule: a run with a skipped test has left something untested, so it fails."""

from __future__ import annotations

import pytest


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = len(reporter.stats.get("skipped", [])) if reporter is not None else 0
    if skipped and exitstatus == pytest.ExitCode.OK:
        reporter.ensure_newline()
        reporter.write_line(f"vdesk: {skipped} test(s) skipped: something they need is missing "
                            "(`make engine` installs it); the run fails", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED

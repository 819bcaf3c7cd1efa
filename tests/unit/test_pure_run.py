"""A run of the pure tests needs no Docker engine: ``pytest -m "not desktop"`` collects the whole
suite and passes on a machine where no engine answers (here: ``DOCKER_HOST`` pointing at a
socket that does not exist). Modules that made a docker-py client at import broke this once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NO_ENGINE = {**os.environ, "DOCKER_HOST": "unix:///nonexistent/vdesk-no-engine.sock"}


def _pytest(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
                          capture_output=True, text=True, cwd=ROOT, env=NO_ENGINE, timeout=900)


def test_the_whole_suite_collects_with_no_engine() -> None:
    done = _pytest("--collect-only", "-m", "not desktop", "tests")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "error" not in done.stdout.splitlines()[-1].lower(), done.stdout[-3000:]


def test_pure_tests_outside_the_unit_folder_pass_with_no_engine() -> None:
    done = _pytest("-m", "not desktop", "tests/harness/test_record_unit.py", "tests/harness/test_model_agents_unit.py")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout.splitlines()[-1]

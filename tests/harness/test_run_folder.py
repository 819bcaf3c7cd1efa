"""A suite's run folder is one run: a reused --out is refused unless replaced or added to, and
the report shows what results.json lists, nothing else that sits in the folder."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness.conftest import SUITE

pytestmark = [pytest.mark.desktop, pytest.mark.usefixtures("no_desktop_left")]
VDESK = str(Path(sys.executable).parent / "vdesk")


def vdesk(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([VDESK, *args], capture_output=True, text=True, timeout=300)


def listed(out: Path) -> list[str]:
    return [episode["task_id"] for episode in json.loads((out / "results.json").read_text())["episodes"]]


def report_of(out: Path) -> str:
    made = vdesk("report", str(out))
    assert made.returncode == 0, made.stderr
    return (out / "report.html").read_text()


def test_a_reused_out_is_refused_replaced_or_added_to(tmp_path: Path) -> None:
    out = tmp_path / "run"
    echo, clear = str(SUITE / "terminal-echo.yaml"), str(SUITE / "terminal-clear.yaml")
    first = vdesk("eval", echo, "--out", str(out))
    assert first.returncode == 0, first.stderr

    refused = vdesk("eval", clear, "--out", str(out))
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr == (f"vdesk: {out} holds a run already (1 episode): pass --replace to remove it first "
                              "or --append to add to it (existing= in the API)\n")
    assert listed(out) == ["terminal-echo"]  # untouched
    assert vdesk("eval", clear, "--out", str(out), "--replace", "--append").returncode == 2

    (out / "notes.txt").write_text("mine")  # not the run's: replacing the run leaves it
    replaced = vdesk("eval", clear, "--out", str(out), "--replace")
    assert replaced.returncode == 0, replaced.stderr
    assert listed(out) == ["terminal-clear"] and not (out / "terminal-echo").exists()
    assert (out / "notes.txt").read_text() == "mine"
    assert "1 of 1 episodes succeeded" in report_of(out)

    added = vdesk("eval", echo, "--out", str(out), "--append")
    assert added.returncode == 0, added.stderr
    assert listed(out) == ["terminal-clear", "terminal-echo"]
    shutil.copytree(out / "terminal-echo", out / "stray")  # an episode folder results.json does not list
    page = report_of(out)
    assert "2 of 2 episodes succeeded" in page and page.count('<section class="episode"') == 2

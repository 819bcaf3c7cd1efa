"""`make demo` shows what it claims and, like `make test`, leaves the checkout as it found it."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def tracked_changes() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                          capture_output=True, text=True, check=True).stdout


def recipe(target: str, program: str) -> list[list[str]]:
    """The commands of a Makefile target that run ``program`` (from `make -n`, as make would)."""
    dry = subprocess.run(["make", "-n", "-s", target], cwd=ROOT, capture_output=True, text=True, check=True)
    lines = [shlex.split(line) for line in dry.stdout.splitlines() if line.strip()]
    return [line for line in lines if any(word.endswith(f"/{program}") for word in line)]


def test_make_demo_writes_its_outputs_to_an_ignored_folder_only():
    (demo,) = [command for command in recipe("demo", "vdesk") if "demo" in command]
    before = tracked_changes()
    run = subprocess.run(demo, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert tracked_changes() == before, "make demo rewrote tracked files"
    out = ROOT / demo[demo.index("--out") + 1]
    steps = [json.loads(line) for line in (out / "actions.jsonl").read_text().splitlines()]
    assert steps and all(step["result"]["status"] == "success" for step in steps)
    ignored = subprocess.run(["git", "check-ignore", "-q", str(out)], cwd=ROOT)
    assert ignored.returncode == 0, f"{out} is not ignored by git"


def test_make_test_and_make_demo_name_no_readme_picture_and_make_pictures_does():
    for target in ("demo", "test"):
        commands = recipe(target, "vdesk") + recipe(target, "pytest")
        assert commands and not any("images" in word for command in commands for word in command), commands
    assert any("images/demo.png" in command for command in recipe("pictures", "vdesk"))

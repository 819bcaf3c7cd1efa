"""Checks: deciding whether an episode succeeded, by looking at the desktop it left behind.

Each check returns a :class:`CheckResult` with a one-line ``detail`` that says what was
expected and what was found, so a failed episode explains itself in the report.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageChops

from vdesk.desktop import Desktop
from vdesk.errors import VdeskError
from vdesk.harness.tasks import (Check, Command, CommandCheck, FileCheck, RegionCheck, Task,
                                 WindowCheck, in_home)

DETAIL_LIMIT = 200


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check."""

    kind: str
    passed: bool
    detail: str


def run_checks(desktop: Desktop, task: Task, screen: Image.Image | None = None) -> list[CheckResult]:
    """Run every check of ``task``; a check that cannot run fails with the reason.

    ``screen`` is the final frame at the logical size (taken when not given) for region checks.
    """
    results = []
    for check in task.checks:
        try:
            results.append(run_check(desktop, check, task.base_dir, screen))
        except VdeskError as error:
            results.append(CheckResult(_kind(check), False, f"could not check: {error}"))
    return results


def run_check(desktop: Desktop, check: Check, base_dir: Path, screen: Image.Image | None = None) -> CheckResult:
    """Run one check against ``desktop``."""
    if isinstance(check, CommandCheck):
        return command_check(desktop, check)
    if isinstance(check, FileCheck):
        return file_check(desktop, check)
    if isinstance(check, WindowCheck):
        return window_check(desktop, check)
    return region_check(screen if screen is not None else desktop.screenshot(), check, base_dir)


def argv_of(command: Command) -> list[str]:
    """A task command as an argument vector: strings go through ``sh -c`` from the home folder."""
    return ["sh", "-c", f"cd && {command}"] if isinstance(command, str) else list(command)


def command_check(desktop: Desktop, check: CommandCheck) -> CheckResult:
    done = desktop.run(argv_of(check.command), wait=True, timeout=check.timeout)
    problems = []
    if done.returncode != check.exit_code:
        problems.append(f"exit code {done.returncode}, expected {check.exit_code}")
    problems += _text_problems("stdout", done.stdout, check.stdout, check.stdout_contains, check.stdout_matches)
    return _result("command", problems, f"{_short(check.command)} exited {done.returncode} as expected")


def file_check(desktop: Desktop, check: FileCheck) -> CheckResult:
    path = in_home(check.file)
    done = desktop.run(["sh", "-c", 'cd && exec cat -- "$1"', "sh", path], wait=True, timeout=30)
    exists = done.returncode == 0
    if not check.exists:
        return _result("file", [f"{check.file} exists"] if exists else [], f"{check.file} does not exist")
    if not exists:
        return CheckResult("file", False, f"{check.file} cannot be read: {done.stderr.strip() or 'missing'}")
    problems = _text_problems(check.file, done.stdout, check.equals, check.contains, check.matches)
    return _result("file", problems, f"{check.file} has the expected content")


def window_check(desktop: Desktop, check: WindowCheck) -> CheckResult:
    # A window may still be mapping (or closing) when the episode ends: give it the timeout.
    deadline = time.monotonic() + check.timeout
    while True:
        window = desktop.windows.find(check.window, regex=check.regex)
        shown = window is not None and window.viewable
        if shown == check.present or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    titles = ", ".join(repr(w.title) for w in desktop.windows.list()) or "no windows"
    wanted = "shown" if check.present else "not shown"
    if shown == check.present:
        return CheckResult("window", True, f"a window titled {check.window!r} is {wanted}")
    return CheckResult("window", False, f"expected a window titled {check.window!r} {wanted}; windows: {titles}")


def region_check(screen: Image.Image, check: RegionCheck, base_dir: Path) -> CheckResult:
    reference_path = base_dir / check.reference
    try:
        with Image.open(reference_path) as opened:
            reference = opened.convert("RGB")
    except OSError as error:
        return CheckResult("region", False, f"cannot read reference image {reference_path}: {error}")
    crop = screen.convert("RGB").crop(check.region)
    if crop.size != reference.size:
        return CheckResult("region", False, f"region is {crop.size[0]}x{crop.size[1]} but the reference "
                                            f"{check.reference} is {reference.size[0]}x{reference.size[1]}")
    fraction = differing_fraction(crop, reference, check.threshold)
    verdict = f"{fraction:.2%} of pixels differ (tolerance {check.tolerance:.2%})"
    return CheckResult("region", fraction <= check.tolerance, f"region {list(check.region)}: {verdict}")


def differing_fraction(a: Image.Image, b: Image.Image, threshold: int) -> float:
    """The fraction of pixels where some channel differs by more than ``threshold``."""
    difference = ImageChops.difference(a.convert("RGB"), b.convert("RGB"))
    # The largest channel difference of each pixel, then a 0/255 mask of those over threshold.
    channels = difference.split()
    largest = channels[0]
    for channel in channels[1:]:
        largest = ImageChops.lighter(largest, channel)
    mask = largest.point(lambda value: 255 if value > threshold else 0)
    histogram = mask.histogram()
    return histogram[255] / (a.width * a.height)


def _text_problems(what: str, text: str, equals: str | None, contains: str | None, matches: str | None) -> list[str]:
    problems = []
    if equals is not None and text != equals:
        problems.append(f"{what} is {_short(text)}, expected {_short(equals)}")
    if contains is not None and contains not in text:
        problems.append(f"{what} is {_short(text)}, expected it to contain {_short(contains)}")
    if matches is not None and re.search(matches, text) is None:
        problems.append(f"{what} is {_short(text)}, expected it to match {matches!r}")
    return problems


def _result(kind: str, problems: list[str], success: str) -> CheckResult:
    return CheckResult(kind, not problems, "; ".join(problems) if problems else success)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= DETAIL_LIMIT else text[: DETAIL_LIMIT - 1] + "…"


def _kind(check: Check) -> str:
    return {CommandCheck: "command", FileCheck: "file", WindowCheck: "window"}.get(type(check), "region")

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
from vdesk.harness.hosts import DesktopHost
from vdesk.harness.tasks import (Check, Command, CommandCheck, FileCheck, RegionCheck, Task,
                                 WindowCheck, in_home)

DETAIL_LIMIT = 200
FILE_TIMEOUT = 30.0  # seconds to read a file a check names
CHECK_SLACK = 10.0   # seconds per check beyond its own timeout (a window check lists windows after it)
DesktopCheck = CommandCheck | FileCheck | WindowCheck  # the checks that look inside the desktop


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check."""

    kind: str
    passed: bool
    detail: str


def run_checks(desktop: DesktopHost, task: Task, screen: Image.Image | None = None) -> list[CheckResult]:
    """Run every check of ``task``; a check that cannot run fails with the reason.

    Command, file and window checks run next to the desktop, in one call; region checks run
    here, on ``screen`` (the final frame at the logical size, taken when not given), because
    their reference images are files of this machine (``task.base_dir``).
    """
    there = [check for check in task.checks if not isinstance(check, RegionCheck)]
    try:
        found = desktop.call(desktop_checks, there, timeout=checks_timeout(there)) if there else []
    except VdeskError as error:  # the desktop could not be reached at all
        found = [CheckResult(_kind(check), False, f"could not check: {error}") for check in there]
    answers = iter(found)
    results = []
    for check in task.checks:
        if not isinstance(check, RegionCheck):
            results.append(next(answers))
            continue
        try:
            screen = screen if screen is not None else desktop.screenshot()
            results.append(region_check(screen, check, task.base_dir))
        except VdeskError as error:
            results.append(CheckResult("region", False, f"could not check: {error}"))
    return results


def desktop_checks(desktop: Desktop, checks: list[DesktopCheck]) -> list[CheckResult]:
    """Run command, file and window checks against ``desktop``, each failing on its own."""
    results = []
    for check in checks:
        try:
            results.append(desktop_check(desktop, check))
        except VdeskError as error:
            results.append(CheckResult(_kind(check), False, f"could not check: {error}"))
    return results


def desktop_check(desktop: Desktop, check: DesktopCheck) -> CheckResult:
    """Run one check that looks inside the desktop."""
    if isinstance(check, CommandCheck):
        return command_check(desktop, check)
    if isinstance(check, FileCheck):
        return file_check(desktop, check)
    return window_check(desktop, check)


def checks_timeout(checks: list[DesktopCheck]) -> float:
    """A bound on :func:`desktop_checks`: each check's own timeout, and some slack for each."""
    return sum(getattr(check, "timeout", FILE_TIMEOUT) + CHECK_SLACK for check in checks)


def argv_of(command: Command) -> list[str]:
    """A task command as an argument vector: strings go through ``sh -c`` from the home folder."""
    return ["sh", "-c", f"cd && {command}"] if isinstance(command, str) else list(command)


def command_check(desktop: Desktop, check: CommandCheck) -> CheckResult:
    done = desktop.run(argv_of(check.command), wait=True, timeout=check.timeout)
    problems = []
    if done.returncode != check.exit_code:
        problems.append(f"exit code {done.returncode}, expected {check.exit_code}")
    problems += _text_problems("stdout", done.stdout, check.stdout, check.stdout_contains, check.stdout_matches)
    if problems and done.cut:  # compared with the first OUTPUT_LIMIT bytes only: say so
        problems.append(done.cut_note)
    return _result("command", problems, f"{_short(check.command)} exited {done.returncode} as expected")


def file_check(desktop: Desktop, check: FileCheck) -> CheckResult:
    path = in_home(check.file)
    done = desktop.run(["sh", "-c", 'cd && exec cat -- "$1"', "sh", path], wait=True, timeout=FILE_TIMEOUT)
    exists = done.returncode == 0
    if not check.exists:
        return _result("file", [f"{check.file} exists"] if exists else [], f"{check.file} does not exist")
    if not exists:
        return CheckResult("file", False, f"{check.file} cannot be read: {done.stderr.strip() or 'missing'}")
    problems = _text_problems(check.file, done.stdout, check.equals, check.contains, check.matches)
    if problems and done.cut:
        problems.append(done.cut_note)
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

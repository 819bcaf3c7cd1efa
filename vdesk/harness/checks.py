"""Checks: deciding whether an episode succeeded, by looking at the desktop it left behind.

Each check returns a :class:`CheckResult` with a one-line ``detail`` that says what was
expected and what was found, so a failed episode explains itself in the report.
"""

from __future__ import annotations

import hashlib
import io
import math
import re
import time
from pathlib import Path

from PIL import Image, ImageChops

from vdesk.accessibility.tree import describe_query
from vdesk.desktop import Desktop
from vdesk.errors import DocumentError, VdeskError
from vdesk import documents
from vdesk.harness.desktop_files import read_file
from vdesk.harness.episode import CheckResult
from vdesk.harness.hosts import DesktopHost
from vdesk.accessibility import text as text_on_screen
from vdesk.harness.tasks import (BrowserCheck, Check, Command, CommandCheck, DocumentCheck, ElementCheck, FileCheck,
                                 RegionCheck, Task, TextCheck, WindowCheck, in_home)

DETAIL_LIMIT = 200
FILE_TIMEOUT = 30.0  # seconds to read a file a check names
CHECK_SLACK = 10.0   # seconds per check beyond its own timeout (a window check lists windows after it)
IMAGE_PIXEL_LIMIT = 40_000_000  # a picture out of a desktop is untrusted: no decompression bombs
# The checks that look inside the desktop, run next to it in one call; region checks and
# picture-file checks compare with reference images of this machine, so they run here.
DesktopCheck = CommandCheck | FileCheck | WindowCheck | DocumentCheck | BrowserCheck | ElementCheck


def run_checks(desktop: DesktopHost, task: Task, screen: Image.Image | None = None) -> list[CheckResult]:
    """Run every check of ``task``; a check that cannot run fails with the reason.

    Command, file and window checks run next to the desktop, in one call; region and text
    checks run here, on ``screen`` (the final frame at the logical size, taken when not given):
    a region's reference images are files of this machine (``task.base_dir``), and text is
    read by this machine's OCR engine.
    """
    there = [check for check in task.checks if not _here(check)]
    try:
        found = desktop.call(desktop_checks, there, timeout=checks_timeout(there)) if there else []
    except VdeskError as error:  # the desktop could not be reached at all
        found = [CheckResult(_kind(check), False, f"could not check: {error}") for check in there]
    answers = iter(found)
    results = []
    for check in task.checks:
        if not _here(check):
            results.append(next(answers))
            continue
        try:
            if isinstance(check, (RegionCheck, TextCheck)):
                screen = screen if screen is not None else desktop.screen.shot()
                results.append(region_check(screen, check, task.base_dir) if isinstance(check, RegionCheck)
                               else text_check(screen, check))
            else:
                data = desktop.call(read_file, in_home(check.file), timeout=FILE_TIMEOUT + CHECK_SLACK)
                results.append(picture_file_check(data, check, task.base_dir))
        except VdeskError as error:
            results.append(CheckResult(_kind(check), False, f"could not check: {error}"))
    return results


def _here(check: Check) -> bool:
    return isinstance(check, (RegionCheck, TextCheck)) or (isinstance(check, FileCheck) and check.image is not None)


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
    if isinstance(check, DocumentCheck):
        return document_check(desktop, check)
    if isinstance(check, BrowserCheck):
        return browser_check(desktop, check)
    if isinstance(check, ElementCheck):
        return element_check(desktop, check)
    return window_check(desktop, check)


def checks_timeout(checks: list[DesktopCheck]) -> float:
    """A bound on :func:`desktop_checks`: each check's own timeout, and some slack for each
    (a browser check may first start and connect to the browser)."""
    return sum(getattr(check, "timeout", FILE_TIMEOUT) + CHECK_SLACK + (40 if isinstance(check, BrowserCheck) else 0)
               for check in checks)


def argv_of(command: Command) -> list[str]:
    """A task command as an argument vector: strings go through ``sh -c`` from the home folder."""
    return ["sh", "-c", f"cd && {command}"] if isinstance(command, str) else list(command)


def command_check(desktop: Desktop, check: CommandCheck) -> CheckResult:
    done = desktop.programs.run(argv_of(check.command), wait=True, timeout=check.timeout)
    problems = []
    if done.returncode != check.exit_code:
        problems.append(f"exit code {done.returncode}, expected {check.exit_code}")
    problems += _text_problems("stdout", done.stdout, check.stdout, check.stdout_contains, check.stdout_matches)
    if problems and done.cut:  # compared with the first OUTPUT_LIMIT bytes only: say so
        problems.append(done.cut_note)
    return _result("command", problems, f"{_short(check.command)} exited {done.returncode} as expected")


def file_check(desktop: Desktop, check: FileCheck) -> CheckResult:
    data = read_file(desktop, in_home(check.file), timeout=FILE_TIMEOUT)
    if not check.exists:
        return _result("file", [f"{check.file} exists"] if data is not None else [], f"{check.file} does not exist")
    if data is None:
        return CheckResult("file", False, f"{check.file} cannot be read: no such file (or not a regular file)")
    problems = _bytes_problems(check, data)
    if check.is_text:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return CheckResult("file", False, f"{check.file} is not UTF-8 text")
        problems += _text_problems(check.file, text, check.equals, check.contains, check.matches)
    return _result("file", problems, f"{check.file} has the expected content")


def picture_file_check(data: bytes | None, check: FileCheck, base_dir: Path) -> CheckResult:
    """A file check with ``image``: the file (read out of the desktop) looks like the reference."""
    if data is None:
        return CheckResult("file", False, f"{check.file} cannot be read: no such file (or not a regular file)")
    problems = _bytes_problems(check, data)
    assert check.image is not None
    reference = _reference("file", base_dir / check.image)
    if isinstance(reference, CheckResult):
        return reference
    try:
        found = _untrusted_picture(data)
    except (OSError, ValueError, Image.DecompressionBombError) as error:
        return CheckResult("file", False, f"{check.file} is not a picture Pillow reads: {_short(str(error))}")
    if found.size != reference.size:
        problems.append(f"{check.file} is {found.width}x{found.height}, the reference {check.image} "
                        f"{reference.width}x{reference.height}")
    else:
        fraction = differing_fraction(found, reference, check.threshold)
        if fraction > check.tolerance:
            problems.append(f"{fraction:.2%} of {check.file}'s pixels differ from {check.image} "
                            f"(tolerance {check.tolerance:.2%})")
    return _result("file", problems, f"{check.file} looks like {check.image}")


def _untrusted_picture(data: bytes) -> Image.Image:
    with Image.open(io.BytesIO(data)) as opened:
        if opened.width * opened.height > IMAGE_PIXEL_LIMIT:
            raise ValueError(f"{opened.width}x{opened.height} pixels is over the limit of {IMAGE_PIXEL_LIMIT}")
        return opened.convert("RGB")


def _bytes_problems(check: FileCheck, data: bytes) -> list[str]:
    problems = []
    if check.sha256 is not None and (digest := hashlib.sha256(data).hexdigest()) != check.sha256:
        problems.append(f"{check.file} has sha256 {digest}, expected {check.sha256}")
    if check.size is not None:
        low, high = (check.size, check.size) if isinstance(check.size, int) else check.size
        if not low <= len(data) <= high:
            wanted = f"{low}" if low == high else f"{low} to {high}"
            problems.append(f"{check.file} is {len(data)} bytes, expected {wanted}")
    return problems


def document_check(desktop: Desktop, check: DocumentCheck) -> CheckResult:
    """Read the document out of the desktop and judge it here with its format's library."""
    data = read_file(desktop, in_home(check.document), timeout=FILE_TIMEOUT)
    if data is None:
        return CheckResult("document", False, f"{check.document} does not exist (or is not a regular file)")
    try:
        problems = document_problems(check, data)
    except DocumentError as error:
        return CheckResult("document", False, f"{check.document}: {error}")
    return _result("document", problems, f"{check.document} has the expected content")


def document_problems(check: DocumentCheck, data: bytes) -> list[str]:
    """What about the document (its bytes) differs from what the check expects."""
    kind = documents.kind_of(check.document)
    name = check.document
    problems: list[str] = []
    if kind in documents.SPREADSHEETS:
        sheet = documents.read_spreadsheet(data, kind)
        for reference, wanted in (check.cells or {}).items():
            found = sheet.cell(reference).value
            if not _same_value(found, wanted):
                problems.append(f"{name} {reference} is {_short(found)}, expected {_short(wanted)}")
        for reference, wanted in (check.formulas or {}).items():
            found = sheet.cell(reference).formula
            if found != _formula(wanted):
                problems.append(f"{name} {reference} has formula {_short(found)}, expected {_short(_formula(wanted))}")
        text = "\n".join(str(cell.value) for cell in sheet.cells.values() if cell.value is not None)
    elif kind in documents.TEXT_DOCUMENTS:
        paragraphs = documents.read_text_document(data, kind)
        written = [p.text for p in paragraphs if p.text.strip()]
        if check.paragraphs is not None and written != check.paragraphs:
            problems.append(f"{name} has paragraphs {_short(written)}, expected {_short(check.paragraphs)}")
        for mark, wanted in (("bold", check.bold), ("italic", check.italic)):
            found_marks = [stretch.strip() for p in paragraphs for stretch in getattr(p, mark)]
            if wanted is not None and found_marks != wanted:
                problems.append(f"{name}: the {mark} text is {_short(found_marks)}, expected {_short(wanted)}")
        text = "\n".join(p.text for p in paragraphs)
    elif kind in documents.PRESENTATIONS:
        slides = documents.read_presentation(data, kind)
        titles = [slide.title for slide in slides]
        if check.slides is not None and titles != check.slides:
            problems.append(f"{name} has slide titles {_short(titles)}, expected {_short(check.slides)}")
        text = "\n".join(t for slide in slides for t in slide.texts)
    else:
        text = documents.read_pdf_text(data)
    for wanted_text in check.contains or []:
        if _squeezed(wanted_text) not in _squeezed(text):
            problems.append(f"{name} does not contain {_short(wanted_text)} (its text: {_short(text)})")
    return problems


def _same_value(found: documents.CellValue, wanted: str | float | bool) -> bool:
    if isinstance(wanted, bool) or isinstance(found, bool):
        return found is wanted
    if isinstance(wanted, (int, float)):
        return isinstance(found, float) and math.isclose(found, float(wanted), rel_tol=1e-9, abs_tol=1e-9)
    return found == wanted


def _formula(text: str) -> str:
    return "=" + re.sub(r"\s+", "", text.lstrip("=")).upper()


def _squeezed(text: str) -> str:
    """Text with runs of white space as one space: PDF text extraction breaks lines its own way."""
    return " ".join(text.split())


def browser_check(desktop: Desktop, check: BrowserCheck) -> CheckResult:
    """Ask the desktop's browser, until the answer is as expected or the timeout passes."""
    deadline = time.monotonic() + check.timeout
    while True:
        found, problems = _browser_problems(desktop, check)
        if not problems or time.monotonic() >= deadline:
            break
        time.sleep(0.1)
    what = f"the text of {check.selector!r}" if check.browser == "text" else f"the browser's {check.browser}"
    return _result("browser", problems, f"{what} is as expected ({_short(found)})")


def _browser_problems(desktop: Desktop, check: BrowserCheck) -> tuple[object, list[str]]:
    browser = desktop.browser
    if check.browser == "tab":
        titles = [tab.title for tab in browser.tabs]
        for title in titles:
            if not _text_problems("a tab's title", title, check.equals, check.contains, check.matches):
                return title, []
        return titles, [f"no tab's title is as expected; tabs: {_short(titles)}"]
    if check.browser == "text":
        assert check.selector is not None
        text = browser.text(check.selector, timeout=max(check.timeout, 1.0))
        if text is None:
            return None, [f"no element matches {check.selector!r} in {browser.url}"]
        return text, _text_problems(f"the text of {check.selector!r}", text.strip(), check.equals, check.contains,
                                    check.matches)
    value = browser.url if check.browser == "url" else browser.title
    return value, _text_problems(f"the browser's {check.browser}", value, check.equals, check.contains, check.matches)


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


def element_check(desktop: Desktop, check: ElementCheck) -> CheckResult:
    # The program may still be drawing (or closing) the element when the episode ends.
    deadline = time.monotonic() + check.timeout
    what = describe_query(check.element, check.name) + (f" with states {check.states}" if check.states else "")
    while True:
        tree = desktop.elements.tree()
        found = tree.query(check.element, check.name, states=tuple(check.states))
        if bool(found) == check.present or time.monotonic() >= deadline:
            break
        time.sleep(0.1)
    if bool(found) == check.present:
        return CheckResult("element", True, f"an element {what} is {'on screen' if check.present else 'absent'}")
    if check.present:
        errors = f"; {'; '.join(tree.errors())}" if tree.errors() else ""
        return CheckResult("element", False, f"no element {what} on screen{errors}")
    return CheckResult("element", False, f"expected no element {what}, found {len(found)}: "
                                         f"{', '.join(n.label() for n in found[:5])}")


def _reference(kind: str, path: Path) -> Image.Image | CheckResult:
    """A task's reference picture, or the failed check that says it cannot be read."""
    try:
        with Image.open(path) as opened:
            return opened.convert("RGB")
    except OSError as error:
        return CheckResult(kind, False, f"cannot read reference image {path}: {error}")


def region_check(screen: Image.Image, check: RegionCheck, base_dir: Path) -> CheckResult:
    reference = _reference("region", base_dir / check.reference)
    if isinstance(reference, CheckResult):
        return reference
    crop = screen.convert("RGB").crop(check.region)
    if crop.size != reference.size:
        return CheckResult("region", False, f"region is {crop.size[0]}x{crop.size[1]} but the reference "
                                            f"{check.reference} is {reference.size[0]}x{reference.size[1]}")
    fraction = differing_fraction(crop, reference, check.threshold)
    verdict = f"{fraction:.2%} of pixels differ (tolerance {check.tolerance:.2%})"
    return CheckResult("region", fraction <= check.tolerance, f"region {list(check.region)}: {verdict}")


def text_check(screen: Image.Image, check: TextCheck) -> CheckResult:
    """Read the text of ``screen`` (the final frame at the logical size) within the check's
    region and look for the check's text in its lines."""
    where = f" in {list(check.within)}" if check.within else ""
    try:
        lines = text_on_screen.read(screen, region=check.within)
    except VdeskError as error:  # a region off the screen, no OCR engine
        return CheckResult("text", False, f"could not read the screen: {error}")
    found = text_on_screen.find(lines, check.pattern())
    wanted = f"text {'/' + check.text + '/' if check.regex else repr(check.text)}"
    if found:
        detail = f"{wanted} is on screen{where} at {list(found[0].bounds)}"
    else:
        detail = f"{wanted} is not on screen{where}; it said {_short(' | '.join(line.text for line in lines))}"
    return CheckResult("text", bool(found) == check.present, detail)


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
    return {CommandCheck: "command", FileCheck: "file", WindowCheck: "window", DocumentCheck: "document",
            BrowserCheck: "browser", TextCheck: "text", ElementCheck: "element"}.get(type(check), "region")

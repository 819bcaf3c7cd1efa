"""Tasks: what an episode asks of an agent, how its desktop is prepared and how success is judged.

A task is a YAML or JSON file validated by pydantic; every problem is reported as one
:class:`TaskError` naming the file and the field at fault::

    id: terminal-echo
    instruction: Write "hello vdesk" into the file ~/hello.txt using the terminal.
    desktop: {size: 800x600}
    setup:
      - start: xterm -geometry 80x24+0+0 -title Terminal -e env 'PS1=$ ' bash --norc
      - wait_window: Terminal
    checks:
      - file: ~/hello.txt
        equals: "hello vdesk\\n"
    max_steps: 5
    time_limit: 60
    solution:                      # optional: the scripted agent's steps
      - [{type: type, inputs: {content: "echo hello vdesk > ~/hello.txt\\n"}}]
    wrong_solution:                # optional: a near miss the checks must fail (agent wrong-solution)
      - [{type: type, inputs: {content: "echo hello > ~/hello.txt\\n"}}]

A command is a string (run through ``sh -c`` in the desktop user's home, so pipes and
redirections work) or a list (an argument vector run as is). Paths are absolute, or relative
to the desktop user's home (``~/`` means the home too).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import yaml
from pydantic import (BaseModel, ConfigDict, Discriminator, Field, PrivateAttr, SerializeAsAny, Tag,
                      ValidationError, field_validator, model_validator)

from vdesk.accessibility.text import compile_pattern
from vdesk.actions import BaseAction, parse_batch
from vdesk.errors import InvalidAction, TaskError
from vdesk.harness.extension import TaskExtension, extension_kind
from vdesk.spec import DesktopSpec

Command = Union[str, Annotated[list[str], Field(min_length=1)]]
TASK_SUFFIXES = (".yaml", ".yml", ".json")
ID_PATTERN = r"^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,79}$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        return _known_keys(data, cls.model_fields, _what(cls))


def _known_keys(data: Any, known: Iterable[str], what: str) -> Any:
    """``data``, where an unknown key is named with the closest known one (``stdot``: did you mean ``stdout``?)."""
    if isinstance(data, dict):
        known = list(known)
        for key in data:
            if isinstance(key, str) and key not in known:
                raise ValueError(f"unknown key {key!r} in {what}{did_you_mean(key, known)}")
    return data


def did_you_mean(name: str, known: Iterable[str], *, listed: bool = True) -> str:
    """`` (did you mean 'stdout'?)`` for the known name closest to ``name``; without one, every
    known name (``listed``) or nothing."""
    known = list(known)
    close = difflib.get_close_matches(name, known, n=1)
    if close:
        return f" (did you mean {close[0]!r}?)"
    return f" (known: {', '.join(known)})" if listed and known else ""


# -- setup steps ------------------------------------------------------------------------------
class RunStep(_Strict):
    """Run a command and wait for it; a non-zero exit fails the setup."""

    run: Command
    timeout: float = Field(default=30.0, gt=0, le=600)


class StartStep(_Strict):
    """Start a program and leave it running."""

    start: Command


class WriteStep(_Strict):
    """Write a file (its folders are created)."""

    write: str = Field(min_length=1)
    content: str = ""


class WaitWindowStep(_Strict):
    """Wait until a window whose title contains this text (or matches it, with ``regex``) is shown.
    The wait ends when the window shows; its bound is generous because a browser's or an office
    program's cold start on a loaded 2-core machine takes well over ten seconds."""

    wait_window: str = Field(min_length=1)
    regex: bool = False
    timeout: float = Field(default=30.0, gt=0, le=120)


def _task_relative(value: str) -> str:
    if Path(value).is_absolute() or ".." in Path(value).parts:
        raise ValueError(f"{value!r}: name a file or folder inside the task's folder (relative, no '..')")
    return value


class UploadStep(_Strict):
    """Copy a file or folder of the task (relative to the task file) into the desktop folder ``to``."""

    upload: str = Field(min_length=1)
    to: str = "~"
    timeout: float = Field(default=60.0, gt=0, le=600)

    @field_validator("upload")
    @classmethod
    def _inside(cls, value: str) -> str:
        return _task_relative(value)


class ServeStep(_Strict):
    """Copy a folder of the task (relative to the task file) into the desktop and serve it over
    HTTP on the desktop's own loopback, ``http://127.0.0.1:PORT/`` (the desktop has no network)."""

    serve: str = Field(min_length=1)
    port: int = Field(default=8000, ge=1024, le=65535)
    timeout: float = Field(default=30.0, gt=0, le=120)

    @field_validator("serve")
    @classmethod
    def _inside(cls, value: str) -> str:
        return _task_relative(value)


ProcessName = Annotated[str, Field(min_length=1, max_length=15, pattern=r"^[A-Za-z0-9._+-]+$")]  # as ps shows it


class WaitIdleStep(_Strict):
    """Wait until the programs of this process name (as ``ps`` shows it, e.g. ``soffice.bin``)
    run and have used almost no CPU for ``quiet`` seconds: a window is often shown before the
    program has drawn its content or can take input (an office document still loading)."""

    wait_idle: ProcessName
    quiet: float = Field(default=1.0, gt=0, le=30)
    timeout: float = Field(default=60.0, gt=0, le=300)


class BrowserStep(_Strict):
    """Start the desktop's browser (apps image) with its debugging port, show ``browser`` (an
    address) in it, and wait until the page has loaded."""

    browser: str = Field(min_length=1)
    timeout: float = Field(default=60.0, gt=0, le=300)


def _keyed_by(kinds: tuple[str, ...], error_type: str, what: str) -> Discriminator:
    """Pick a union member by which one of ``kinds`` the data has as a key."""
    return Discriminator(lambda value: _kind(value, kinds), custom_error_type=error_type,
                         custom_error_message=f"{what} needs one of the keys {', '.join(kinds)}",
                         custom_error_context={})


SETUP_KINDS = ("run", "start", "write", "wait_window", "serve", "upload", "browser", "wait_idle")
SetupStep = Annotated[
    Union[Annotated[RunStep, Tag("run")], Annotated[StartStep, Tag("start")],
          Annotated[WriteStep, Tag("write")], Annotated[WaitWindowStep, Tag("wait_window")],
          Annotated[ServeStep, Tag("serve")], Annotated[UploadStep, Tag("upload")],
          Annotated[BrowserStep, Tag("browser")], Annotated[WaitIdleStep, Tag("wait_idle")]],
    _keyed_by(SETUP_KINDS, "setup_kind", "a setup step"),
]


# -- checks -----------------------------------------------------------------------------------
class CommandCheck(_Strict):
    """A command run in the desktop: its exit code and, optionally, its output."""

    command: Command
    exit_code: int = 0
    stdout: str | None = None
    stdout_contains: str | None = None
    stdout_matches: str | None = None
    timeout: float = Field(default=30.0, gt=0, le=600)

    @field_validator("stdout_matches")
    @classmethod
    def _pattern(cls, value: str | None) -> str | None:
        return _regex(value)


class FileCheck(_Strict):
    """A file's content: exactly ``equals``, or containing / matching (as UTF-8 text), or merely
    existing; for any file, its ``sha256`` or ``size`` (bytes, exact or ``[min, max]``); for a
    picture, its likeness to ``image`` (a reference of the task's folder, compared as a region
    check compares: at most ``tolerance`` of the pixels differ by more than ``threshold``)."""

    file: str = Field(min_length=1)
    exists: bool = True
    equals: str | None = None
    contains: str | None = None
    matches: str | None = None
    sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    size: int | tuple[int, int] | None = None
    image: str | None = Field(default=None, min_length=1)
    tolerance: float = Field(default=0.01, ge=0, le=1)
    threshold: int = Field(default=24, ge=0, le=255)

    @field_validator("matches")
    @classmethod
    def _pattern(cls, value: str | None) -> str | None:
        return _regex(value)

    @property
    def is_text(self) -> bool:
        return any(value is not None for value in (self.equals, self.contains, self.matches))


class DocumentCheck(_Strict):
    """A document a program saved, read with the library of its format (by the file's suffix).

    Spreadsheets (xlsx, ods): ``cells`` (``A1`` or ``Sheet!A1`` → the value shown; numbers
    compare as numbers) and ``formulas`` (→ e.g. ``=SUM(B1:B3)``; spaces and case do not
    matter). Text documents (docx, odt): ``paragraphs`` (the non-empty ones, exactly, in order)
    and ``bold`` / ``italic`` (the text of every stretch so set, exactly, in order). Presentations
    (pptx, odp): ``slides`` (the slide titles, in order). Any of them and PDF: ``contains``
    (texts found somewhere in it).
    """

    document: str = Field(min_length=1)
    cells: dict[str, str | float | bool] | None = None
    formulas: dict[str, str] | None = None
    paragraphs: list[str] | None = None
    bold: list[str] | None = None
    italic: list[str] | None = None
    slides: list[str] | None = None
    contains: list[str] | None = None

    @model_validator(mode="after")
    def _fits_format(self) -> DocumentCheck:
        suffix = Path(self.document).suffix.lower()
        allowed = {".xlsx": {"cells", "formulas"}, ".ods": {"cells", "formulas"},
                   ".docx": {"paragraphs", "bold", "italic"}, ".odt": {"paragraphs", "bold", "italic"},
                   ".pptx": {"slides"}, ".odp": {"slides"}, ".pdf": set()}
        if suffix not in allowed:
            raise ValueError(f"document {self.document!r}: the checks read {', '.join(allowed)} files")
        asked = {name for name in ("cells", "formulas", "paragraphs", "bold", "italic", "slides")
                 if getattr(self, name) is not None}
        if asked - allowed[suffix]:
            raise ValueError(f"document {self.document!r}: a {suffix} file has no {', '.join(sorted(asked - allowed[suffix]))}")
        if not asked and self.contains is None:
            raise ValueError(f"document {self.document!r}: say what to check (e.g. contains)")
        return self


class BrowserCheck(_Strict):
    """The desktop's browser (apps image): the current tab's ``url`` or ``title``, the ``text``
    of the first element matching ``selector`` in it, or the title of some tab (``tab``), is
    exactly ``equals`` / contains / matches. Retried until it holds or ``timeout`` passes (a page
    may still be loading)."""

    browser: Literal["url", "title", "text", "tab"]
    selector: str | None = Field(default=None, min_length=1)
    equals: str | None = None
    contains: str | None = None
    matches: str | None = None
    timeout: float = Field(default=5.0, ge=0, le=60)

    @field_validator("matches")
    @classmethod
    def _pattern(cls, value: str | None) -> str | None:
        return _regex(value)

    @model_validator(mode="after")
    def _selector_for_text(self) -> BrowserCheck:
        if (self.browser == "text") != (self.selector is not None):
            raise ValueError("a browser text check needs a selector, and only it takes one")
        if self.equals is None and self.contains is None and self.matches is None:
            raise ValueError("a browser check needs equals, contains or matches")
        return self


class WindowCheck(_Strict):
    """A window whose title contains ``window`` (or matches it) is shown, or is not."""

    window: str = Field(min_length=1)
    regex: bool = False
    present: bool = True
    timeout: float = Field(default=2.0, ge=0, le=60)


class ElementCheck(_Strict):
    """An element with this role (and name, and states) is on screen in the accessibility
    tree, or is not (apps image). Names match exactly, ignoring case."""

    element: str = Field(min_length=1)  # the role, e.g. "push button"
    name: str | None = None
    states: list[str] = Field(default_factory=list)
    present: bool = True
    timeout: float = Field(default=2.0, ge=0, le=60)


class RegionCheck(_Strict):
    """A screen region (logical pixels: left, top, right, bottom) matches a reference image.

    A pixel differs when one of its channels differs by more than ``threshold`` (0..255);
    the check passes when at most ``tolerance`` (a fraction) of the pixels differ.
    """

    region: tuple[int, int, int, int]
    reference: str = Field(min_length=1)
    tolerance: float = Field(default=0.01, ge=0, le=1)
    threshold: int = Field(default=24, ge=0, le=255)

    @field_validator("region")
    @classmethod
    def _ordered(cls, value: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
        return _ordered_region(value)


class TextCheck(_Strict):
    """Text is on the final frame (read by OCR, see :mod:`vdesk.accessibility.text`), within
    ``within`` (logical pixels: left, top, right, bottom) if given — or, with ``present:
    false``, is not. ``text`` matches literally (any whitespace standing for any, within one
    line of the screen); with ``regex: true`` it is a regular expression."""

    text: str = Field(min_length=1, max_length=1000)
    regex: bool = False
    ignore_case: bool = False
    within: tuple[int, int, int, int] | None = None
    present: bool = True

    @field_validator("text")
    @classmethod
    def _some_text(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a text check needs some text, not only whitespace")
        return value

    @field_validator("within")
    @classmethod
    def _ordered(cls, value: tuple[int, int, int, int] | None) -> tuple[int, int, int, int] | None:
        return _ordered_region(value) if value is not None else None

    @model_validator(mode="after")
    def _valid_regex(self) -> TextCheck:
        if self.regex:
            _regex(self.text)
        return self

    def pattern(self) -> re.Pattern[str]:
        """The text as the pattern it stands for."""
        source = self.text if self.regex else compile_pattern(self.text).pattern
        return re.compile(source, re.IGNORECASE if self.ignore_case else 0)


CHECK_KINDS = ("command", "file", "window", "region", "document", "browser", "text", "element")
Check = Annotated[
    Union[Annotated[CommandCheck, Tag("command")], Annotated[FileCheck, Tag("file")],
          Annotated[WindowCheck, Tag("window")], Annotated[RegionCheck, Tag("region")],
          Annotated[DocumentCheck, Tag("document")], Annotated[BrowserCheck, Tag("browser")],
          Annotated[TextCheck, Tag("text")], Annotated[ElementCheck, Tag("element")]],
    _keyed_by(CHECK_KINDS, "check_kind", "a check"),
]


# -- the task ---------------------------------------------------------------------------------
class Task(_Strict):
    """One task. ``solution`` (optional) is a list of steps, each a list of BaseActions;
    ``wrong_solution`` (optional, the same) is a near miss the task's checks must fail, so that
    its author sees the task tell right from wrong.

    A task read from another benchmark's task file carries an ``extension`` (see
    :mod:`vdesk.harness.extension`; OSWorld's is :mod:`vdesk.osworld.extension`): its own steps
    run after ``setup``, and its evaluator judges it beside ``checks``.
    """

    id: str = Field(pattern=ID_PATTERN)
    instruction: str = Field(min_length=1)
    desktop: DesktopSpec = Field(default_factory=DesktopSpec)  # image None: the run's
    setup: list[SetupStep] = Field(default_factory=list)
    checks: list[Check] = Field(default_factory=list)
    extension: SerializeAsAny[TaskExtension] | None = None
    max_steps: int = Field(default=15, ge=1, le=1000)
    time_limit: float = Field(default=300.0, gt=0, le=24 * 3600)
    solution: list[list[dict[str, Any]]] | None = None
    wrong_solution: list[list[dict[str, Any]]] | None = None
    # Programs (process names) to wait for before the final frame and the checks: a save the
    # agent started may still be being written when it says it is done, on a loaded machine
    # long after the screen went still (LibreOffice greys its toolbars and draws nothing more).
    judge_when_idle: list[ProcessName] = Field(default_factory=list, max_length=8)

    _base_dir: Path = PrivateAttr(default_factory=Path.cwd)

    @field_validator("desktop", mode="before")
    @classmethod
    def _desktop_keys(cls, data: Any) -> Any:
        return _known_keys(data, DesktopSpec.model_fields, "the desktop settings")

    @field_validator("extension", mode="before")
    @classmethod
    def _extension_of_its_kind(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return extension_kind(data.get("kind")).model_validate(data)
        return data

    @field_validator("solution", "wrong_solution")
    @classmethod
    def _valid_solution(cls, steps: list[list[dict[str, Any]]] | None) -> list[list[dict[str, Any]]] | None:
        for index, step in enumerate(steps or []):
            try:
                parse_batch(step)
            except InvalidAction as error:
                raise ValueError(f"step {index}: {error}") from None
        return steps

    @model_validator(mode="after")
    def _judged(self) -> Task:
        if not self.checks and self.extension is None:
            raise ValueError("a task needs at least one check")
        return self

    @property
    def skip(self) -> str | None:
        """Why this task is not run (what it needs that vdesk cannot offer offline), or None."""
        return self.extension.skip if self.extension is not None else None

    @property
    def base_dir(self) -> Path:
        """The folder relative paths in the task (reference images) are resolved against."""
        return self._base_dir

    def with_base_dir(self, folder: Path) -> Task:
        copy = self.model_copy()
        copy._base_dir = folder
        return copy

    def solution_actions(self, *, wrong: bool = False) -> list[list[BaseAction]]:
        """The solution (``wrong``: the wrong one) as validated BaseActions, one list per step
        (empty when there is none)."""
        return [parse_batch(step) for step in (self.wrong_solution if wrong else self.solution) or []]

    def reference_files(self) -> list[str]:
        """The reference images the checks name, as written."""
        return ([check.reference for check in self.checks if isinstance(check, RegionCheck)]
                + [check.image for check in self.checks if isinstance(check, FileCheck) and check.image])

    def copied_in(self) -> list[str]:
        """The files and folders of the task its ``serve`` and ``upload`` steps copy into the
        desktop, as written (relative to :attr:`base_dir`)."""
        return [step.serve if isinstance(step, ServeStep) else step.upload
                for step in self.setup if isinstance(step, (ServeStep, UploadStep))]


def _kind(value: Any, kinds: tuple[str, ...]) -> str | None:
    """Which of ``kinds`` names this step or check: the one key of them it has."""
    if isinstance(value, BaseModel):
        value = value.model_dump()
    if not isinstance(value, dict):
        return None
    present = [kind for kind in kinds if kind in value]
    return present[0] if len(present) == 1 else None


def _what(model: type[BaseModel]) -> str:
    """``a command check``, ``a wait window step``, ``the task``: a model as a task file's reader names it."""
    words = re.sub(r"(?<!^)(?=[A-Z])", " ", model.__name__).lower()
    if words == "task":
        return f"the {words}"
    return f"an {words}" if words[0] in "aeiou" else f"a {words}"


def _ordered_region(value: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    left, top, right, bottom = value
    if left < 0 or top < 0 or right <= left or bottom <= top:
        raise ValueError(f"region {list(value)} must be [left, top, right, bottom] with left < right and top < bottom")
    return value


def _regex(value: str | None) -> str | None:
    if value is not None:
        try:
            re.compile(value)
        except re.error as error:
            raise ValueError(f"invalid regular expression {value!r}: {error}") from None
    return value


# -- loading ----------------------------------------------------------------------------------
def parse_task(data: Any, *, source: str = "<task>", base_dir: Path | None = None) -> Task:
    """Validate task data (already parsed from YAML/JSON); raises :class:`TaskError`."""
    if not isinstance(data, dict):
        raise TaskError(f"{source}: a task must be a mapping, got {type(data).__name__}")
    try:
        task = Task.model_validate(data)
    except ValidationError as error:
        raise TaskError(f"{source}: {_task_problems(error)}") from None
    return task.with_base_dir(base_dir or Path.cwd())


def _task_problems(error: ValidationError) -> str:
    """:func:`validation_message` with the places written as in the file: ``checks.0.stdout``,
    not ``checks.0.command.stdout`` (the step's or check's kind, which pydantic puts in between)."""
    parts = []
    for item in error.errors():
        loc = [part for index, part in enumerate(item["loc"])
               if not (index >= 2 and isinstance(item["loc"][index - 1], int)
                       and item["loc"][index - 2] in ("setup", "checks") and part in SETUP_KINDS + CHECK_KINDS)]
        where = ".".join(str(part) for part in loc if not str(part).startswith("function-"))
        message = item["msg"].removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


def load_task(path: str | Path) -> Task:
    """Read and validate one task file (``.yaml``, ``.yml`` or ``.json``)."""
    path = Path(path)
    if path.suffix not in TASK_SUFFIXES:
        raise TaskError(f"{path}: a task file must end in {', '.join(TASK_SUFFIXES)}")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise TaskError(f"{path}: cannot read it ({error.strerror})") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as error:
        raise TaskError(f"{path}: not valid {path.suffix[1:].upper()}{_where(error)}: {_parse_problem(error)}") from None
    return parse_task(data, source=str(path), base_dir=path.parent.resolve())


def load_suite(path: str | Path) -> list[Task]:
    """Every task of a suite: a folder of task files (sorted by name), or one task file.

    Task ids must be unique within a suite.
    """
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in TASK_SUFFIXES and p.is_file())
        if not files:
            raise TaskError(f"{path}: no task files ({', '.join(TASK_SUFFIXES)}) in this folder")
    elif path.exists():
        files = [path]
    else:
        raise TaskError(f"{path}: no such suite (a folder of task files, or one task file)")
    tasks = [load_task(file) for file in files]
    seen: dict[str, int] = {}
    for task in tasks:
        seen[task.id] = seen.get(task.id, 0) + 1
    duplicated = sorted(task_id for task_id, count in seen.items() if count > 1)
    if duplicated:
        raise TaskError(f"{path}: task ids must be unique; repeated: {', '.join(duplicated)}")
    return tasks


def _where(error: json.JSONDecodeError | yaml.YAMLError) -> str:
    """`` at line 3, column 7`` (counted from 1) where the parser stopped, when it says."""
    if isinstance(error, json.JSONDecodeError):
        return f" at line {error.lineno}, column {error.colno}"
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    return f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""


def _parse_problem(error: Exception) -> str:
    if isinstance(error, json.JSONDecodeError):
        return error.msg
    if isinstance(error, yaml.MarkedYAMLError) and error.problem:
        return error.problem  # the message's other lines repeat the position, with the text
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def in_home(path: str) -> str:
    """A task path as the desktop sees it: ``~/x`` and ``x`` are relative to the home folder."""
    if path == "~":
        return "."
    return path[2:] if path.startswith("~/") else path

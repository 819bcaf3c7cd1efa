"""Task extensions: what a kind of task adds to the harness's own setup steps and checks.

A vdesk task is judged by its ``checks`` after its ``setup`` ran. A task read from another
benchmark's task file carries more: steps of that benchmark's own to run after the setup, its own
evaluator, files to fetch before the desktop starts, a written solution in an action space. The harness knows none of these benchmarks; it asks the
task's :class:`TaskExtension`, at each of those points, through the small surface below:

=================  ========================================  ==============================
hook               asked by                                  when
=================  ========================================  ==============================
``skip``           the suite                                 before anything: why not run
``fetch``          the suite                                 before the episode's desktop
``open``           the environment (:mod:`vdesk.harness.env`) after the task's setup; the
                                                             session's ``setup`` runs then
                                                             (``resume`` on a fork), its
                                                             ``evaluate`` beside the checks
``solution``       the scripted agents (scripted,            at reset, in its action space
                   wrong-solution)
``write_results``  the suite (a class method, once per kind) after the run: the kind's own
                                                             layout of it, and a table
=================  ========================================  ==============================

An extension is a pydantic model that names its ``kind``. Each kind registers itself when its
module is imported and is published as an entry point of the group ``vdesk.task_extensions``
(OSWorld's is ``osworld = vdesk.osworld.extension:OSWorldExtension``), so a saved task of that
kind (a run folder's ``task.json``) reads back wherever the package is installed, through
Python's own plugin mechanism. The dependency runs one way: an extension's package imports the
harness, never the reverse.
"""

from __future__ import annotations

import threading
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict, Field

from vdesk.actions import BaseAction
from vdesk.progress import Progress

if TYPE_CHECKING:
    from vdesk.harness.episode import CheckResult
    from vdesk.harness.hosts import DesktopHost


ENTRY_POINTS = "vdesk.task_extensions"


class ExtensionSession(Protocol):
    """One episode of an extended task on its desktop: opened after the task's own setup."""

    def setup(self) -> None:
        """Run the extension's own setup steps on a fresh desktop."""
        ...

    def resume(self) -> None:
        """Take the task up on a fork of (or a restore to) a checkpoint taken after ``setup``."""
        ...

    def evaluate(self, agent_failed: bool) -> CheckResult:
        """The extension's verdict, as one check with its score (``agent_failed``: the agent's
        last action said the task cannot be done)."""
        ...

    def close(self) -> None:
        """Let go of what the session holds on this machine."""
        ...


class SuiteRun(BaseModel):
    """A finished suite run, as a kind's :meth:`TaskExtension.write_results` is given it: its
    folder (``results.json`` written, an episode folder per episode that ran) and the episodes
    of tasks of that kind."""

    model_config = ConfigDict(frozen=True)

    folder: Path
    episodes: tuple[tuple[str, TaskExtension], ...]  # each episode's id (its folder) and its task's extension
    agent: str
    action_space: str | None = None  # the space the agent spoke, when it says
    observation: str = "screenshot"


class ResultsTable(BaseModel):
    """A kind's own results of a suite run: the file it wrote them to (relative to the run's
    folder) and a table of them to show, kept in ``results.json``."""

    model_config = ConfigDict(frozen=True)

    kind: str
    file: str
    columns: list[str]
    rows: list[list[str]]
    notes: list[str] = Field(default_factory=list)  # lines shown under the table


class TaskExtension(BaseModel):
    """What a kind of task adds to the harness (see the module). Subclasses set ``kind`` (a
    ``Literal`` field with that default) and override the hooks they need."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str
    _kinds: ClassVar[dict[str, type[TaskExtension]]] = {}

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        default = cls.model_fields["kind"].default
        if isinstance(default, str):
            TaskExtension._kinds[default] = cls

    @classmethod
    def kind_named(cls, kind: str) -> type[TaskExtension] | None:
        """The extension registered as ``kind``, if its module was imported."""
        return cls._kinds.get(kind)

    @property
    def skip(self) -> str | None:
        """Why a task with this extension cannot run here (None: it runs)."""
        return None

    def fetch(self, base_dir: Path, progress: Progress | None = None,
              cancel: threading.Event | None = None) -> list[Path]:
        """Bring files the task needs onto this machine before its desktop starts (its relative
        paths are under ``base_dir``, the task's); the paths fetched. Nothing by default."""
        return []

    def open(self, host: DesktopHost, base_dir: Path) -> ExtensionSession:
        """A session of the task on the desktop ``host`` (relative paths under ``base_dir``)."""
        raise NotImplementedError(f"a {self.kind} task extension opens no session")

    def solution(self, space: str | None, *, wrong: bool = False) -> list[tuple[str, list[BaseAction]]] | None:
        """The written solution (``wrong``: the deliberately wrong one) in ``space``, each step
        as (its text, its actions); None when there is none in that space."""
        return None

    @classmethod
    def write_results(cls, run: SuiteRun) -> ResultsTable | None:
        """Write this kind's own results of a finished suite run into its folder (a
        benchmark's layout, its rates) and return the table to show; None (the default):
        the kind keeps none."""
        return None


SuiteRun.model_rebuild()  # its episodes name TaskExtension, defined after it


def extension_kind(kind: object) -> type[TaskExtension]:
    """The extension class of ``kind``: registered already, else its entry point loaded.
    A ValueError names the kinds there are."""
    if not isinstance(kind, str):
        raise ValueError(f"a task extension names its kind (a string), got {kind!r}")
    if (found := TaskExtension.kind_named(kind)) is not None:
        return found
    for point in entry_points(group=ENTRY_POINTS, name=kind):
        loaded = point.load()
        if isinstance(loaded, type) and issubclass(loaded, TaskExtension):
            return loaded
    known = sorted({*TaskExtension._kinds, *(point.name for point in entry_points(group=ENTRY_POINTS))})
    raise ValueError(f"no task extension of kind {kind!r} is installed (there are: {', '.join(known) or 'none'})")

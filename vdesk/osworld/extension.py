"""OSWorld's tasks as a harness task extension (see :mod:`vdesk.harness.extension`).

A task read from an OSWorld task file carries an :class:`OSWorldExtension`: the file itself
(its ``config`` steps, evaluator and solution) and where its files are. The harness asks it at
its hooks: ``skip`` (what vdesk cannot offer offline), ``fetch`` (the task's files, on this
machine, before the desktop starts), ``open`` (an :class:`~vdesk.osworld.session.OSWorldSession`
that runs the config steps, and later the evaluator as one check with OSWorld's score) and
``solution`` (the written solution of an action space, parsed, never run) and, once a suite
ran, ``write_results`` (OSWorld's results layout and its rates: :mod:`vdesk.osworld.results`). It registers under
the kind ``osworld`` when this module is imported, and as the package's entry point
``vdesk.task_extensions: osworld``, so a saved task of this kind reads back wherever vdesk is
installed.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Literal

from vdesk.actions import BaseAction
from vdesk.harness.extension import ExtensionSession, ResultsTable, SuiteRun, TaskExtension
from vdesk.harness.hosts import DesktopHost
from vdesk.harness.record import suite_outcomes
from vdesk.harness.tasks import Task
from vdesk.osworld.format import ACTION_SPACES, OSWorldSpec
from vdesk.osworld.results import rates_table, write_layout
from vdesk.osworld.solution import parse_step
from vdesk.osworld.session import OSWorldSession, fetch_task_files
from vdesk.progress import Progress


class OSWorldExtension(TaskExtension):
    """An OSWorld task file in a vdesk task."""

    kind: Literal["osworld"] = "osworld"
    spec: OSWorldSpec

    @property
    def skip(self) -> str | None:
        return self.spec.skip

    def fetch(self, base_dir: Path, progress: Progress | None = None,
              cancel: threading.Event | None = None) -> list[Path]:
        return fetch_task_files(self.spec, base_dir, progress, cancel)

    def open(self, host: DesktopHost, base_dir: Path) -> ExtensionSession:
        return OSWorldSession(host, self.spec, base_dir)

    def solution(self, space: str | None, *, wrong: bool = False) -> list[tuple[str, list[BaseAction]]] | None:
        written = self.spec.file.wrong_solution if wrong else self.spec.file.solution
        if not written or space not in ACTION_SPACES or space not in written:
            return None
        return [(_raw(step), parse_step(space, step)) for step in [*written[space], "DONE"]]  # type: ignore[arg-type]

    @classmethod
    def write_results(cls, run: SuiteRun) -> ResultsTable:
        """OSWorld's results layout of the run beside its episode folders, and its rates
        (:mod:`vdesk.osworld.results`); the agent's name names the model's folder."""
        outcomes = {outcome.task_id: outcome for outcome in suite_outcomes(run.folder)}
        episodes = [(outcomes[episode], extension.spec.domain) for episode, extension in run.episodes
                    if episode in outcomes and isinstance(extension, OSWorldExtension)]
        summary = write_layout(run.folder, episodes, action_space=run.action_space or "pyautogui",
                               observation_type=run.observation, model=run.agent)
        return rates_table(summary)


def spec_of(task: Task) -> OSWorldSpec | None:
    """The OSWorld task file ``task`` carries, if it is an OSWorld task."""
    return task.extension.spec if isinstance(task.extension, OSWorldExtension) else None


def _raw(step: object) -> str:
    import json

    return step if isinstance(step, str) else json.dumps(step)

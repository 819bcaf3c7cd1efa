"""One episode of an OSWorld task on a desktop: its setup, then its evaluation.

The harness's environment (:class:`vdesk.harness.env.DesktopEnv`) opens a session after the
task's own vdesk setup and closes it with the desktop. The session runs here, like the
reference's host: the steps' files are read from the local task-files folder and sent in,
getters bring files out into the session's cache folder (a temporary folder, removed on
close), where ``execute`` steps also save their ``stdout`` / ``stderr``.
"""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path

from vdesk.harness.episode import CheckResult
from vdesk.harness.hosts import DesktopHost
from vdesk.osworld.format import OSWorldSpec
from vdesk.progress import Progress
from vdesk.osworld import inside
from vdesk.osworld.evaluator import safe_evaluate
from vdesk.osworld.fetch import fetch_missing
from vdesk.osworld.steps import Context, run_steps
from vdesk.osworld.task_files import TaskFiles

CHECK_KIND = "osworld"


def fetch_task_files(spec: OSWorldSpec, base_dir: Path, progress: Progress | None = None,
                     cancel: threading.Event | None = None) -> list[Path]:
    """Fetch, on this machine, the files the task ``spec`` names by URL that its task-files
    folder lacks (nothing when the task does not fetch); the paths fetched. Relative paths are
    under ``base_dir``. :class:`~vdesk.errors.FetchError` names the URL that failed."""
    if spec.fetch is None:
        return []
    return fetch_missing(spec.file, _files(spec, base_dir), spec.fetch, progress, cancel)


class OSWorldSession:
    """The steps and the evaluator of the OSWorld task ``spec`` on ``host`` (relative paths
    under ``base_dir``)."""

    def __init__(self, host: DesktopHost, spec: OSWorldSpec, base_dir: Path) -> None:
        self._cache = tempfile.TemporaryDirectory(prefix="vdesk-osworld-")
        self.context = Context(host, spec, _files(spec, base_dir), Path(self._cache.name))
        self._base_dir = base_dir

    def setup(self) -> None:
        """Run the task's ``config`` steps; :class:`~vdesk.errors.SetupError` names a failed one.
        Files the task fetches and still lacks are fetched first (a suite run fetched them before
        the desktop started; a :class:`~vdesk.harness.env.DesktopEnv` used alone fetches here)."""
        fetch_task_files(self.context.spec, self._base_dir)
        self.context.home = self.context.call(inside.home, timeout=20)
        run_steps(self.context, self.context.spec.file.config, "config")

    def resume(self) -> None:
        """Take up the task on a desktop whose ``config`` steps ran already: a fork of (or a
        restore to) a checkpoint taken after them. What the evaluator needs of this session
        (the home folder's path) is read again; nothing runs in the desktop."""
        self.context.home = self.context.call(inside.home, timeout=20)

    def evaluate(self, agent_failed: bool) -> CheckResult:
        """The postconfig steps and the evaluator, as one check with the score."""
        evaluation = safe_evaluate(self.context, agent_failed)
        return CheckResult(CHECK_KIND, evaluation.score >= 1.0, f"score {evaluation.score:g}: {evaluation.detail}",
                           score=evaluation.score)

    def close(self) -> None:
        self._cache.cleanup()


def _files(spec: OSWorldSpec, base_dir: Path) -> TaskFiles:
    return TaskFiles(Path(spec.task_files) if spec.task_files else None, spec.file.id, base_dir)

"""A suite's run folder before the run: refused when it holds a run already, unless told to
replace that run or add to it.

Reusing a folder once mixed the old run into the new one: the episode folders of tasks the new
run did not have stayed, and the report read every folder it found ("2 of 2 episodes" for a
one-task run). So a folder that holds a run (``results.json`` or episode folders) is refused
unless ``existing`` says ``"replace"`` (the old run is removed first) or ``"append"`` (its
episodes stay in ``results.json``; a task run again replaces its own). Replacing removes only
what a run writes — ``results.json``, the episode folders, the report, OSWorld's layout — and
no other file, so a mistaken folder loses nothing else; that costs a look at each child folder.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, get_args

from vdesk.errors import InvalidArgument, RunError
from vdesk.harness.record import RESULTS_FILE, Outcome, is_run
from vdesk.harness.suite import SuiteSummary

Existing = Literal["refuse", "replace", "append"]
# What a run writes beside its episode folders: the report and its pictures, OSWorld's summary
# and its results layout (one folder per action space).
RUN_FILES = (RESULTS_FILE, "report.html", "osworld.json")
RUN_FOLDERS = ("report", "pyautogui", "computer_13")


def prepare_run_folder(out: Path, task_ids: Sequence[str], existing: Existing) -> list[Outcome]:
    """Make ``out`` ready for a run of ``task_ids`` and return the earlier episodes it keeps
    (``"append"``: those of other tasks); :class:`InvalidArgument` when it holds a run and
    ``existing`` is ``"refuse"``."""
    episodes = check_run_folder(out, existing)
    if not (out / RESULTS_FILE).is_file() and not episodes:
        out.mkdir(parents=True, exist_ok=True)
        return []
    if existing == "replace":
        for folder in episodes + [out / name for name in RUN_FOLDERS if (out / name).is_dir()]:
            shutil.rmtree(folder)
        for name in RUN_FILES:
            (out / name).unlink(missing_ok=True)
        return []
    again = set(task_ids)
    for folder in episodes:
        if folder.name in again:  # its episode is run again: nothing of the old one may stay in its folder
            shutil.rmtree(folder)
    return [outcome for outcome in _previous(out) if outcome.task_id not in again]


def check_run_folder(out: Path, existing: Existing) -> list[Path]:
    """Refuse ``out`` as :func:`prepare_run_folder` would, changing nothing; returns the
    episode folders in it."""
    if existing not in get_args(Existing):
        raise InvalidArgument(f"existing must be one of {', '.join(get_args(Existing))}, got {existing!r}")
    if out.exists() and not out.is_dir():
        raise InvalidArgument(f"{out}: not a folder")
    if is_run(out):
        raise InvalidArgument(f"{out} is one episode's run folder: give a suite run another folder")
    episodes = _episode_folders(out)
    if existing == "refuse" and (episodes or (out / RESULTS_FILE).is_file()):
        held = f"{len(episodes)} episode{'' if len(episodes) == 1 else 's'}"
        raise InvalidArgument(f"{out} holds a run already ({held}): pass --replace to remove "
                              "it first or --append to add to it (existing= in the API)")
    return episodes


def _episode_folders(out: Path) -> list[Path]:
    return sorted(child for child in out.iterdir() if child.is_dir() and is_run(child)) if out.is_dir() else []


def _previous(out: Path) -> list[Outcome]:
    path = out / RESULTS_FILE
    if not path.is_file():
        return []
    try:
        return SuiteSummary.model_validate_json(path.read_text(encoding="utf-8")).episodes
    except (OSError, ValueError) as error:
        raise RunError(f"{path}: cannot read it: {error}") from None

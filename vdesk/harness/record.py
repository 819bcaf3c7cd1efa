"""Run folders: what every episode leaves behind, and reading it back.

    RUN/
      run.json        the agent, the image size it was shown, the screen, when it started
      task.json       the task as validated (reference images copied beside it)
      steps.jsonl     one line per step: actions, results, timings, the model's raw reply
      frames/         step-0001.png …: the frame the agent saw at each step
      final.png       the settled screen at the end
      video.mp4       the whole episode as video (`vdesk eval --video`)
      outcome.json    how it ended, the checks, the final frame's pixel hash

A suite run (``vdesk eval``) holds one such folder per task plus ``results.json``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from PIL import Image
from pydantic import BaseModel, ConfigDict, Field, computed_field

from vdesk.actions import BaseAction, ExecuteResult
from vdesk.errors import RunError
from vdesk.harness.tasks import Task, parse_task
from vdesk.version import __version__

RUN_FILE, TASK_FILE, STEPS_FILE, OUTCOME_FILE = "run.json", "task.json", "steps.jsonl", "outcome.json"
FINAL_FRAME, FRAMES_DIR, VIDEO_FILE = "final.png", "frames", "video.mp4"
RESULTS_FILE = "results.json"  # a suite run's summary (vdesk.harness.suite.SuiteSummary)


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore")


class RunInfo(_Record):
    """``run.json``: who ran, on what."""

    task_id: str
    agent: str
    image_size: tuple[int, int]      # the frames the agent saw; its raw points are in these pixels
    screen_size: tuple[int, int]
    scale: float = 1.0
    started_at: str = Field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    vdesk_version: str = __version__


class StepRecord(_Record):
    """One line of ``steps.jsonl``."""

    step: int
    frame: str
    frame_hash: str
    actions: list[BaseAction]
    results: list[ExecuteResult]
    raw_reply: str | None = None
    thought: str | None = None
    user_reply: str | None = None
    observed: str | None = None      # the tree or the marks the agent was shown beside the frame
    agent_ms: float = 0.0
    execute_ms: float = 0.0
    at_s: float = 0.0                # since the episode's start


class CheckRecord(_Record):
    kind: str
    passed: bool
    detail: str
    score: float | None = None  # an OSWorld evaluator's score in [0, 1]


class AttemptRecord(_Record):
    """One try of an episode on a cluster node (``vdesk eval --ray``)."""

    node: str | None                 # the Ray node's id
    address: str | None = None       # the node's IP address
    desktop: str | None = None       # the desktop's name, once it came up
    seconds: float = 0.0
    error: str | None = None         # why the try ended without a result
    lost: bool = False               # its desktop's node or actor died under it, or it never started there
    moved_to: str | None = None      # where its partial run folder went, relative to the suite folder


class Outcome(_Record):
    """``outcome.json``: how the episode ended and whether it succeeded.

    ``attempts`` is set when the episode ran on a cluster: every try in order, the last one
    being what the run folder holds; earlier ones were abandoned because their node died.
    """

    task_id: str
    agent: str
    status: str
    success: bool
    steps: int
    elapsed_s: float
    agent_s: float = 0.0
    execute_s: float = 0.0
    checks: list[CheckRecord] = Field(default_factory=list)
    request: str | None = None       # call_user's question
    error: str | None = None
    final_frame: str | None = None
    final_hash: str | None = None
    attempts: list[AttemptRecord] | None = None
    # Where the episode's desktop came from (seconds): ``setup_s`` a desktop up and the task set up
    # (with ``fork_s``: the one setup every fork of the task shares), ``checkpoint_s`` that set-up
    # desktop checkpointed, ``fork_s`` this episode's fork of ``forked_from`` until its screen settled.
    setup_s: float | None = None
    checkpoint_s: float | None = None
    fork_s: float | None = None
    forked_from: str | None = None
    setup_note: str | None = None    # what the setup started and had not settled when the agent began
    repeat_of: str | None = None     # the task's own id, when this episode is one of its repeats

    @computed_field  # type: ignore[prop-decorator]
    @property
    def retried(self) -> bool | None:
        """Whether the episode ran again after losing its desktop (None: it did not run on a cluster)."""
        return None if self.attempts is None else len(self.attempts) > 1

    @property
    def lost_nodes(self) -> list[str]:
        """The nodes that lost (or never started) the desktops of earlier tries: their address,
        else the start of their id."""
        return [attempt.address or str(attempt.node)[:8] for attempt in self.attempts or [] if attempt.lost]

    @property
    def retry_note(self) -> str:
        """``retried after losing its desktop on node …``, or "" for an episode run once."""
        lost = self.lost_nodes
        return f"retried after losing its desktop on node {', '.join(lost)}" if lost else ""

    @property
    def failed_checks(self) -> list[str]:
        """What the checks that failed said, in order."""
        return [check.detail for check in self.checks if not check.passed]

    @property
    def time_per_step_s(self) -> float:
        return self.elapsed_s / self.steps if self.steps else 0.0


def frame_hash(image: Image.Image) -> str:
    """A hash of the pixels alone (not of a file encoding): equal frames, equal hashes."""
    rgb = image.convert("RGB")
    digest = hashlib.sha256(f"{rgb.width}x{rgb.height}:".encode())
    digest.update(rgb.tobytes())
    return digest.hexdigest()


class Recorder:
    """Writes one episode's run folder as it happens. Thread-safe per instance."""

    def __init__(self, folder: Path, task: Task, info: RunInfo) -> None:
        self.folder = folder
        (folder / FRAMES_DIR).mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        _write_json(folder / RUN_FILE, info)
        save_task(task, folder)
        (folder / STEPS_FILE).write_text("")

    def frame(self, step: int, image: Image.Image) -> tuple[str, str]:
        """Save the frame an agent saw at ``step``; returns its relative path and pixel hash."""
        name = f"{FRAMES_DIR}/step-{step:04d}.png"
        image.save(self.folder / name, compress_level=1)
        return name, frame_hash(image)

    def step(self, record: StepRecord) -> None:
        with self._lock, (self.folder / STEPS_FILE).open("a", encoding="utf-8") as steps:
            steps.write(record.model_dump_json(by_alias=True, exclude_none=True) + "\n")

    def finish(self, outcome: Outcome, final: Image.Image | None) -> Outcome:
        """Save the final frame (if any) and ``outcome.json``; returns the outcome as written."""
        if final is not None:
            final.save(self.folder / FINAL_FRAME, compress_level=1)
            outcome = outcome.model_copy(update={"final_frame": FINAL_FRAME, "final_hash": frame_hash(final)})
        write_outcome(self.folder, outcome)
        return outcome


def write_outcome(folder: Path, outcome: Outcome) -> None:
    """Write (or rewrite) an episode's ``outcome.json``."""
    _write_json(folder / OUTCOME_FILE, outcome)


def save_task(task: Task, folder: Path) -> None:
    """Write ``task.json`` and copy the reference images and the files its setup copies into the
    desktop beside it, so a run folder replays on its own wherever it is moved."""
    (folder / TASK_FILE).write_text(task.model_dump_json(indent=2, exclude_none=True), encoding="utf-8")
    for reference in task.reference_files() + task.copied_in():
        source = task.base_dir / reference
        target = folder / reference
        if Path(reference).is_absolute() or target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_file():
            shutil.copyfile(source, target)
        elif source.is_dir():
            # As the serve/upload steps copy them: regular files and folders, links left out.
            shutil.copytree(source, target, ignore=_links)


def _links(folder: str, names: list[str]) -> list[str]:
    return [name for name in names if (Path(folder) / name).is_symlink()]


@dataclass(frozen=True)
class Run:
    """A run folder read back."""

    folder: Path
    info: RunInfo
    task: Task
    steps: list[StepRecord]
    outcome: Outcome | None        # None when the episode never finished writing


def is_run(folder: Path) -> bool:
    return (folder / STEPS_FILE).is_file() and (folder / TASK_FILE).is_file()


def load_run(folder: str | Path) -> Run:
    """Read an episode's run folder; :class:`RunError` says which file is missing or bad."""
    folder = Path(folder)
    if not is_run(folder):
        raise RunError(f"{folder}: not a run folder (no {STEPS_FILE} and {TASK_FILE})")
    info = _read_model(folder / RUN_FILE, RunInfo)
    task = parse_task(_read_json(folder / TASK_FILE), source=str(folder / TASK_FILE), base_dir=folder)
    steps = [_parse(StepRecord, line, folder / STEPS_FILE)
             for line in (folder / STEPS_FILE).read_text(encoding="utf-8").splitlines() if line.strip()]
    outcome_path = folder / OUTCOME_FILE
    outcome = _read_model(outcome_path, Outcome) if outcome_path.is_file() else None
    return Run(folder, info, task, steps, outcome)


def episode_folders(folder: str | Path) -> list[Path]:
    """The episode folders of a run: the folder itself, or those of a suite run (the ones its
    ``results.json`` lists, in its order; without one, each run folder inside)."""
    folder = Path(folder)
    if is_run(folder):
        return [folder]
    if not folder.is_dir():
        raise RunError(f"{folder}: no such run folder")
    # A suite run is what its results.json lists: other folders there are not of this run.
    listed = _listed(folder)
    found = listed if listed is not None else sorted(child for child in folder.iterdir() if child.is_dir() and is_run(child))
    if not found:
        raise RunError(f"{folder}: holds no episode run folders (each has {STEPS_FILE} and {TASK_FILE})")
    return found


class _Listed(_Record):
    task_id: str


class _Results(_Record):
    """What :func:`episode_folders` reads of a suite's ``results.json``: which episodes are its."""

    episodes: list[_Listed]


class _Outcomes(_Record):
    episodes: list[Outcome]


def suite_outcomes(folder: Path) -> list[Outcome]:
    """The outcomes a suite run's ``results.json`` in ``folder`` holds, in its order."""
    return _read_model(folder / RESULTS_FILE, _Outcomes).episodes


def _listed(folder: Path) -> list[Path] | None:
    """The episode folders ``results.json`` lists, in its order (None: there is no results.json)."""
    path = folder / RESULTS_FILE
    if not path.is_file():
        return None
    results = _read_model(path, _Results)
    return [folder / episode.task_id for episode in results.episodes if is_run(folder / episode.task_id)]


def _write_json(path: Path, model: BaseModel) -> None:
    path.write_text(model.model_dump_json(indent=2, by_alias=True, exclude_none=True) + "\n", encoding="utf-8")


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise RunError(f"{path}: cannot read it: {error}") from None


def _read_model(path: Path, model: type[_Record]):  # type: ignore[no-untyped-def]
    try:
        return model.model_validate(_read_json(path))
    except ValueError as error:
        raise RunError(f"{path}: {error}") from None


def _parse(model: type[_Record], line: str, path: Path):  # type: ignore[no-untyped-def]
    try:
        return model.model_validate_json(line)
    except ValueError as error:
        raise RunError(f"{path}: {error}") from None

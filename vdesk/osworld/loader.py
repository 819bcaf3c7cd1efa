"""Reading OSWorld task files beside vdesk's own, into vdesk tasks.

    tasks = load_tasks(Path("evaluation_examples"), task_files=Path("cache"), domains=["os"])

``path`` is one task file (OSWorld JSON or vdesk YAML/JSON), a folder of them, a folder of
domain folders, or an ``evaluation_examples``-shaped tree: ``examples/<domain>/<id>.json`` with
a meta file (``test_all.json`` unless ``meta`` names another) mapping each domain to its ids.
An OSWorld file's domain is the name of its folder. ``domains`` and ``ids`` keep only those.

A task that needs what vdesk cannot offer is kept, with every reason in
``spec_of(task).skips`` (the suite reports it skipped): a ``googledrive``/``login`` step,
``proxy`` (unless ``network`` grants its desktop the web), each file missing from the
task-files folder that is not to be fetched (``fetch``: see :mod:`vdesk.osworld.fetch`), each
metric, option or getter OSWorld has and vdesk lacks. So is an OSWorld file vdesk cannot model
(a field of an odd type): that is its skip reason (``strict``: a :class:`TaskError` instead).

A file that cannot pass as written is a :class:`TaskError`, never a skip: one that is not valid
JSON, or names a metric, getter, option, step or key neither vdesk nor OSWorld knows (a typo:
:mod:`vdesk.osworld.typos`), and an id in ``ids`` no task has. Every file is read first, and the
error names every bad one; :func:`read_tasks` gives each file's verdict instead of raising.

An OSWorld task runs on the osworld desktop image (OSWorld's machine) unless ``image`` names
another; vdesk's own tasks keep their ``desktop.image``. With ``network`` every OSWorld task's
desktop gets Docker's bridge network (the web); without, none (vdesk's own tasks keep theirs).

The task-files folder is ``task_files``, else the tree's own ``cache`` folder, else
:func:`vdesk.osworld.fetch.default_folder` (where earlier runs fetched to).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from vdesk.actions import validation_message
from vdesk.errors import InvalidAction, TaskError
from vdesk.harness.tasks import TASK_SUFFIXES, Task, did_you_mean, load_task
from vdesk.osworld.evaluator import unsupported_all
from vdesk.osworld.fetch import FetchSettings, default_folder, wanted
from vdesk.osworld.extension import OSWorldExtension, spec_of
from vdesk.osworld.format import ActionSpace, OSWorldSpec, OSWorldTask, Skip
from vdesk.osworld.solution import parse_step
from vdesk.osworld.steps import OFFLINE, STEPS
from vdesk.osworld.task_files import TaskFiles
from vdesk.osworld.typos import misspelt_keys, near_field, typos

DEFAULT_META = "test_all.json"
DEFAULT_SCREEN = "1920x1080"   # the reference VM's screen
# OSWorld's tasks assume its machine (user, google-chrome, VLC, ...) as its agents see it: GNOME's
# top bar and dock where the VM has them. `--image osworld-openbox` (or a task's desktop.image)
# trades that fidelity for speed (docs/osworld.md).
OSWORLD_IMAGE = "osworld"
CACHE_FOLDER = "cache"         # a tree's own task-files folder, used when none is given


# Keys only OSWorld's task files have (vdesk's tasks have checks instead of an evaluator).
OSWORLD_KEYS = frozenset(OSWorldTask.model_fields) - frozenset(Task.model_fields)


def is_osworld(data: Any) -> bool:
    """An OSWorld task file's data: an instruction and a key only OSWorld's files have (an
    evaluator, or a near miss of its name), no checks."""
    return (isinstance(data, dict) and "instruction" in data and "checks" not in data
            and any(key in OSWORLD_KEYS or near_field(str(key), ["evaluator"]) for key in data))


def load_tasks(path: Path, *, domains: Sequence[str] | None = None, ids: Sequence[str] | None = None,
               task_files: Path | None = None, meta: str | None = None, screen: str = DEFAULT_SCREEN,
               image: str | None = None, strict: bool = False, fetch: FetchSettings | None = None,
               network: bool = False) -> list[Task]:
    """Every task under ``path`` (see the module's docstring), filtered; ids must be unique.
    ``image`` is the OSWorld tasks' desktop image (default: osworld); ``strict`` makes an OSWorld
    file vdesk cannot model an error rather than a skipped task; ``fetch``: the files missing
    from the task-files folder are to be fetched (nothing is fetched here); ``network``: the
    OSWorld tasks' desktops get the web."""
    read = read_tasks(path, task_files=task_files, meta=meta, screen=screen, image=image, strict=strict, fetch=fetch,
                      network=network)
    if read.errors:
        count = f"{len(read.errors)} task files are wrong: " if len(read.errors) > 1 else ""
        raise TaskError(count + "; ".join(error for _, error in read.errors))
    tasks = read.tasks
    unknown = [task_id for task_id in dict.fromkeys(ids or ()) if task_id not in {task.id for task in tasks}]
    if unknown:
        known = sorted(task.id for task in tasks)
        raise TaskError(f"--ids: no task in {path} has the id " + ", ".join(
            f"{task_id!r}{did_you_mean(task_id, known, listed=False)}" for task_id in unknown))
    tasks = [task for task in tasks if _kept(task, domains, ids)]
    if not tasks:
        raise TaskError(f"{path}: no task matches" + (" the --domain/--ids filters" if domains or ids else ""))
    seen: set[str] = set()
    repeated = sorted({task.id for task in tasks if task.id in seen or seen.add(task.id)})  # type: ignore[func-returns-value]
    if repeated:
        raise TaskError(f"{path}: task ids must be unique; repeated: {', '.join(repeated)}")
    return tasks


@dataclass
class Reading:
    """What :func:`read_tasks` read: the tasks, and each file that could not be read with why."""

    tasks: list[Task]
    errors: list[tuple[Path, str]]


def read_tasks(path: Path, *, task_files: Path | None = None, meta: str | None = None, screen: str = DEFAULT_SCREEN,
               image: str | None = None, strict: bool = False, fetch: FetchSettings | None = None,
               network: bool = False) -> Reading:
    """Every task file under ``path``, each read on its own (see :func:`load_tasks`): a file that
    cannot be read is an error of its own, and the rest are still read."""
    if not path.exists():
        raise TaskError(f"{path}: no such task file or folder")
    if task_files is not None and not task_files.is_dir():
        raise TaskError(f"--task-files {task_files}: no such folder")
    if task_files is None:
        task_files = path / CACHE_FOLDER if (path / CACHE_FOLDER).is_dir() else default_folder()
    online = {"fetch": fetch, "network": network}
    read = Reading([], [])
    for file, domain in _files(path, meta):
        try:
            read.tasks.append(_load(file, domain, task_files, screen, image, strict, online))
        except TaskError as error:
            read.errors.append((file, str(error)))
    return read


def _kept(task: Task, domains: Sequence[str] | None, ids: Sequence[str] | None) -> bool:
    spec = spec_of(task)
    domain = spec.domain if spec is not None else None
    return (not domains or domain in domains) and (not ids or task.id in ids)


def _files(path: Path, meta: str | None) -> list[tuple[Path, str | None]]:
    """The task files to read, each with its domain (None: from its folder's name)."""
    if path.is_file():
        return [(path, None)]
    examples = path / "examples"
    meta_file = path / (meta or DEFAULT_META)
    if meta is not None and not meta_file.is_file():
        raise TaskError(f"{meta_file}: no such meta file")
    if examples.is_dir() and meta_file.is_file():
        return _from_meta(examples, meta_file)
    if examples.is_dir():
        path = examples
    files = _task_files(path)
    for folder in [] if files else sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith(".")
                         and p.name != CACHE_FOLDER):
        files += [(file, folder.name) for file, _ in _task_files(folder)]
    if not files:
        raise TaskError(f"{path}: no task files ({', '.join(TASK_SUFFIXES)}) in this folder or its domain folders")
    return files


def _task_files(folder: Path) -> list[tuple[Path, str | None]]:
    return [(p, None) for p in sorted(folder.iterdir())
            if p.is_file() and p.suffix in TASK_SUFFIXES and not p.name.startswith("test_")]


def _from_meta(examples: Path, meta_file: Path) -> list[tuple[Path, str | None]]:
    try:
        listing = json.loads(meta_file.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise TaskError(f"{meta_file}: not a readable meta file: {error}") from None
    if not isinstance(listing, dict) or not all(isinstance(v, list) for v in listing.values()):
        raise TaskError(f"{meta_file}: a meta file maps each domain to a list of task ids")
    files = []
    for domain, task_ids in listing.items():
        for task_id in task_ids:
            file = examples / str(domain) / f"{task_id}.json"
            if not file.is_file():
                raise TaskError(f"{meta_file}: lists {domain}/{task_id}, but {file} does not exist")
            files.append((file, str(domain)))
    return files


def _load(file: Path, domain: str | None, task_files: Path | None, screen: str, image: str | None,
          strict: bool, online: dict[str, Any]) -> Task:
    if file.suffix != ".json":
        return load_task(file)
    place = {"source": str(file), "base_dir": file.parent.resolve(), "domain": domain or file.parent.name,
             "task_files": task_files, "screen": screen, "image": image, "strict": strict, **online}
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise TaskError(f"{file}: not valid JSON: {error}") from None
    if not is_osworld(data):
        return load_task(file)
    return osworld_task(data, **place)  # type: ignore[arg-type]


def osworld_task(data: Any, *, source: str, base_dir: Path, domain: str, task_files: Path | None = None,
                 screen: str = DEFAULT_SCREEN, image: str | None = None, strict: bool = False,
                 fetch: FetchSettings | None = None, network: bool = False) -> Task:
    """A vdesk task holding an OSWorld task file's data. A field vdesk cannot model (a list where
    OSWorld's format has a string, ...) is a skip reason of the task, and the rest of it is kept;
    with ``strict`` it is a :class:`TaskError` naming the field. A name neither vdesk nor OSWorld
    knows (a metric, getter, option, step or key: :mod:`vdesk.osworld.typos`) is always a
    :class:`TaskError`, naming each. ``fetch`` and ``network``: see :func:`load_tasks`."""
    misspelt = misspelt_keys(data)
    file, skips = _read(data, source, strict and not misspelt)
    wrong = misspelt + typos(file)
    if wrong:
        raise TaskError(f"{source}: " + "; ".join(wrong))
    solutions: dict[str, list[list[dict[str, Any]]] | None] = {}
    for key in ("solution", "wrong_solution"):
        steps = _solution(file, source, wrong=key == "wrong_solution")
        if isinstance(steps, TaskError):
            if strict:
                raise steps
            skips.append(Skip(kind="not read", reason=f"not read: {steps}"))
            steps = None
        solutions[key] = steps
    folder = task_files.resolve() if task_files is not None else None
    files = TaskFiles(folder, file.id, base_dir)
    spec = OSWorldSpec(file=file, domain=domain, task_files=str(folder) if folder else None, fetch=fetch,
                       skips=tuple(skips + _safe_skips(file, files, fetch is not None, network)))
    desktop = {"size": screen, "image": image or OSWORLD_IMAGE, "network": "bridge" if network else "none"}
    fields = {"id": file.id, "instruction": file.instruction, "extension": OSWorldExtension(spec=spec), **solutions,
              "desktop": {**desktop, "clock": file.clock}}
    try:
        task = Task.model_validate(fields)
    except ValidationError as error:
        if strict:
            raise TaskError(f"{source}: {validation_message(error)}") from None
        # The desktop's fields (a clock vdesk cannot read) are all the rest can still fail on.
        spec = spec.model_copy(update={"skips": (*spec.skips, Skip(kind="not read",
                                                                   reason=f"not read: {validation_message(error)}"))})
        task = Task.model_validate({**fields, "extension": OSWorldExtension(spec=spec), "desktop": desktop})
    return task.with_base_dir(base_dir)


# What a required field that cannot be read is replaced by: the task keeps a place and a name.
PLACEHOLDERS: dict[str, Any] = {"instruction": "(not read)", "evaluator": {"func": []}}


def _read(data: Any, source: str, strict: bool) -> tuple[OSWorldTask, list[Skip]]:
    """The task file as modelled, with a ``not read`` skip for each top-level field that could
    not be (dropped, or replaced by a placeholder when required)."""
    skips: list[Skip] = []
    kept = dict(data) if isinstance(data, dict) else {}
    if not isinstance(data, dict):
        skips.append(Skip(kind="not read", reason=f"not read: a task file is a JSON object, got {type(data).__name__}"))
    for _ in range(len(kept) + len(PLACEHOLDERS) + 2):  # each round replaces or drops one field at least
        try:
            return OSWorldTask.model_validate(kept), skips
        except ValidationError as error:
            if strict:
                raise TaskError(f"{source}: {validation_message(error)}") from None
            for problem in error.errors():
                key = str(problem["loc"][0]) if problem["loc"] else ""
                skips.append(Skip(kind="not read", reason=f"not read: {_where(problem['loc'])}: {problem['msg']}"
                                  + (f" (got {type(problem['input']).__name__})" if key in kept else "")))
                kept.pop(key, None)
                if key == "id" or key in PLACEHOLDERS:
                    kept[key] = Path(source).stem if key == "id" else PLACEHOLDERS[key]
    raise TaskError(f"{source}: not an OSWorld task file")  # not reached: the placeholders validate


def _where(loc: Sequence[Any]) -> str:
    return ".".join(str(part) for part in loc) or "the file"


def _safe_skips(file: OSWorldTask, files: TaskFiles, fetching: bool, network: bool) -> list[Skip]:
    """:func:`skip_reasons`; a value of an odd type deep in the file is a reason too, not a crash."""
    try:
        return skip_reasons(file, files, fetching, network)
    except (TypeError, ValueError, AttributeError, KeyError) as error:
        return [Skip(kind="not read", reason=f"not read: {type(error).__name__}: {error}")]


PROXY_REASON = "needs the reference's web proxy (proxy: true); --network grants its desktop the web"
# Programs of OSWorld's machine the osworld image cannot have, by the name a task starts them with.
ABSENT = {"code": "needs VS Code (`code`), which is not in Debian's archive and so not in the osworld image"}


def skip_reasons(file: OSWorldTask, files: TaskFiles, fetching: bool = False, network: bool = False) -> list[Skip]:
    """Every reason vdesk cannot run this task, each once: the steps it cannot run, the proxy
    (unless ``network``), each file missing from the task-files folder (unless ``fetching`` will
    fetch it), each metric, option or getter it lacks."""
    skips: list[Skip] = []
    for step in file.steps():
        if step.type in OFFLINE:
            skips.append(Skip(kind="offline step", reason=OFFLINE[step.type]))
        elif step.type not in STEPS:
            skips.append(Skip(kind="step", reason=f"the {step.type} step is not supported"))
    skips += [Skip(kind="program", reason=ABSENT[name]) for name in _started(file) if name in ABSENT]
    if file.proxy and not network:
        skips.append(Skip(kind="proxy", reason=PROXY_REASON))
    skips += [Skip(kind="missing file", reason=f"task file missing: {missing} (looked in {files.where()})")
              for missing in _missing_files(file, files, fetching)]
    return list(dict.fromkeys(skips + unsupported_all(file.evaluator)))


def _started(file: OSWorldTask) -> list[str]:
    """The programs the task's steps start, by name (a command's first word, after ``VAR=value``s)."""
    names = []
    for step in file.steps():
        command = step.parameters.get("command")
        words = command.split() if isinstance(command, str) else command if isinstance(command, list) else []
        words = [word for word in words if isinstance(word, str)]
        while words and "=" in words[0]:
            words = words[1:]
        if words:
            names.append(words[0].rsplit("/", 1)[-1])
    return names


def _missing_files(file: OSWorldTask, files: TaskFiles, fetching: bool) -> list[str]:
    """The files the task needs that are not in the folder and will not be fetched (with why
    not, when fetching and it cannot be)."""
    missing: list[str] = []
    for step in file.steps():
        for item in _items(step.parameters.get("files")):
            if step.type == "upload_file" and files.local(str(item.get("local_path", ""))) is None:
                missing.append(str(item.get("local_path")))
    for item in wanted(file, files):
        if item.found is None and not (fetching and item.fetchable):
            missing.append(f"{item.url} (not fetched: {item.refused})" if fetching and item.refused else item.url)
    return list(dict.fromkeys(missing))


def _items(value: Any) -> Iterable[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _solution(file: OSWorldTask, source: str, *, wrong: bool = False) -> list[list[dict[str, Any]]] | TaskError | None:
    """The file's solution (``wrong``: its wrong one) as BaseAction steps (pyautogui preferred
    when both are written), or the error naming the step that cannot be read (the caller
    decides whether that ends it)."""
    written, key = (file.wrong_solution, "wrong_solution") if wrong else (file.solution, "solution")
    if not written:
        return None
    space: ActionSpace = "pyautogui" if "pyautogui" in written else "computer_13"
    try:
        return [[action.model_dump(mode="json", exclude_none=True) for action in parse_step(space, step)]
                for step in written[space]]
    except InvalidAction as error:
        return TaskError(f"{source}: {key} ({space}): {error}")

"""What a task needs, read without running it (``vdesk tasks check``): the programs it starts,
the files it copies in (and whether the task-files folder has them), the network it would
reach, and every reason it would be skipped; :func:`totals` counts a tree's tasks per domain:
how many run, how many are skipped and for which kinds of reason."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from vdesk.harness.tasks import BrowserStep, RunStep, StartStep, Task
from vdesk.osworld.extension import spec_of
from vdesk.osworld.fetch import wanted
from vdesk.osworld.format import SKIP_KINDS
from vdesk.osworld.task_files import TaskFiles

PROGRAMS = ("google-chrome", "chromium", "soffice", "libreoffice", "gimp", "vlc", "xterm", "code", "thunderbird",
            "nautilus", "gnome-terminal", "xdg-open", "socat", "gsettings", "python")
WEB = re.compile(r"^https?://(?!127\.0\.0\.1|localhost)", re.I)


WILL_FETCH = " (will fetch)"   # how a file to be fetched ends in :attr:`Needs.files`
ALL = "all"   # the totals row over every domain
NO_DOMAIN = "-"  # vdesk's own tasks have none


@dataclass
class Needs:
    task_id: str
    kind: str                                       # "osworld" or "vdesk"
    apps: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # "name (found)", "(missing)" or "(will fetch)"
    network: list[str] = field(default_factory=list)
    skip: str | None = None                         # every reason in one line
    domain: str = NO_DOMAIN
    skips: list[dict[str, str]] = field(default_factory=list)  # each reason: {"kind": …, "reason": …}


@dataclass
class DomainTotals:
    """One domain's tasks: how many run, how many are skipped, and per kind of reason how many
    tasks have one (a task with two kinds counts under both, so these may add up to more)."""

    domain: str
    tasks: int = 0
    runs: int = 0
    skipped: int = 0
    by_reason: dict[str, int] = field(default_factory=dict)


def totals(found: list[Needs]) -> list[DomainTotals]:
    """Per domain (sorted), then the :data:`ALL` row; reasons in :data:`SKIP_KINDS` order."""
    rows: dict[str, DomainTotals] = {}
    for needs in found:
        for name in (needs.domain, ALL):
            row = rows.setdefault(name, DomainTotals(name, by_reason={kind: 0 for kind in SKIP_KINDS}))
            row.tasks += 1
            row.skipped += needs.skip is not None
            row.runs += needs.skip is None
            for kind in dict.fromkeys(skip["kind"] for skip in needs.skips):
                row.by_reason[kind] += 1
    return [rows[name] for name in sorted(rows) if name != ALL] + [rows[ALL]] if rows else []


def needs_of(task: Task) -> Needs:
    spec = spec_of(task)
    if spec is None:
        return _vdesk_needs(task)
    file = spec.file
    files = TaskFiles(_path(spec.task_files), file.id, task.base_dir)
    needs = Needs(task.id, "osworld", apps=sorted(set(file.related_apps) | _programs(file.model_dump())),
                  skip=spec.skip, domain=spec.domain, skips=[skip.model_dump() for skip in spec.skips])
    fetching = spec.fetch is not None
    for wanted_file in wanted(file, files):  # the download steps' and cloud_file getters' files
        said = "found" if wanted_file.found else "will fetch" if fetching and wanted_file.fetchable else "missing"
        needs.files.append(f"{wanted_file.url} ({said})")
    for step in file.steps():
        for item in _listed(step.parameters.get("files")):
            if not isinstance(item, dict):
                continue
            if step.type == "upload_file":
                found = files.local(str(item.get("local_path", ""))) is not None
                needs.files.append(f"{item.get('local_path')} ({'found' if found else 'missing'})")
        for url in _listed(step.parameters.get("urls_to_open")):
            if WEB.match(str(url)):
                needs.network.append(str(url))
    if file.proxy:
        needs.network.append("the reference's web proxy" + (" (granted the web instead)"
                                                            if task.desktop.network != "none" else ""))
    return needs


def _vdesk_needs(task: Task) -> Needs:
    needs = Needs(task.id, "vdesk", files=[f"{name} (found)" if (task.base_dir / name).exists() else f"{name} (missing)"
                                           for name in task.copied_in() + task.reference_files()])
    for step in task.setup:
        if isinstance(step, (RunStep, StartStep)):
            needs.apps += sorted(_programs(step.model_dump()))
        elif isinstance(step, BrowserStep):
            needs.apps.append("chromium")
            if WEB.match(step.browser):
                needs.network.append(step.browser)
    needs.apps = sorted(set(needs.apps))
    if task.desktop.network != "none":
        needs.network.append(f"network {task.desktop.network}")
    return needs


def _programs(data: Any) -> set[str]:
    """Program names that appear as words in a task's commands."""
    text = " ".join(_strings(data))
    words = {PurePosixPath(word).name for word in re.split(r"[\s;&|()'\"]+", text) if word}
    return {name for name in PROGRAMS if name in words}


def _strings(data: Any) -> list[str]:
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [s for value in data.values() for s in _strings(value)]
    if isinstance(data, list):
        return [s for value in data for s in _strings(value)]
    return []


def _listed(value: Any) -> list[Any]:
    """A list the file should hold there; anything else (an odd type) holds nothing."""
    return value if isinstance(value, list) else []


def _path(value: str | None) -> Path | None:
    return Path(value) if value else None

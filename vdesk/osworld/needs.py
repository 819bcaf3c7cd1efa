"""What a task needs, read without running it (``vdesk tasks check``): the programs it starts,
the files it copies in (and whether the task-files folder has them), the network it would
reach, and why it would be skipped."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from vdesk.harness.tasks import BrowserStep, RunStep, StartStep, Task
from vdesk.osworld.task_files import TaskFiles

PROGRAMS = ("google-chrome", "chromium", "soffice", "libreoffice", "gimp", "vlc", "xterm", "code", "thunderbird",
            "nautilus", "gnome-terminal", "xdg-open", "socat", "gsettings", "python")
WEB = re.compile(r"^https?://(?!127\.0\.0\.1|localhost)", re.I)


@dataclass
class Needs:
    task_id: str
    kind: str                                       # "osworld" or "vdesk"
    apps: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # "name (found)" / "name (missing)"
    network: list[str] = field(default_factory=list)
    skip: str | None = None


def needs_of(task: Task) -> Needs:
    if task.osworld is None:
        return _vdesk_needs(task)
    file = task.osworld.file
    files = TaskFiles(_path(task.osworld.task_files), file.id, task.base_dir)
    needs = Needs(task.id, "osworld", apps=sorted(set(file.related_apps) | _programs(file.model_dump())),
                  skip=task.osworld.skip)
    for step in file.steps():
        for item in step.parameters.get("files", []) if isinstance(step.parameters.get("files"), list) else []:
            if step.type == "download":
                found = files.download(str(item.get("url")), str(item.get("path", ""))) is not None
                needs.files.append(f"{item.get('url')} ({'found' if found else 'missing'})")
            elif step.type == "upload_file":
                found = files.local(str(item.get("local_path", ""))) is not None
                needs.files.append(f"{item.get('local_path')} ({'found' if found else 'missing'})")
        for url in step.parameters.get("urls_to_open", []) or []:
            if WEB.match(str(url)):
                needs.network.append(str(url))
    for _, _, expected, _ in file.evaluator.metrics():
        if expected is not None and expected.type == "cloud_file":
            dest = expected.settings.get("dest")
            found = files.cloud(str(expected.settings.get("path")), str(dest or "")) is not None
            needs.files.append(f"{expected.settings.get('path')} ({'found' if found else 'missing'})")
    if file.proxy:
        needs.network.append("the reference's web proxy")
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


def _path(value: str | None) -> Path | None:
    return Path(value) if value else None

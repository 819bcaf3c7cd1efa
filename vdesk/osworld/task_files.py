"""The local task-files folder: what OSWorld's downloads fetch, on this machine.

A task's ``download`` steps and ``cloud_file`` getters name URLs; their files are looked up in a
folder laid out like OSWorld's own cache (``--task-files DIR``), which is what the reference
leaves behind after one online run, what the file-cache dataset unpacks to, or what vdesk
fetched into it before (:mod:`vdesk.osworld.fetch`; the steps and getters only read it)::

    DIR/<task id>/<uuid5(URL)>_<file name>    a download step's file (the name of its ``path``)
    DIR/<task id>/<dest>                      a cloud_file getter's file
    DIR/<task id>/<file name>                 either, by its plain name (for hand-made folders)

``uuid5`` is :func:`uuid.uuid5` in the URL namespace. An ``upload_file`` step's ``local_path``
is looked up under ``DIR`` and then beside the task file.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit


@dataclass(frozen=True)
class TaskFiles:
    """One task's files in the folder (``root`` None: there is no folder)."""

    root: Path | None
    task_id: str
    task_dir: Path | None = None   # the folder of the task file

    def download(self, url: str, path: str) -> Path | None:
        """The local copy of a download step's file, or None."""
        name = PurePosixPath(path).name
        return self._first(f"{uuid.uuid5(uuid.NAMESPACE_URL, url)}_{name}", name, _url_name(url))

    def cloud(self, url: str, dest: str) -> Path | None:
        """The local copy of a cloud_file getter's file, or None."""
        return self._first(dest, f"{uuid.uuid5(uuid.NAMESPACE_URL, url)}_{PurePosixPath(dest).name}", _url_name(url))

    def local(self, local_path: str) -> Path | None:
        """An upload_file step's file, or None."""
        for base in (self.root, self.task_dir):
            if base is not None and _inside(base, local_path) and (base / local_path).is_file():
                return base / local_path
        return None

    def where(self) -> str:
        return str(self.root / self.task_id) if self.root is not None else "no --task-files folder"

    def _first(self, *names: str) -> Path | None:
        if self.root is None:
            return None
        folder = self.root / self.task_id
        for name in names:
            if name and _inside(folder, name) and (folder / name).is_file():
                return folder / name
        return None


def _url_name(url: str) -> str:
    return PurePosixPath(unquote(urlsplit(url).path)).name


def _inside(base: Path, name: str) -> bool:
    """A name from a task file stays inside ``base`` (no absolute path, no ``..``)."""
    path = PurePosixPath(name)
    return bool(name) and not path.is_absolute() and ".." not in path.parts and Path(name).anchor == ""

"""Fetching a task's files on the host, into OSWorld's cache layout, when they are not there.

An OSWorld task's ``download`` steps and ``cloud_file`` getters name URLs. vdesk looks their
files up in the task-files folder (:mod:`vdesk.osworld.task_files`); a file that is not there
is fetched here, on the host, before the task's desktop starts, and kept for every later run::

    DIR/<task id>/<uuid5(URL)>_<name of path>   a download step's file (the reference's name)
    DIR/<task id>/<dest>                        a cloud_file getter's file (the reference's name)

The desktop itself never gets a network for this (see ``--network`` for tasks that need the
web inside it). A fetch is bounded: its size (:attr:`FetchSettings.max_bytes`, 1 GiB by
default), each connect and read (:attr:`FetchSettings.timeout`) and its whole time
(:attr:`FetchSettings.total_time`). Only ``http``/``https`` URLs are fetched (redirects too);
Google Drive's are not (the reference fetches those with a Drive client). A file is written
to a temporary name beside its place and renamed there whole, so a fetch cut short leaves
nothing a later run would take for the file. A failure is a :class:`FetchError` naming the
URL and what went wrong.

``vdesk eval`` fetches unless ``--offline``; ``vdesk tasks check`` only says what would be
fetched. With no ``--task-files`` (and no ``cache`` folder in the tree) the folder is
:func:`default_folder`.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from vdesk.errors import FetchError
from vdesk.osworld.format import FetchSettings, OSWorldTask
from vdesk.osworld.task_files import TaskFiles, _inside
from vdesk.progress import Progress

__all__ = ["FetchSettings", "Wanted", "default_folder", "fetch", "fetch_missing", "refusal", "wanted"]

CHUNK = 1 << 20
REPORT_EVERY = 5.0           # seconds between two progress lines of one file
SCHEMES = ("http", "https")
DRIVE_HOSTS = ("drive.google.com", "docs.google.com", "drive.usercontent.google.com")
FOLDER_NAME = "osworld-files"


def default_folder() -> Path:
    """Where fetched files are kept when no folder is given: ``$VDESK_CACHE/osworld-files``
    (``~/.cache/vdesk`` when ``VDESK_CACHE`` is not set)."""
    root = os.environ.get("VDESK_CACHE") or str(Path.home() / ".cache" / "vdesk")
    return Path(root) / FOLDER_NAME


@dataclass(frozen=True)
class Wanted:
    """One file a task names by URL: where it is (``found``), else where it would be fetched
    to (``target``), or why it cannot be fetched (``refused``)."""

    url: str
    found: Path | None
    target: Path | None
    refused: str | None = None

    @property
    def fetchable(self) -> bool:
        return self.found is None and self.refused is None and self.target is not None


def refusal(url: str) -> str | None:
    """Why vdesk does not fetch ``url`` (a phrase), or None when it does."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in SCHEMES or not parts.hostname:
        return "only http and https URLs are fetched"
    if parts.hostname.lower() in DRIVE_HOSTS:
        return "Google Drive URLs are not fetched"
    return None


def wanted(file: OSWorldTask, files: TaskFiles) -> list[Wanted]:
    """Every file the task's ``download`` steps and ``cloud_file`` getters name, once each (a
    URL a step and a getter both name is two files when they name it differently, as in the
    reference's cache)."""
    seen: dict[tuple[str, str], Wanted] = {}
    for step in file.steps():
        if step.type != "download":
            continue
        for item in _dicts(step.parameters.get("files")):
            url, name = str(item.get("url")), PurePosixPath(str(item.get("path", ""))).name
            target = f"{uuid.uuid5(uuid.NAMESPACE_URL, url)}_{name}" if name else ""
            seen.setdefault((url, target), _wanted(url, files.download(url, str(item.get("path", ""))), files, target))
    for _, _, expected, _ in file.evaluator.metrics():
        if expected is not None and expected.type == "cloud_file":
            for url, dest in _cloud_pairs(expected.settings):
                seen.setdefault((url, dest), _wanted(url, files.cloud(url, dest), files, dest))
    return list(seen.values())


def _wanted(url: str, found: Path | None, files: TaskFiles, name: str) -> Wanted:
    if found is not None:
        return Wanted(url, found, None)
    if files.root is None:
        return Wanted(url, None, None, "no task-files folder to fetch into")
    folder = files.root / files.task_id
    if not _inside(folder, name) or not _inside(files.root, files.task_id):
        return Wanted(url, None, None, f"its file name {name!r} would leave the task-files folder")
    return Wanted(url, None, folder / name, refusal(url))


def _cloud_pairs(settings: dict[str, Any]) -> list[tuple[str, str]]:
    """A cloud_file getter's URLs with their ``dest`` names, as the getter pairs them."""
    urls, dests = settings.get("path"), settings.get("dest")
    if isinstance(urls, list):
        names = dests if isinstance(dests, list) else [None] * len(urls)
        return [(str(url), str(dest or PurePosixPath(str(url)).name)) for url, dest in zip(urls, names)]
    return [(str(urls), str(dests if isinstance(dests, str) and dests else PurePosixPath(str(urls)).name))]


def _dicts(value: Any) -> Iterable[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def fetch_missing(file: OSWorldTask, files: TaskFiles, settings: FetchSettings,
                  progress: Progress | None = None, cancel: threading.Event | None = None) -> list[Path]:
    """Fetch every file of the task that is not in the folder yet; the paths fetched.
    :class:`FetchError` on the first that fails (or cannot be fetched, or when ``cancel`` is set)."""
    fetched = []
    for item in wanted(file, files):
        if item.found is not None:
            continue
        if item.refused is not None or item.target is None:
            raise FetchError(f"{item.url}: {item.refused or 'nowhere to fetch it to'}")
        fetched.append(fetch(item.url, item.target, settings, progress, cancel))
    return fetched


_locks: dict[Path, threading.Lock] = {}
_locks_guard = threading.Lock()


def fetch(url: str, target: Path, settings: FetchSettings | None = None, progress: Progress | None = None,
          cancel: threading.Event | None = None) -> Path:
    """``url``'s body into ``target`` (kept when it is there already), within ``settings``'
    bounds; :class:`FetchError` names the URL and why it failed (also when ``cancel`` is set
    between two reads: an interrupted run does not wait for a long fetch). Two threads asking
    for the same target fetch it once."""
    settings = settings or FetchSettings()
    say = progress or _stderr
    with _locks_guard:
        lock = _locks.setdefault(target, threading.Lock())
    with lock:
        if target.is_file():
            return target
        refused = refusal(url)
        if refused is not None:
            raise FetchError(f"{url}: {refused}")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name[-100:]}.", suffix=".part")
        except OSError as error:
            raise FetchError(f"{url}: cannot write into {target.parent}: {error.strerror or error}") from None
        try:
            with os.fdopen(handle, "wb") as out:
                _download(url, out, settings, say, cancel or threading.Event())
            os.replace(temporary, target)
        except OSError as error:  # the disk is full, the place is a folder
            Path(temporary).unlink(missing_ok=True)
            raise FetchError(f"{url}: cannot write {target}: {error.strerror or error}") from None
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return target


def _download(url: str, out: Any, settings: FetchSettings, say: Progress, cancel: threading.Event) -> None:
    started = time.monotonic()
    deadline = started + settings.total_time
    opener = urllib.request.build_opener(_HttpOnlyRedirects)
    request = urllib.request.Request(url, headers={"User-Agent": "vdesk"})
    try:
        with opener.open(request, timeout=settings.timeout) as response:
            length = _length(response.headers.get("Content-Length"))
            if length is not None and length > settings.max_bytes:
                raise FetchError(f"{url}: too big: {_size(length)}, over the bound of {_size(settings.max_bytes)}")
            say(f"fetching {url}" + (f" ({_size(length)})" if length is not None else ""))
            got, reported = 0, started
            while chunk := response.read1(CHUNK):  # what has come, so the bounds are checked as it comes
                got += len(chunk)
                if got > settings.max_bytes:
                    raise FetchError(f"{url}: too big: over the bound of {_size(settings.max_bytes)}")
                out.write(chunk)
                if cancel.is_set():
                    raise FetchError(f"{url}: cancelled ({_size(got)} fetched)")
                now = time.monotonic()
                if now > deadline:
                    raise FetchError(f"{url}: timed out: not fetched within {settings.total_time:g} s "
                                     f"({_size(got)} so far)")
                if now - reported >= REPORT_EVERY:
                    reported = now
                    say(f"fetching {url}: {_size(got)}" + (f" of {_size(length)}" if length else ""))
            if length is not None and got < length:
                raise FetchError(f"{url}: cut short: {_size(got)} of {_size(length)}")
    except FetchError:
        raise
    except urllib.error.HTTPError as error:
        raise FetchError(f"{url}: HTTP {error.code} {error.reason}") from None
    except urllib.error.URLError as error:
        reason = error.reason
        if isinstance(reason, TimeoutError):
            raise FetchError(f"{url}: timed out: no answer within {settings.timeout:g} s") from None
        raise FetchError(f"{url}: {reason}") from None
    except TimeoutError:
        raise FetchError(f"{url}: timed out: no data for {settings.timeout:g} s") from None
    except (OSError, ValueError) as error:  # a connection reset, a malformed answer
        raise FetchError(f"{url}: {type(error).__name__}: {error}") from None
    say(f"fetched {url}: {_size(got)} in {time.monotonic() - started:.1f} s")


class _HttpOnlyRedirects(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only to another http or https URL (urllib would follow ftp too)."""

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
        if urlsplit(newurl).scheme.lower() not in SCHEMES:
            raise FetchError(f"{req.full_url}: redirected to {newurl}, which is not http or https")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _length(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _size(count: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)

"""OSWorld's ``config`` and ``postconfig`` steps, run on a vdesk desktop.

=================== ========================================================================
step                what vdesk does
=================== ========================================================================
launch              start ``command`` (a list, or a string split like a shell; ``shell``)
execute, command    run it and wait (120 s); ``until`` re-runs it every 0.3 s until its
                    ``returncode`` equals or ``stdout``/``stderr`` holds the text; ``stdout``
                    / ``stderr`` name files of the episode's cache (for ``cache_file``)
sleep               wait ``seconds`` here
open                ``xdg-open path`` (or run it when it is no file), wait for a window
                    whose title holds its name, activate it
activate_window,    as ``wmctrl -a`` / ``-c`` with ``window_name``; ``strict`` (``-F``),
close_window        ``by_class`` (``-x``)
download            copy each ``files[].url``'s local copy (see :mod:`vdesk.osworld.task_files`)
                    to ``files[].path`` in the desktop
upload_file         copy ``files[].local_path`` to ``files[].path``
chrome_open_tabs,   open ``urls_to_open`` / close ``urls_to_close`` in the running browser
chrome_close_tabs   through :mod:`vdesk.browser`
update_browse_      make the browser profile's history hold exactly ``history``'s visits
history             (``url``, ``title``, ``visit_time_from_now_in_seconds``); a profile
                    without a History database gets one from the desktop's browser itself,
                    run headless once (the reference uploads a stored empty database instead)
=================== ========================================================================

Commands get ``{CLIENT_PASSWORD}``, ``{SCREEN_WIDTH}``, ``{SCREEN_HEIGHT}``,
``{SCREEN_WIDTH_HALF}`` and ``{SCREEN_HEIGHT_HALF}`` replaced, and a leading ``~`` expanded.
``google-chrome`` runs Chromium where the desktop has no ``google-chrome`` (as the reference
does on ARM). A window that never came for ``activate_window``/``close_window``/``open`` is a
note in the evaluation's detail, not a failure: the reference logs it and goes on.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vdesk.errors import InvalidArgument, SetupError, VdeskError
from vdesk.harness.hosts import DesktopHost
from vdesk.osworld import inside
from vdesk.osworld.format import OSWorldSpec, StepSpec
from vdesk.osworld.task_files import TaskFiles

PASSWORD = "password"           # the reference VM's client password
COMMAND_TIMEOUT = 120.0         # the reference's bound on one execute
OPEN_TIMEOUT = 120.0            # for the window of an opened file (the reference waits up to 1800 s)
WINDOW_TIMEOUT = 5.0            # for a window to activate
MAX_SLEEP = 600.0
TAB_TIMEOUT = 30.0
HISTORY_TIMEOUT = 60.0          # for the browser to make its profile's History database
UPLOAD_LIMIT = 256 * 1024 * 1024
# Steps vdesk cannot run offline: the reason a task using one is skipped.
OFFLINE = {
    "googledrive": "needs Google Drive (the googledrive step)",
    "login": "needs a Google account login (the login step)",
}
# The steps of OSWorld's setup controller (the pinned desktop-env's) vdesk does not run: a task
# using one is skipped. A type in neither list is a typo, which fails the task file.
OSWORLD_ONLY = frozenset({"act", "change_wallpaper", "execute_with_verification", "proxy", "replay", "tidy_desktop",
                          *OFFLINE})


@dataclass
class Context:
    """What the steps and getters of one episode share."""

    host: DesktopHost
    spec: OSWorldSpec
    files: TaskFiles
    cache: Path                                  # this episode's cache folder, on this machine
    home: str = "/"
    notes: list[str] = field(default_factory=list)

    @property
    def screen(self) -> tuple[int, int]:
        return self.host.screen.size

    def expand(self, path: str) -> str:
        """A desktop path with a leading ``~`` expanded."""
        if path == "~" or path.startswith("~/"):
            return self.home.rstrip("/") + path[1:]
        return path

    def substitute(self, text: str) -> str:
        width, height = self.screen
        for name, value in (("CLIENT_PASSWORD", PASSWORD), ("SCREEN_WIDTH_HALF", width // 2),
                            ("SCREEN_HEIGHT_HALF", height // 2), ("SCREEN_WIDTH", width), ("SCREEN_HEIGHT", height)):
            text = text.replace("{" + name + "}", str(value))
        return text

    def argv(self, command: Any, shell: bool = False) -> list[str]:
        """A step's command as an argument vector, placeholders replaced."""
        if isinstance(command, str):
            command = self.substitute(command)
            return ["sh", "-c", command] if shell else [self.expand(part) for part in shlex.split(command)]
        if isinstance(command, list) and command and all(isinstance(part, str) for part in command):
            parts = [self.substitute(part) for part in command]
            return ["sh", "-c", *parts] if shell else [self.expand(part) for part in parts]
        raise InvalidArgument(f"a command must be a string or a list of strings, got {command!r}")

    def call(self, function: Callable[..., Any], *args: Any, timeout: float = 60.0) -> Any:
        return self.host.call(function, *args, timeout=timeout)


def run_steps(context: Context, steps: list[StepSpec], phase: str) -> None:
    """Run steps in order; :class:`SetupError` names the one that failed."""
    for index, step in enumerate(steps):
        try:
            run_step(context, step)
        except (VdeskError, OSError, KeyError, TypeError, ValueError) as error:
            detail = f"{type(error).__name__}: {error}" if not isinstance(error, VdeskError) else str(error)
            raise SetupError(f"task {context.spec.file.id}: {phase} step {index} ({step.type}) failed: {detail}") from None


def run_step(context: Context, step: StepSpec) -> None:
    runner = STEPS.get(step.type)
    if runner is None:
        raise InvalidArgument(OFFLINE.get(step.type, f"the {step.type} step is not supported"))
    runner(context, **step.parameters)


def _launch(context: Context, command: Any, shell: bool = False) -> None:
    argv = context.argv(command, shell)
    if argv[0] == "google-chrome" and not context.call(inside.has_command, "google-chrome"):
        argv[0] = "chromium"
    context.call(inside.start, argv)


def _execute(context: Context, command: Any, shell: bool = False, stdout: str = "", stderr: str = "",
             until: dict[str, Any] | None = None) -> None:
    argv = context.argv(command, shell)
    if until:
        ran = context.call(inside.run_until, argv, until, COMMAND_TIMEOUT, timeout=COMMAND_TIMEOUT + 30)
    else:
        ran = context.call(inside.run, argv, COMMAND_TIMEOUT, timeout=COMMAND_TIMEOUT + 10)
    for name, text in ((stdout, ran.stdout), (stderr, ran.stderr)):
        if name:
            _cache_path(context, name).write_text(text, encoding="utf-8")


def _sleep(context: Context, seconds: float) -> None:
    time.sleep(min(max(float(seconds), 0.0), MAX_SLEEP))


def _open(context: Context, path: str) -> None:
    opened = context.call(inside.open_path, context.expand(path), OPEN_TIMEOUT, timeout=OPEN_TIMEOUT + 30)
    if opened.note:
        context.notes.append(opened.note)


def _activate_window(context: Context, window_name: str, strict: bool = False, by_class: bool = False) -> None:
    note = context.call(inside.activate, window_name, strict, by_class, WINDOW_TIMEOUT, timeout=WINDOW_TIMEOUT + 20)
    if note:
        context.notes.append(note)


def _close_window(context: Context, window_name: str, strict: bool = False, by_class: bool = False) -> None:
    note = context.call(inside.close, window_name, strict, by_class)
    if note:
        context.notes.append(note)


def _download(context: Context, files: list[dict[str, str]]) -> None:
    for item in files:
        local = context.files.download(item["url"], item["path"])
        if local is None:
            raise SetupError(f"{item['url']} is not in the task-files folder ({context.files.where()})")
        _upload(context, local, item["path"])


def _upload_file(context: Context, files: list[dict[str, str]]) -> None:
    for item in files:
        local = context.files.local(item["local_path"])
        if local is None:
            raise SetupError(f"{item['local_path']!r} is not in the task-files folder or beside the task")
        _upload(context, local, item["path"])


def _upload(context: Context, local: Path, path: str) -> None:
    if local.stat().st_size > UPLOAD_LIMIT:
        raise InvalidArgument(f"{local}: over {UPLOAD_LIMIT} bytes, too much to copy into a desktop")
    context.call(inside.put_file, context.expand(path), local.read_bytes(), timeout=120)


def _chrome_open_tabs(context: Context, urls_to_open: list[str]) -> None:
    context.call(inside.open_tabs, list(urls_to_open), TAB_TIMEOUT, timeout=TAB_TIMEOUT * len(urls_to_open) + 60)


def _chrome_close_tabs(context: Context, urls_to_close: list[str]) -> None:
    context.call(inside.close_tabs, list(urls_to_close), timeout=60)


def _update_browse_history(context: Context, history: list[dict[str, Any]]) -> None:
    rows = []
    for item in history if isinstance(history, list) else [None]:
        if not (isinstance(item, dict) and isinstance(item.get("url"), str) and isinstance(item.get("title"), str)
                and isinstance(item.get("visit_time_from_now_in_seconds"), (int, float))):
            raise InvalidArgument(f"a history entry needs url, title (strings) and visit_time_from_now_in_seconds "
                                  f"(a number), got {item!r}")
        rows.append({key: item[key] for key in ("url", "title", "visit_time_from_now_in_seconds")})
    context.call(inside.add_history, rows, HISTORY_TIMEOUT, timeout=HISTORY_TIMEOUT + 60)


def _cache_path(context: Context, name: str) -> Path:
    path = (context.cache / name).resolve()
    if context.cache.resolve() not in path.parents:
        raise InvalidArgument(f"{name!r}: a cache file name must stay inside the cache folder")
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


STEPS: dict[str, Callable[..., None]] = {
    "launch": _launch, "execute": _execute, "command": _execute, "sleep": _sleep, "open": _open,
    "activate_window": _activate_window, "close_window": _close_window, "download": _download,
    "upload_file": _upload_file, "chrome_open_tabs": _chrome_open_tabs, "chrome_close_tabs": _chrome_close_tabs,
    "update_browse_history": _update_browse_history,
}

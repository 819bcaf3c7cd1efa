"""The request bodies of OSWorld's machine server, as its clients send them, and how a command
in one becomes an argument vector.

Each JSON body is a pydantic model with the reference's defaults; keys it does not know are
ignored, as the reference ignores them, and a wrong type is a 400 naming the field. A command
is a list of strings, or a string split like a shell (``shell=False``) or given to ``sh -c``
(``shell=True``); arguments that start with ``~/`` are in the desktop user's home, as the
reference's ``os.path.expanduser`` makes them.
"""

from __future__ import annotations

import shlex
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from vdesk.errors import InvalidArgument

MAX_SCRIPT_TIMEOUT = 3600.0  # seconds a /run_bash_script may ask for
MAX_VERIFY_WAIT = 600.0


class Body(BaseModel):
    model_config = ConfigDict(extra="ignore")


class CommandBody(Body):
    """``/execute``, ``/setup/execute``, ``/setup/launch``."""

    command: str | list[str] | None = None
    shell: bool = False


class Verification(Body):
    window_exists: str | None = None
    command_success: str | None = None


class VerifiedCommandBody(CommandBody):
    """``/setup/execute_with_verification``."""

    verification: Verification = Field(default_factory=Verification)
    max_wait_time: float = Field(10.0, ge=0, le=MAX_VERIFY_WAIT)
    check_interval: float = Field(1.0, ge=0.1, le=60)


class PathBody(Body):
    """``/setup/open_file``, ``/setup/change_wallpaper``, ``/list_directory``."""

    path: str | None = None


class WindowBody(Body):
    """``/setup/activate_window``, ``/setup/close_window``."""

    window_name: str | None = None
    strict: bool = False
    by_class: bool = False


class PythonBody(Body):
    """``/run_python``."""

    code: str | None = None


class BashBody(Body):
    """``/run_bash_script``."""

    script: str | None = None
    timeout: float = Field(100.0, gt=0, le=MAX_SCRIPT_TIMEOUT)
    working_dir: str | None = None


def argv_of(command: Any, shell: bool, home: str) -> list[str]:
    """The argument vector of a command (see the module); :class:`InvalidArgument` when it is
    empty or no command at all."""
    if isinstance(command, str):
        if shell:
            parts = ["sh", "-c", command]
        else:
            try:
                parts = shlex.split(command)
            except ValueError as error:
                raise InvalidArgument(f"command: {error}") from None
    elif isinstance(command, list) and all(isinstance(part, str) for part in command):
        parts = ["sh", "-c", *command] if shell and command else list(command)
    else:
        raise InvalidArgument("command: a string or a list of strings is required")
    if not parts or not parts[0] or (shell and len(parts) > 2 and not parts[2]):
        raise InvalidArgument("command: it is empty")
    if any("\0" in part for part in parts):
        raise InvalidArgument("command: an argument holds a NUL character")
    return [expand_home(part, home) for part in parts]


def expand_home(path: str, home: str) -> str:
    """``~`` and ``~/…`` in the desktop user's home; anything else as it is."""
    if path == "~" or path.startswith("~/"):
        return home.rstrip("/") + path[1:]
    return path


def desktop_path(path: str, home: str) -> str:
    """A path a client names, in the desktop: ``~`` and ``$HOME`` expanded, a relative path taken
    from the home folder (where the reference's server runs); :class:`InvalidArgument` when it
    is empty or holds a NUL."""
    if not path or "\0" in path:
        raise InvalidArgument("file_path: an absolute or ~ path without NUL characters is required")
    path = expand_home(path.replace("${HOME}", home).replace("$HOME", home), home)
    return path if path.startswith("/") else f"{home.rstrip('/')}/{path}"

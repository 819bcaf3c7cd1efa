"""One vdesk desktop served in OSWorld's protocol: the ``vdesk osworld-serve`` process this
package runs, the JSON line it prints when ready, and its ending.

The process is vdesk's own command from vdesk's own virtualenv (``VDESK_BIN``, else ``vdesk`` on
PATH): desktop-env's virtualenv pins gymnasium 0.28, numpy<2 and Pillow 11, vdesk's needs newer
ones, so the two never share an interpreter and talk over the command's stdin/stdout and the
server's HTTP. The command prints ONE JSON line (host, the four ports, name) once the desktop
and its server answer, and runs until its stdin closes or SIGTERM, then removes the desktop.

Who owns the desktop: this process holds the command's stdin. ``stop`` closes it and waits for
the command to exit, which it does after removing the desktop; if this process dies instead,
however it dies, the kernel closes the pipe and the command removes the desktop all the same
(and if the command itself is killed, the desktop's lease removes it). The command runs in a
session of its own so a Ctrl-C at the terminal reaches only this process, whose ``close()`` then
ends it in order, rather than both racing to tear down.
"""

from __future__ import annotations

import json
import logging
import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import IO

logger = logging.getLogger("desktopenv.providers.vdesk")

VDESK_BIN = "VDESK_BIN"          # the environment variable naming the vdesk command
READY_TIMEOUT = 300.0            # the docker provider's own readiness wait
STOP_TIMEOUT = 90.0              # closing stdin: the desktop's removal, then the exit
SIGNAL_TIMEOUT = 30.0            # after SIGTERM, before SIGKILL
LINE_LIMIT = 64 * 1024           # the ready line is ~200 bytes; more is not the command's line
ERROR_TAIL = 2000                # how much of the command's stderr an error quotes
PORT_KEYS = ("server_port", "chromium_port", "vnc_port", "vlc_port")


class VdeskServeError(RuntimeError):
    """The serving command could not be found, did not start, or did not end as it should."""


@dataclass(frozen=True)
class Endpoint:
    """Where one served desktop answers, as the command's JSON line gives it."""

    name: str
    host: str
    server_port: int
    chromium_port: int
    vnc_port: int
    vlc_port: int
    vnc_password: str | None = None

    @classmethod
    def parse(cls, line: bytes) -> Endpoint:
        try:
            data = json.loads(line)
            ports = {key: data[key] for key in PORT_KEYS}
            name, host = data["name"], data["host"]
        except (ValueError, KeyError, TypeError) as error:
            raise VdeskServeError(f"vdesk osworld-serve printed a line that is not its JSON ({error}): {line[:200]!r}") from None
        if not (isinstance(name, str) and isinstance(host, str)) or not all(
                isinstance(port, int) and 0 < port < 65536 for port in ports.values()):
            raise VdeskServeError(f"vdesk osworld-serve printed a line with a bad name, host or port: {line[:200]!r}")
        password = data.get("vnc_password")
        return cls(name=name, host=host, vnc_password=password if isinstance(password, str) else None, **ports)

    def address(self) -> str:
        """desktop-env's "HOST:SERVER:CHROMIUM:VNC:VLC", as its docker provider returns it."""
        return ":".join([self.host, *(str(getattr(self, key)) for key in PORT_KEYS)])


def vdesk_command() -> str:
    """The vdesk executable: ``$VDESK_BIN``, else ``vdesk`` on PATH."""
    configured = os.environ.get(VDESK_BIN)
    if configured:
        if not (os.path.isfile(configured) and os.access(configured, os.X_OK)):
            raise VdeskServeError(f"{VDESK_BIN}={configured} is not an executable file: point it at the vdesk "
                                  "command of vdesk's virtualenv (e.g. /path/to/vdesk/.venv/bin/vdesk)")
        return configured
    found = shutil.which("vdesk")
    if found is None:
        raise VdeskServeError(f"vdesk not found: set {VDESK_BIN} to the vdesk command of vdesk's virtualenv "
                              "(e.g. /path/to/vdesk/.venv/bin/vdesk) or put it on PATH")
    return found


class ServedDesktop:
    """A running ``vdesk osworld-serve``: spawned at once, ``ready()`` waits for its line,
    ``stop()`` ends it and with it the desktop."""

    def __init__(self, image: str, size: tuple[int, int]) -> None:
        argv = [vdesk_command(), "osworld-serve", "--image", image, "--size", f"{size[0]}x{size[1]}"]
        self._stderr: IO[bytes] = tempfile.TemporaryFile(prefix="vdesk-osworld-serve-")
        logger.info("starting a vdesk desktop: %s", " ".join(argv))
        try:
            self._process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=self._stderr, start_new_session=True)
        except OSError as error:
            self._stderr.close()
            raise VdeskServeError(f"cannot run {argv[0]}: {error}") from None
        self.endpoint: Endpoint | None = None

    @property
    def pid(self) -> int:
        return self._process.pid

    def ready(self, timeout: float = READY_TIMEOUT) -> Endpoint:
        """The command's line, read within ``timeout``; on any failure the command is ended."""
        if self.endpoint is None:
            try:
                self.endpoint = Endpoint.parse(self._read_line(timeout))
                _wait_for_screenshot(self.endpoint, timeout)
            except BaseException:
                self.stop()
                raise
            logger.info("vdesk desktop %s serves OSWorld's protocol at %s", self.endpoint.name, self.endpoint.address())
        return self.endpoint

    def stop(self) -> None:
        """Close stdin and wait for the command to remove the desktop and exit; signal it only
        if it does not, and then remove the desktop by name. Idempotent."""
        process = self._process
        if process.returncode is None:
            _close(process.stdin)
            if _wait(process, STOP_TIMEOUT) is None:
                logger.warning("vdesk osworld-serve (pid %d) still runs %.0f s after its stdin closed: SIGTERM", process.pid, STOP_TIMEOUT)
                process.send_signal(signal.SIGTERM)
                if _wait(process, SIGNAL_TIMEOUT) is None:
                    process.kill()
                    process.wait()
                self._remove_by_name()
        _close(process.stdout)
        self._stderr.close()

    def _remove_by_name(self) -> None:
        """The command did not end by itself: remove its desktop with ``vdesk down NAME``."""
        if self.endpoint is None:
            return  # it never said its name; the desktop's lease removes it
        try:
            subprocess.run([vdesk_command(), "down", self.endpoint.name], stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=STOP_TIMEOUT, check=False)
        except (OSError, subprocess.TimeoutExpired, VdeskServeError) as error:
            logger.error("cannot remove vdesk desktop %s (its lease will): %s", self.endpoint.name, error)

    def _read_line(self, timeout: float) -> bytes:
        assert self._process.stdout is not None
        stream = self._process.stdout
        deadline = time.monotonic() + timeout
        buffer = b""
        with selectors.DefaultSelector() as selector:
            selector.register(stream, selectors.EVENT_READ)
            while b"\n" not in buffer:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise VdeskServeError(f"vdesk osworld-serve printed no line within {timeout:.0f} s{self._said()}")
                if not selector.select(min(left, 1.0)):
                    continue
                chunk = os.read(stream.fileno(), 4096)
                if not chunk:
                    self._process.wait()
                    raise VdeskServeError(f"vdesk osworld-serve exited ({self._process.returncode}) before it was ready{self._said()}")
                buffer += chunk
                if len(buffer) > LINE_LIMIT:
                    raise VdeskServeError(f"vdesk osworld-serve printed more than {LINE_LIMIT} bytes without a line end")
        return buffer.split(b"\n", 1)[0]

    def _said(self) -> str:
        """The tail of the command's stderr, for an error message."""
        self._stderr.seek(0, os.SEEK_END)
        size = self._stderr.tell()
        self._stderr.seek(max(0, size - ERROR_TAIL))
        text = self._stderr.read().decode("utf-8", "replace").strip()
        return f": {text}" if text else ""


def _wait_for_screenshot(endpoint: Endpoint, timeout: float) -> None:
    """The docker provider's readiness rule, GET /screenshot answering 200, checked once the
    line is in (the command prints it only when its server answers, so this is one request)."""
    url = f"http://{endpoint.host}:{endpoint.server_port}/screenshot"
    deadline = time.monotonic() + timeout
    reason: object = "no answer"
    while True:
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                if response.status == 200:
                    return
                reason = f"HTTP {response.status}"
        except (urllib.error.URLError, OSError) as error:
            reason = error
        if time.monotonic() > deadline:
            raise VdeskServeError(f"vdesk desktop {endpoint.name} did not answer {url} within {timeout:.0f} s: {reason}")
        time.sleep(0.5)  # a poll interval, not a synchronisation: the loop ends on the answer


def _wait(process: subprocess.Popen[bytes], timeout: float) -> int | None:
    try:
        return process.wait(timeout)
    except subprocess.TimeoutExpired:
        return None


def _close(stream: IO[bytes] | None) -> None:
    if stream is not None:
        try:
            stream.close()
        except OSError:
            pass  # a broken pipe: the command is gone already

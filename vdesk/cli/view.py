"""Watching a desktop live in a browser: noVNC served by websockify on 127.0.0.1.

    with start_viewer(desktop) as viewer:
        print(viewer.url, viewer.password)

The page opens view-only (noVNC's ``view_only``: the viewer's keys and clicks are not sent),
so watching an agent cannot disturb it; ``control=True`` opens it with keyboard and mouse.

websockify runs on this machine (Debian packages ``websockify`` and ``novnc``) and listens on
127.0.0.1 only. It reaches the desktop's VNC server through a private tunnel (so it works with
desktops that have no network), and the VNC server still asks for the desktop's password:
nothing is served without it.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from vdesk.desktop import Desktop
from vdesk.errors import DesktopTimeout, VdeskError, ViewerUnavailable
from vdesk.tunnel import Tunnel  # the type of what Desktop.forward_vnc returns

NOVNC_DIRS = (Path("/usr/share/novnc"), Path("/usr/share/webapps/novnc"))
START_TIMEOUT = 10.0


@dataclass
class Viewer:
    """A running noVNC page for one desktop. Close it (or use ``with``) to stop serving."""

    url: str
    password: str
    port: int
    view_only: bool
    _process: subprocess.Popen[bytes]
    _tunnel: Tunnel

    def close(self) -> None:
        self._process.terminate()
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._tunnel.close()

    @property
    def running(self) -> bool:
        return self._process.poll() is None

    def __enter__(self) -> Viewer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def novnc_dir() -> Path:
    """noVNC's web files; :class:`ViewerUnavailable` says which package brings them."""
    for folder in NOVNC_DIRS:
        if (folder / "vnc.html").is_file():
            return folder
    raise ViewerUnavailable("noVNC is not installed: install the Debian package `novnc`")


def websockify() -> str:
    program = shutil.which("websockify")
    if program is None:
        raise ViewerUnavailable("websockify is not installed: install the Debian package `websockify`")
    return program


def start_viewer(desktop: Desktop, *, port: int = 0, control: bool = False) -> Viewer:
    """Serve noVNC for ``desktop`` on ``127.0.0.1:port`` (0: a free port), view-only unless ``control``."""
    web, program = novnc_dir(), websockify()
    tunnel = desktop.forward_vnc()
    port = port or _free_port()
    process = subprocess.Popen([program, "--web", str(web), f"127.0.0.1:{port}", tunnel.address],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _wait_listening(port, process)
    except BaseException:
        process.kill()
        process.wait()
        tunnel.close()
        raise
    # resize=scale fits the desktop in the window; the password is typed in, not put in the URL.
    view_only = int(not control)
    url = f"http://127.0.0.1:{port}/vnc.html?host=127.0.0.1&port={port}&autoconnect=1&resize=scale&view_only={view_only}"
    # View-only twice over: the page sends nothing, and the password it is given is the desktop's
    # view-only one, so the VNC server would drop what a changed page sent.
    password = desktop.vnc_password if control else desktop.vnc_view_password
    return Viewer(url, password, port, not control, process, tunnel)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            error = process.stderr.read().decode(errors="replace").strip() if process.stderr else ""
            raise VdeskError(f"websockify exited with {process.returncode}: {error[-300:] or 'no output'}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise DesktopTimeout(f"websockify did not listen on 127.0.0.1:{port} within {START_TIMEOUT:g} s")

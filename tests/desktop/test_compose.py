"""`docker compose up` starts one desktop from the same image, VNC on 127.0.0.1 with a password."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from vdesk import images as image

from vdesk.desktop import Desktop

ROOT = Path(__file__).resolve().parents[2]
VDESK = str(Path(sys.executable).parent / "vdesk")
from tests.engine import CLIENT  # noqa: E402  (made on first use, not at import)


@pytest.fixture(autouse=True)
def current_image() -> None:
    """compose runs the image as it is: build it first if the build context changed."""
    image.ensure(CLIENT)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_compose_up_starts_a_password_protected_desktop_on_loopback():
    port = free_port()
    env = {**os.environ, "VDESK_VNC_PASSWORD": "c0mp0se!", "VDESK_VNC_PORT": str(port)}
    project = ["docker-compose", "-p", f"vdeskcompose{port}", "-f", str(ROOT / "compose.yaml")]
    subprocess.run([*project, "up", "-d", "--no-build"], env=env, check=True, capture_output=True, timeout=120)
    try:
        name = f"vdeskcompose{port}_desktop_1"
        with Desktop.attach(name) as desktop:
            assert desktop.vnc.password == "c0mp0se!"
            assert desktop.vnc.address == f"127.0.0.1::{port}"
            ports = desktop.container.attrs["HostConfig"]["PortBindings"]["5900/tcp"]
            assert ports == [{"HostIp": "127.0.0.1", "HostPort": str(port)}]
            assert desktop.screen.shot().size == (1280, 800)
        listed = json.loads(subprocess.run([VDESK, "ls", "--json"], capture_output=True, text=True, check=True).stdout)
        created = datetime.fromisoformat(next(d for d in listed["desktops"] if d["name"] == name)["created"])
        assert abs((datetime.now(timezone.utc) - created).total_seconds()) < 600  # not 1970
    finally:
        subprocess.run([*project, "down", "-t", "2"], env=env, capture_output=True, timeout=120)
    assert not subprocess.run([*project, "ps", "-q"], env=env, capture_output=True, text=True).stdout.strip()


def test_compose_refuses_to_start_without_a_password():
    env = {k: v for k, v in os.environ.items() if k != "VDESK_VNC_PASSWORD"}
    result = subprocess.run(["docker-compose", "-f", str(ROOT / "compose.yaml"), "config"], env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "VDESK_VNC_PASSWORD" in result.stderr


def test_compose_refuses_a_password_longer_than_vnc_uses():
    """VNC uses 8 characters; a 12-character password is refused, saying so, not cut."""
    port = free_port()
    env = {**os.environ, "VDESK_VNC_PASSWORD": "twelve-chars", "VDESK_VNC_PORT": str(port)}
    project = ["docker-compose", "-p", f"vdeskcompose{port}", "-f", str(ROOT / "compose.yaml")]
    subprocess.run([*project, "up", "-d", "--no-build"], env=env, check=True, capture_output=True, timeout=120)
    try:
        container = CLIENT.containers.get(f"vdeskcompose{port}_desktop_1")
        assert container.wait(timeout=30)["StatusCode"] == 2
        assert "VNC uses at most 8" in container.logs().decode()
    finally:
        subprocess.run([*project, "down", "-t", "2"], env=env, capture_output=True, timeout=120)

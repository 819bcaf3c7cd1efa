"""Desktops on another Docker engine: a second dockerd on this machine with its own socket and
data root stands in for a remote one. VNC and X travel through exec tunnels, so nothing is
published beyond that engine, and the lease still removes a desktop whose owner dies."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from tests.desktop.helpers import vdesk_containers, wait_gone
from vdesk.container import remove_container
from vdesk import forks
from vdesk.desktop import Desktop
from vdesk.errors import CheckpointUnavailable
from vdesk.inventory import list_desktops
from vdesk.engine import connect

VDESK = str(Path(sys.executable).parent / "vdesk")


@pytest.fixture(scope="module")
def second_engine() -> Iterator[str]:
    """A second dockerd with its own socket, data root and exec root; removed afterwards."""
    if shutil.which("dockerd") is None:
        pytest.fail("dockerd is not installed (make engine installs it)")
    root = Path(tempfile.mkdtemp(prefix="vdesk-engine2-"))
    url = f"unix://{root}/docker.sock"
    log = (root / "dockerd.log").open("w")
    # Its own network namespace: a second dockerd in ours would take down the first one's bridge.
    # Its own (empty) configuration too: the host's registers vdesk's fork runtime, which this
    # engine is meant to lack.
    (root / "daemon.json").write_text("{}")
    daemon = subprocess.Popen(
        ["unshare", "--net", "dockerd", "--config-file", str(root / "daemon.json"),
         "--host", url, "--data-root", str(root / "data"), "--exec-root", str(root / "exec"),
         "--pidfile", str(root / "docker.pid"), "--bridge", "none", "--iptables=false", "--ip-masq=false"],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                connect(url)
                break
            except Exception:
                if time.monotonic() > deadline or daemon.poll() is not None:
                    raise AssertionError((root / "dockerd.log").read_text()[-2000:])
                time.sleep(0.2)
        yield url
    finally:
        for container in docker.DockerClient(base_url=url).containers.list(all=True):
            remove_container(container)
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=30)
        log.close()
        shutil.rmtree(root, ignore_errors=True)


def test_a_desktop_runs_on_another_engine_and_is_driven_through_tunnels(second_engine):
    with Desktop.up(engine=second_engine) as desktop:
        assert desktop.name in {d.name for d in list_desktops(second_engine)}
        assert desktop.name not in vdesk_containers(docker.from_env())
        assert desktop.container.attrs["HostConfig"]["PortBindings"] in ({}, None)
        desktop.programs.run(["xterm", "-title", "remote"])
        window = desktop.windows.wait_for("remote")
        assert window.viewable
        desktop.windows.focus(window)
        # Typed through the X tunnel into the shell, which proves it ran by what it wrote.
        typed = desktop.input.execute([{"type": "type", "inputs": {"content": "echo hi > /tmp/typed.txt\n"}}])
        assert typed.status == "success", typed.error_message
        deadline = time.monotonic() + 60
        while (shown := desktop.programs.run(["cat", "/tmp/typed.txt"], wait=True)).stdout != "hi\n":
            assert time.monotonic() < deadline, f"the typed command wrote {shown.stdout!r} ({shown.stderr.strip()})"
            time.sleep(0.1)
        assert desktop.screen.shot().size == (1280, 800)
        payload = bytes(range(256)) * 4096  # files travel the engine's exec API too
        desktop.files.write_file("~/remote.bin", payload)
        assert desktop.files.read_file("~/remote.bin") == payload


OWNER = textwrap.dedent("""
    import sys, time
    from vdesk.desktop import Desktop
    desktop = Desktop.up(engine=sys.argv[1])
    print(desktop.name, flush=True)
    time.sleep(600)
""")


def test_the_lease_removes_a_remote_desktop_when_its_owner_is_killed(second_engine):
    client = docker.DockerClient(base_url=second_engine)
    owner = subprocess.Popen([sys.executable, "-c", OWNER, second_engine], stdout=subprocess.PIPE, text=True)
    try:
        name = owner.stdout.readline().strip()
        assert name in vdesk_containers(client)
        owner.kill()
        print(f"remote desktop gone {wait_gone(client, name, timeout=10):.2f} s after SIGKILL")
    finally:
        owner.kill()
        owner.wait()


def test_the_command_line_takes_an_engine(second_engine):
    up = subprocess.run([VDESK, "--engine", second_engine, "up", "--json"], capture_output=True, text=True, timeout=120)
    assert up.returncode == 0, up.stderr
    name = up.stdout.split('"name": "')[1].split('"')[0]
    listed = subprocess.run([VDESK, "--engine", second_engine, "ls", "--json"], capture_output=True, text=True)
    assert name in listed.stdout
    down = subprocess.run([VDESK, "--engine", second_engine, "down", name], capture_output=True, text=True)
    assert down.returncode == 0 and name not in vdesk_containers(docker.DockerClient(base_url=second_engine))


def test_a_checkpoint_forks_only_on_the_engine_that_holds_it(second_engine):
    """The second engine is not set up to checkpoint: checkpointing there says what it lacks in one
    line and leaves the desktop as it was; a checkpoint of this engine is not forked on that one."""
    second = docker.DockerClient(base_url=second_engine)
    with Desktop.up(engine=second_engine) as remote:
        with pytest.raises(CheckpointUnavailable, match=r"^this engine cannot checkpoint desktops: [^\n]+$"):
            remote.checkpoint()
        assert remote.programs.run(["true"], wait=True).returncode == 0 and remote.screen.shot().size == (1280, 800)
        before = vdesk_containers(second)
        with Desktop.up() as local:
            start = local.checkpoint()
            try:
                with pytest.raises(CheckpointUnavailable, match="^this engine cannot checkpoint desktops: "):
                    Desktop.fork(start, engine=second_engine)
                with pytest.raises(CheckpointUnavailable, match="^this engine cannot checkpoint desktops: "):
                    remote.restore(start)
                assert vdesk_containers(second) == before and remote.programs.run(["true"], wait=True).returncode == 0
            finally:
                forks.remove(local.client, start.name)

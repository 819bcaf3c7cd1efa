"""The sandbox holds by default: every property is observed from inside a running desktop
(and, where the engine is the only witness, in the container's configuration)."""

from __future__ import annotations

import json
import socket
import subprocess
import time

import pytest

from tests.desktop.helpers import NO_NETWORK, network_outcome, paints
from vdesk.channel import Completed
from vdesk.container import Limits
from vdesk.desktop import Desktop
from vdesk.errors import PasswordRefused, VdeskError
from vdesk.frames import LiveFramebuffer

RFB_NONE, RFB_VNC_AUTH = 1, 2


def python(desktop: Desktop, code: str, *args: str, timeout: float = 30) -> Completed:
    """Run a small Python probe in the desktop (as the desktop user) and wait for it."""
    return desktop.programs.run(["python3", "-c", code, *args], wait=True, timeout=timeout)


def host_config(desktop: Desktop) -> dict:
    desktop.container.reload()
    return desktop.container.attrs["HostConfig"]


# -- who runs, with what privileges ------------------------------------------------------------
def test_every_process_in_the_desktop_runs_as_the_unprivileged_desktop_user(shared_desktop):
    assert shared_desktop.programs.run(["id", "-u"], wait=True).check().stdout.strip() == "1000"
    uids = shared_desktop.programs.run(["ps", "-eo", "uid=,args="], wait=True).check().stdout.splitlines()
    assert uids and all(line.split()[0] != "0" for line in uids), uids


def test_no_capability_is_left_and_none_can_be_regained(shared_desktop):
    status = shared_desktop.programs.run(["cat", "/proc/self/status", "/proc/1/status"], wait=True).check().stdout
    fields = [line.split(":\t") for line in status.splitlines() if line.startswith(("Cap", "NoNewPrivs"))]
    assert {name for name, _ in fields} == {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs"}
    for name, value in fields:  # this process and PID 1 alike
        assert (int(value) == 1) if name == "NoNewPrivs" else (int(value, 16) == 0), (name, value)
    # A set-uid root program gains nothing: passwd cannot read /etc/shadow, so it reports the
    # account without the password ageing that only /etc/shadow holds (it would, set-uid).
    assert shared_desktop.programs.run(["cat", "/etc/shadow"], wait=True).returncode != 0
    assert shared_desktop.programs.run(["passwd", "-S", "desk"], wait=True).stdout.split() == ["desk", "P"]
    config = host_config(shared_desktop)
    assert config["Privileged"] is False and config["CapDrop"] == ["ALL"] and not config["CapAdd"]
    assert "no-new-privileges" in config["SecurityOpt"]


# -- the file system ---------------------------------------------------------------------------
WRITE_PROBE = """
import errno, json, os, sys
outcome = {}
for folder in sys.argv[1:]:
    path = os.path.join(folder, ".vdesk-write-probe")
    try:
        with open(path, "w") as handle:
            handle.write("x")
        os.unlink(path)
        outcome[folder] = "written"
    except OSError as error:
        outcome[folder] = errno.errorcode[error.errno]
print(json.dumps(outcome))
"""


def test_the_root_file_system_is_read_only_and_only_the_tmpfs_folders_are_writable(shared_desktop):
    folders = ["/", "/usr", "/usr/local/bin", "/etc", "/var/tmp", "/root", "/tmp", "/home/desk", "/dev/shm"]
    outcome = json.loads(python(shared_desktop, WRITE_PROBE, *folders).check().stdout)
    print(outcome)
    assert outcome == {"/": "EROFS", "/usr": "EROFS", "/usr/local/bin": "EROFS", "/etc": "EROFS",
                       "/var/tmp": "EROFS", "/root": "EACCES",
                       "/tmp": "written", "/home/desk": "written", "/dev/shm": "written"}
    # Not even the desktop's own programs can be replaced.
    overwrite = shared_desktop.programs.run(["sh", "-c", "echo evil > /usr/local/bin/vdesk-channel"], wait=True)
    assert overwrite.returncode != 0 and "Read-only file system" in overwrite.stderr
    mounts = shared_desktop.programs.run(["cat", "/proc/mounts"], wait=True).check().stdout.splitlines()
    root = next(line.split() for line in mounts if line.split()[1] == "/")
    assert "ro" in root[3].split(",")
    config = host_config(shared_desktop)
    assert config["ReadonlyRootfs"] is True and set(config["Tmpfs"]) == {"/tmp", "/home/desk"}


FIND_SOCKETS = """
import os, stat
found = []
for top, folders, files in os.walk("/", onerror=lambda error: None):
    if top in ("/proc", "/sys"):
        folders[:] = []
        continue
    for name in files:
        path = os.path.join(top, name)
        try:
            is_socket = stat.S_ISSOCK(os.lstat(path).st_mode)
            if name.endswith(".sock") or is_socket and path != "/tmp/.X11-unix/X0":
                found.append(path)
        except OSError:
            pass
print("\\n".join(found))
"""


def assert_no_host_mounts(desktop) -> None:
    """The only mounts backed by a disk are the engine's own read-only resolv.conf, hostname,
    hosts; nothing else of the host is bound in."""
    mounts = [line.split() for line in desktop.programs.run(["cat", "/proc/mounts"], wait=True).check().stdout.splitlines()]
    from_disk = {target: options for source, target, _type, options, *_ in mounts if source.startswith("/dev/")}
    assert set(from_disk) <= {"/etc/resolv.conf", "/etc/hostname", "/etc/hosts"}, from_disk
    assert all("ro" in options.split(",") for options in from_disk.values())
    config = host_config(desktop)
    assert not config.get("Binds") and not config.get("Mounts") and not config.get("Devices")


def test_nothing_of_the_host_is_mounted_and_there_is_no_docker_socket(shared_desktop):
    # No docker.sock (or any socket but the X server's) anywhere in the desktop's file system.
    assert python(shared_desktop, FIND_SOCKETS).check().stdout.strip() == ""
    assert_no_host_mounts(shared_desktop)
    assert shared_desktop.container.attrs["Mounts"] == []


# -- the network -------------------------------------------------------------------------------


def test_the_desktop_has_no_network_but_loopback(shared_desktop):
    outcome = network_outcome(shared_desktop)
    print(outcome)
    assert outcome == NO_NETWORK
    config = host_config(shared_desktop)
    assert config["NetworkMode"] == "none" and not config["PortBindings"]


def test_bridge_network_is_opt_in_and_publishes_vnc_on_127_0_0_1_only():
    with Desktop.up(network="bridge") as desktop:
        outcome = network_outcome(desktop)
        print(outcome)
        assert set(outcome["interfaces"]) - {"lo"}, "the bridge desktop has no interface but lo"
        assert outcome["connect"] != "Network is unreachable"
        config = host_config(desktop)
        assert config["NetworkMode"] == "bridge"
        assert [b["HostIp"] for b in config["PortBindings"]["5900/tcp"]] == ["127.0.0.1"]
        published = desktop.container.attrs["NetworkSettings"]["Ports"]["5900/tcp"]
        assert [b["HostIp"] for b in published] == ["127.0.0.1"]
        port = int(published[0]["HostPort"])
        assert desktop.vnc.address == f"127.0.0.1::{port}"
        # The published port answers on loopback, with the password only...
        viewer = LiveFramebuffer(desktop.vnc.address, desktop.vnc.password, desktop.name)
        viewer.connect(timeout=10)
        try:
            assert viewer.latest().image.size == (1280, 800)
        finally:
            viewer.close()
        with pytest.raises(PasswordRefused, match="refused the password"):
            LiveFramebuffer(desktop.vnc.address, "wrongpw1", desktop.name).connect(timeout=10)
        # ...and not on this machine's other addresses.
        others = _host_addresses(desktop)
        print(f"VNC published on 127.0.0.1:{port}; refused on {sorted(others)}")
        assert others
        for address in others:
            with pytest.raises(OSError):
                socket.create_connection((address, port), timeout=3).close()


def _host_addresses(desktop: Desktop) -> set[str]:
    """This machine's addresses other than loopback: its outward one and the bridge's gateway."""
    addresses = {n["Gateway"] for n in desktop.container.attrs["NetworkSettings"]["Networks"].values() if n.get("Gateway")}
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # picks the outward address; sends nothing
            addresses.add(probe.getsockname()[0])
        except OSError:
            pass  # no route out: the gateway is the one to try
    return addresses


# -- resource limits ---------------------------------------------------------------------------
CGROUP_LIMITS = """
import json, os
def read(*paths):
    for path in paths:
        if os.path.exists(path):
            with open(path) as handle:
                return handle.read().split()
    return []
memory = read("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
pids = read("/sys/fs/cgroup/pids.max", "/sys/fs/cgroup/pids/pids.max")
cpu = read("/sys/fs/cgroup/cpu.max") or read("/sys/fs/cgroup/cpu/cpu.cfs_quota_us") + read("/sys/fs/cgroup/cpu/cpu.cfs_period_us")
print(json.dumps({"memory": int(memory[0]), "pids": int(pids[0]), "cpus": int(cpu[0]) / int(cpu[1])}))
"""


def test_default_limits_on_memory_cpu_and_processes_are_in_force(shared_desktop):
    seen = json.loads(python(shared_desktop, CGROUP_LIMITS).check().stdout)
    assert seen == {"memory": 2 * 1024**3, "pids": 512, "cpus": 2.0}
    config = host_config(shared_desktop)
    assert (config["Memory"], config["NanoCpus"], config["PidsLimit"]) == (2 * 1024**3, 2 * 10**9, 512)


def test_limits_are_configurable_and_a_memory_hog_is_killed_while_the_desktop_lives_on():
    with Desktop.up(limits=Limits(memory="384m", cpus=1.5, pids=128)) as desktop:
        seen = json.loads(python(desktop, CGROUP_LIMITS).check().stdout)
        assert seen == {"memory": 384 * 1024**2, "pids": 128, "cpus": 1.5}
        hog = python(desktop, "block = b'x' * (768 << 20); print(len(block))", timeout=60)
        print(f"memory hog: exit {hog.returncode}, {hog.stderr.strip()[-80:]!r}")
        assert hog.returncode in (-9, 137, 1) and hog.stdout == ""  # killed, or refused its memory
        assert desktop.input.execute([{"type": "mouse_move", "inputs": {"point": [20, 20]}}]).status == "success"
        assert desktop.screen.shot().size == (1280, 800)


FORK_BOMB = """
import os, time
end = time.time() + 4
while time.time() < end:
    try:
        os.fork()
    except OSError:
        time.sleep(0.01)
os._exit(0)
"""


def test_a_fork_bomb_hits_the_process_limit_and_the_desktop_still_answers():
    with Desktop.up() as desktop:
        desktop.screen.shot()
        # Every process of the bomb forks as fast as it can for 4 s; `timeout` is the backstop.
        desktop.programs.run(["timeout", "-s", "KILL", "10", "python3", "-c", FORK_BOMB])
        started, peak, limit, shots_during = time.monotonic(), 0, 0, 0
        while time.monotonic() - started < 4:
            pids = desktop.container.stats(stream=False, one_shot=True)["pids_stats"]
            peak, limit = max(peak, pids.get("current", 0)), pids["limit"]
            desktop.screen.shot()  # the held VNC connection keeps serving frames throughout
            shots_during += 1
            subprocess.run(["true"], check=True)  # this machine can still start processes
            time.sleep(0.1)
        print(f"fork bomb: peak {peak} processes of a limit of {limit}; {shots_during} screenshots during it")
        # Processes that docker exec starts (the engine's health check, our tunnels) join the
        # container's cgroup without forking, so they can take it a few past the limit.
        assert limit == 512 and limit <= peak <= limit + 16
        # Once the bomb is over, the desktop answers again: a command, an action and a frame.
        deadline = time.monotonic() + 15
        while desktop.container.stats(stream=False, one_shot=True)["pids_stats"]["current"] > 50:
            assert time.monotonic() < deadline, "the bomb's processes did not go away"
            time.sleep(0.2)
        assert desktop.programs.run(["true"], wait=True).returncode == 0
        assert desktop.input.execute([{"type": "click", "inputs": {"point": [30, 30]}}]).status == "success"
        desktop.programs.run(["xsetroot", "-solid", "#00ff00"], wait=True).check()
        paints(desktop, (0, 255, 0))
        assert desktop.is_alive()


# -- VNC ---------------------------------------------------------------------------------------
def _recv(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


def test_vnc_offers_password_authentication_only_and_refuses_a_client_without_it(shared_desktop):
    address = shared_desktop.vnc.address  # a private tunnel socket (no network)
    # A raw RFB handshake: the server offers VNC authentication and nothing else...
    with socket.socket(socket.AF_UNIX) as raw:
        raw.settimeout(5)
        raw.connect(address)
        assert _recv(raw, 12) == b"RFB 003.008\n"
        raw.sendall(b"RFB 003.008\n")
        count = _recv(raw, 1)[0]
        assert list(_recv(raw, count)) == [RFB_VNC_AUTH]
        # ...and a client that picks "no authentication" anyway gets no desktop.
        raw.sendall(bytes([RFB_NONE]))
        assert _recv(raw, 4) in (b"", b"\x00\x00\x00\x01")
    # vncdotool without a password, and with a wrong one, is refused.
    with pytest.raises(VdeskError, match="password required"):
        LiveFramebuffer(address, None, "no-password").connect(timeout=10)  # type: ignore[arg-type]
    wrong = "x" + shared_desktop.vnc.password[1:] if shared_desktop.vnc.password[0] != "x" else "y" + shared_desktop.vnc.password[1:]
    with pytest.raises(PasswordRefused, match="refused the password"):
        LiveFramebuffer(address, wrong, "wrong-password").connect(timeout=10)
    # With the right password it works.
    viewer = LiveFramebuffer(address, shared_desktop.vnc.password, "right-password")
    viewer.connect(timeout=10)
    try:
        assert viewer.latest().image.size == (1280, 800)
    finally:
        viewer.close()


def test_every_desktop_gets_its_own_random_vnc_password(shared_desktop):
    with Desktop.up() as other:
        passwords = [shared_desktop.vnc.password, other.vnc.password]
        assert passwords[0] != passwords[1] and all(len(p) == 8 for p in passwords)
        # The password file is the desktop user's alone, and the password is in no label.
        mode = other.programs.run(["stat", "-c", "%a %U", "/tmp/vdesk/vnc-password"], wait=True).check().stdout.split()
        assert mode == ["600", "desk"]
        assert other.vnc.password not in json.dumps(other.container.labels)

"""Every safety default holds in an apps desktop, and Chromium, which runs without its own
sandbox there, is held by the container's: a page reaches neither the network nor the host.

The sandbox tests of the lean desktop that look at a running desktop run here again, against
an apps desktop (this folder's ``shared_desktop``)."""

from __future__ import annotations

import ipaddress
import json
import re
import socket
import threading
from collections.abc import Iterator

import pytest

from tests.desktop.test_sandbox import (  # noqa: F401  (collected here again, on the apps desktop)
    FIND_SOCKETS,
    assert_no_host_mounts,
    host_config,
    python,
    test_default_limits_on_memory_cpu_and_processes_are_in_force,
    test_every_process_in_the_desktop_runs_as_the_unprivileged_desktop_user,
    test_no_capability_is_left_and_none_can_be_regained,
    test_the_desktop_has_no_network_but_loopback,
    test_the_root_file_system_is_read_only_and_only_the_tmpfs_folders_are_writable,
    test_vnc_offers_password_authentication_only_and_refuses_a_client_without_it,
)
from vdesk.desktop import Desktop, Limits
from vdesk.images import APPS_IMAGE

pytestmark = pytest.mark.desktop
from tests.engine import CLIENT  # noqa: E402  (made on first use, not at import)


def test_the_apps_desktop_runs_the_apps_image_with_the_default_hardening(shared_desktop):
    config = host_config(shared_desktop)
    assert shared_desktop.container.attrs["Config"]["Image"] == APPS_IMAGE  # by name: a rebuild moves the tag
    assert config["ReadonlyRootfs"] is True and config["NetworkMode"] == "none"
    assert set(config["Tmpfs"]) == {"/tmp", "/home/desk"}
    assert config["CapDrop"] == ["ALL"] and "no-new-privileges" in config["SecurityOpt"]


def test_nothing_of_the_host_is_mounted_and_the_only_sockets_are_the_sessions_own(shared_desktop):
    # Besides the X server's: the session bus and the accessibility bus, made in the tmpfs /tmp.
    sockets = set(python(shared_desktop, FIND_SOCKETS).check().stdout.split())
    assert sockets <= {"/tmp/runtime-desk/bus", "/tmp/runtime-desk/at-spi/bus_0"}, sockets
    assert_no_host_mounts(shared_desktop)


# -- Chromium: the container is its sandbox ------------------------------------------------------
def test_chromiums_own_sandbox_cannot_start_under_the_default_seccomp_profile(shared_desktop):
    # The binary itself, without the flags /etc/chromium.d adds: it refuses to run unsandboxed.
    done = shared_desktop.programs.run(["/usr/lib/chromium/chromium", "--headless=new", "--user-data-dir=/tmp/sandboxed",
                               "--dump-dom", "about:blank"], wait=True, timeout=60)
    assert done.returncode != 0
    assert "No usable sandbox" in done.stderr, done.stderr[-2000:]


def test_chromium_runs_unprivileged_under_the_containers_seccomp_filter(shared_desktop):
    shared_desktop.programs.run(["chromium", "--user-data-dir=/tmp/held", "data:text/html,<title>held page</title>"])
    shared_desktop.windows.wait_for("held page", timeout=60)
    listing = shared_desktop.programs.run(["pgrep", "-f", "user-data-dir=/tmp/held"], wait=True).check().stdout.split()
    statuses = shared_desktop.programs.run(["cat", *(f"/proc/{pid}/status" for pid in listing)], wait=True).stdout
    blocks = [block for block in statuses.split("Name:")[1:]]
    assert len(blocks) >= 3, "a browser, a zygote and a renderer at least"
    for block in blocks:
        fields = dict(re.findall(r"^(\w+):\s+(.*)$", block, re.M))
        assert fields["Uid"].split()[0] == "1000" and int(fields["CapEff"], 16) == 0, block[:200]
        assert fields["NoNewPrivs"] == "1" and fields["Seccomp"] == "2", block[:200]  # 2: a filter
    shared_desktop.programs.run(["pkill", "-f", "user-data-dir=/tmp/held"], wait=True)


@pytest.fixture
def host_listener() -> Iterator[tuple[int, list[str]]]:
    """A TCP server on every address of this machine; yields its port and who connected."""
    server = socket.create_server(("0.0.0.0", 0))
    server.settimeout(0.2)
    seen: list[str] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, peer = server.accept()
            except OSError:
                continue
            seen.append(peer[0])
            connection.sendall(b"HTTP/1.0 200 OK\r\nAccess-Control-Allow-Origin: *\r\n\r\nreached")
            connection.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], seen
    stop.set()
    thread.join(timeout=5)
    server.close()


def _host_addresses() -> set[str]:
    """This machine's addresses that a container could try: the bridge gateway and the outward one."""
    addresses = set()
    for config in CLIENT.networks.get("bridge").attrs["IPAM"]["Config"] or []:
        # The engine names the gateway, or leaves it the subnet's first address.
        addresses.add(config.get("Gateway") or str(next(ipaddress.ip_network(config["Subnet"]).hosts())))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # picks the outward address; sends nothing
            addresses.add(probe.getsockname()[0])
        except OSError:
            pass
    return addresses


PAGE = """<!doctype html><title>reach</title><body><script>
const outcome = {};
for (const url of %s) {
  const request = new XMLHttpRequest();
  try { request.open("GET", url, false); request.send(); outcome[url] = "reached " + request.status; }
  catch (error) { outcome[url] = "failed: " + error.name; }
}
document.body.textContent = "OUTCOME" + JSON.stringify(outcome) + "END";
</script></body>"""


def test_a_page_in_chromium_reaches_neither_the_network_nor_the_host(shared_desktop, host_listener):
    port, seen = host_listener
    inside = "http://127.0.0.1:8765/"  # the desktop's own loopback: the control that reaching works
    outside = [f"http://{address}:{port}/" for address in sorted(_host_addresses())]
    outside += ["http://1.1.1.1/", "http://example.com/", f"http://host.docker.internal:{port}/"]
    assert len(outside) >= 4, outside
    shared_desktop.programs.run(["mkdir", "-p", "/home/desk/site"], wait=True).check()
    shared_desktop.programs.run(["tee", "/home/desk/site/reach.html"], stdin=PAGE % json.dumps([inside, *outside]),
                       wait=True).check()
    shared_desktop.programs.run(["python3", "-m", "http.server", "8765", "--bind", "127.0.0.1", "--directory", "/home/desk/site"])
    python(shared_desktop, "import socket, time\nfor _ in range(100):\n  try: socket.create_connection(('127.0.0.1', 8765)).close(); break\n"
                           "  except OSError: time.sleep(0.05)").check()
    done = shared_desktop.programs.run(["chromium", "--headless=new", "--user-data-dir=/tmp/reach", "--dump-dom",
                               "http://127.0.0.1:8765/reach.html"], wait=True, timeout=90)
    match = re.search(r"OUTCOME(.*)END", done.stdout)
    assert match, (done.stdout[-1000:], done.stderr[-2000:])
    outcome = json.loads(match.group(1))
    print(outcome)
    assert outcome.pop(inside) == "reached 200"
    assert outcome == {url: "failed: NetworkError" for url in outside}
    assert seen == [], f"the host's server was reached from {seen}"


def test_a_memory_hog_in_an_apps_desktop_is_killed_and_the_desktop_lives_on():
    with Desktop.up(image="apps", limits=Limits(memory="512m", pids=256), timeout=120) as desktop:
        hog = python(desktop, "x = bytearray(1024 * 1024 * 1024); print('survived')", timeout=60)
        assert hog.returncode != 0 and "survived" not in hog.stdout
        assert desktop.is_alive()
        assert desktop.programs.run(["echo", "still here"], wait=True).check().stdout == "still here\n"
        config = host_config(desktop)
        assert (config["Memory"], config["PidsLimit"]) == (512 * 1024**2, 256)

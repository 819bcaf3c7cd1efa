"""Desktops come up ready, and always go away: on success, on error, and when their owner dies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import docker.errors

import pytest

from tests.desktop.helpers import HANG, vdesk_containers, wait_gone
from tests.desktop.probe import EventProbe, buttons
from vdesk.desktop import Desktop
from vdesk.errors import DesktopGone, ImageError
from vdesk.images import IMAGE_NAMES

from tests.engine import CLIENT  # noqa: E402  (made on first use, not at import)


def test_with_block_removes_the_container_on_success():
    with Desktop.up() as desktop:
        name = desktop.name
        assert name in vdesk_containers(CLIENT)
        assert desktop.screen.shot().size == (1280, 800)
    assert name not in vdesk_containers(CLIENT)


def test_with_block_removes_the_container_on_exception():
    with pytest.raises(RuntimeError):
        with Desktop.up() as desktop:
            name = desktop.name
            raise RuntimeError("the agent crashed")
    assert name not in vdesk_containers(CLIENT)


def test_labels_and_vnc_password_identify_the_desktop():
    with Desktop.up(size=(1024, 768)) as desktop:
        labels = desktop.container.labels
        assert labels["vdesk"] == "desktop" and labels["vdesk.size"] == "1024x768"
        assert str(os.getpid()) in labels["vdesk.owner"] and labels["vdesk.created"]
        assert len(desktop.vnc.password) == 8
        info = desktop.info()
        assert info.size == (1024, 768) and info.leased


def test_down_returns_once_the_desktop_is_gone_though_another_remover_started_first():
    # Closing a desktop releases its lease, and the engine may be auto-removing the container by
    # the time down() asks: the engine then answers "removal already in progress" at once. Here
    # another remover starts together with down(), round after round.
    for _ in range(6):
        desktop = Desktop.up()
        together = threading.Barrier(2)

        def other_remover() -> None:
            together.wait()
            try:
                CLIENT.api.remove_container(desktop.container.id, force=True)
            except docker.errors.APIError:
                pass  # down() came first

        other = threading.Thread(target=other_remover)
        other.start()
        together.wait()
        desktop.down()
        assert desktop.name not in vdesk_containers(CLIENT)
        other.join()


OWNER = textwrap.dedent("""
    import sys, time
    from vdesk.desktop import Desktop
    desktop = Desktop.up()
    print("desktop:", desktop.name, flush=True)  # after any image build's own output
    with desktop:
        time.sleep(600)
""")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_a_desktop_goes_away_when_its_owner_dies(sig):
    owner = subprocess.Popen([sys.executable, "-c", OWNER], stdout=subprocess.PIPE, text=True)
    try:
        name = next(line for line in owner.stdout if line.startswith("desktop: ")).split()[1]
        assert name in vdesk_containers(CLIENT)
        owner.send_signal(sig)
        # It has no time-to-live: only the lease can remove it (HANG only catches a lease that failed).
        elapsed = wait_gone(CLIENT, name, timeout=HANG)
        print(f"{sig.name}: container gone {elapsed:.2f} s after the owner was signalled")
    finally:
        owner.kill()
        owner.wait()


def works(desktop: Desktop) -> None:
    """The desktop takes input (the click arrives in it), runs commands (their output comes
    back) and shows its screen."""
    with EventProbe(desktop) as probe:
        assert desktop.input.execute([{"type": "click", "inputs": {"point": [5, 5]}}], receipt=False).status == "success"
        assert buttons(probe.events()) == [("button_press", 1, 5, 5), ("button_release", 1, 5, 5)]
    assert desktop.programs.run(["echo", "working"], wait=True).check().stdout == "working\n"
    assert desktop.screen.shot().size == (1280, 800)


def test_attach_drives_a_desktop_started_elsewhere():
    started = Desktop.up(lease=False, ttl=300)
    try:
        with Desktop.attach(started.name) as attached:
            assert attached.screen.geometry == started.screen.geometry
            assert attached.vnc.password == started.vnc.password
            works(attached)
        assert started.is_alive()  # leaving an attached desktop's block only disconnects
    finally:
        started.down()
    assert started.name not in vdesk_containers(CLIENT)


def test_stop_then_start_comes_back_working():
    desktop = Desktop.up(lease=False, ttl=300)
    try:
        desktop.close()
        desktop.container.stop(timeout=5)
        desktop.container.start()
        with Desktop.attach(desktop.name) as again:
            deadline = time.monotonic() + HANG  # its X server and VNC server start again
            while True:
                try:
                    assert again.screen.shot().size == (1280, 800)
                    break
                except Exception:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
            works(again)
    finally:
        desktop.down()


def test_ttl_stops_the_desktop_by_itself():
    # 20 s: a loaded machine may take longer than a few seconds to bring it up, and a desktop
    # whose time ran out while it started is an error of `up` (not this test's subject).
    desktop = Desktop.up(lease=False, ttl=20)
    try:
        assert desktop.is_alive()
        deadline = time.monotonic() + 20 + HANG  # its time, then its stop
        while desktop.is_alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not desktop.is_alive()
    finally:
        desktop.down()


def test_a_killed_container_raises_desktop_gone_naming_it():
    with Desktop.up() as desktop:
        desktop.container.kill()
        started = time.monotonic()
        result = desktop.input.execute([{"type": "click", "inputs": {"point": [5, 5]}}])
        assert result.status == "failed" and desktop.name in result.error_message
        with pytest.raises(DesktopGone, match=desktop.name):
            desktop.screen.shot()
        assert time.monotonic() - started < HANG  # neither waited on a desktop that is gone


def test_an_image_name_that_is_none_lists_vdesks_own_by_the_names_up_takes():
    before = vdesk_containers(CLIENT)
    with pytest.raises(ImageError) as raised:
        Desktop.up(image="app")
    assert str(raised.value) == (f"image 'app' not found on the engine (did you mean 'apps'?): name one of vdesk's "
                                 f"own ({', '.join(IMAGE_NAMES)}) or a Docker image the engine has (pull or build it first)")
    assert "(lean, apps, osworld" in str(raised.value)
    assert vdesk_containers(CLIENT) == before  # nothing was started

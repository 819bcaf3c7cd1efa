"""The osworld desktop (``vdesk/desktop-osworld``) gives OSWorld's tasks what their machine
gives them: proved by running, inside a real one, the commands the tasks run."""

from __future__ import annotations

from pathlib import Path
from collections.abc import Iterator

import pytest

from vdesk.container import HARDENING, hardening
from vdesk.desktop import Desktop
from tests.osworld.shell import CHROME_LEFT, sh, until

pytestmark = pytest.mark.desktop
SIZE = (1920, 1080)
BUS = "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus"


@pytest.fixture(scope="module")
def desktop() -> Iterator[Desktop]:
    with Desktop.up(size=SIZE, image="osworld", timeout=180) as desktop:
        yield desktop


def test_the_user_and_home_are_the_reference_machines(desktop):
    assert sh(desktop, 'echo "$(whoami) $(id -u) $HOME $(cd ~ && pwd -P)"').stdout.split() == \
        ["user", "1000", "/home/user", "/home/user"]
    assert sh(desktop, "touch ~/Desktop-probe && ls /home/user/Desktop-probe").returncode == 0


def test_python_has_pyautogui_that_acts_on_the_screen(desktop):
    out = sh(desktop, "python -c 'import pyautogui; pyautogui.moveTo(123, 456); print(*pyautogui.size())'")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1920 1080"
    assert sh(desktop, "xdotool getmouselocation --shell").stdout.split()[:2] == ["X=123", "Y=456"]  # as X saw it
    assert "/usr/local/lib/python3" in sh(desktop, "python -c 'import pyautogui; print(pyautogui.__file__)'").stdout


def test_pyautogui_types_and_presses_keys_into_a_window(desktop):
    sh(desktop, "rm -f /tmp/typed.txt")
    desktop.programs.run(["xterm", "-T", "typing-target", "-e", "bash", "-c", "read line; echo \"$line\" > /tmp/typed.txt"])
    until(desktop, "wmctrl -a typing-target")
    out = sh(desktop, "python -c \"import pyautogui, time; pyautogui.typewrite('hello osworld'); "
                      "pyautogui.press('/'); pyautogui.hotkey('shift', 'a'); pyautogui.press('enter')\"")
    assert out.returncode == 0, out.stderr
    assert until(desktop, "cat /tmp/typed.txt").strip() == "hello osworld/A"


def test_sudo_with_the_reference_password(desktop):
    out = sh(desktop, "echo password | sudo -S id -u")
    assert out.returncode == 0 and out.stdout.strip() == "0", out.stderr
    assert sh(desktop, "echo wrong | sudo -S true").returncode != 0


def test_only_this_profile_relaxes_privileges_and_the_rest_stays(desktop):
    assert "no-new-privileges" in HARDENING["security_opt"]
    for image in ("lean", "apps", "some/other:image"):
        assert hardening(image) is HARDENING
    desktop.container.reload()
    host = desktop.container.attrs["HostConfig"]
    assert not host.get("SecurityOpt") and host["CapDrop"] == ["ALL"] and host["ReadonlyRootfs"] is True
    assert set(host["CapAdd"]) == {"SETUID", "SETGID", "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER"}
    assert host["NetworkMode"] == "none"


def test_sudo_is_refused_in_the_apps_desktop():
    with Desktop.up(size=(1024, 768), image="apps", timeout=120) as apps:
        out = apps.programs.run(["bash", "-c", "command -v sudo || echo none; grep NoNewPrivs /proc/self/status"],
                       wait=True, timeout=30)
    assert "none" in out.stdout and "NoNewPrivs:\t1" in out.stdout


def test_gsettings_round_trip_on_the_session_bus(desktop):
    assert sh(desktop, f"{BUS} gsettings set org.gnome.desktop.background picture-uri 'file:///tmp/wall.png'").returncode == 0
    assert sh(desktop, f"{BUS} gsettings get org.gnome.desktop.background picture-uri").stdout.strip() == "'file:///tmp/wall.png'"
    assert sh(desktop, f"{BUS} gsettings set org.gnome.shell favorite-apps \"['google-chrome.desktop']\"").returncode == 0
    assert sh(desktop, f"{BUS} gsettings get org.gnome.shell favorite-apps").stdout.strip() == "['google-chrome.desktop']"
    power = sh(desktop, f"{BUS} gsettings get org.gnome.settings-daemon.plugins.power sleep-inactive-ac-type")
    assert power.returncode == 0, power.stderr


def test_a_task_opens_its_tab_in_the_browser_it_started_and_no_other(desktop):
    """OSWorld's Chrome tasks start google-chrome and socat, then open tabs at once: the
    browser's port does not answer yet, and vdesk waits for that browser instead of starting a
    second one (a second window and profile), and opens the tab in its first window."""
    from vdesk.osworld import inside

    desktop.programs.run(["bash", "-c", "google-chrome --remote-debugging-port=1337 >/dev/null 2>&1 & "
                               "socat tcp-listen:9222,fork tcp:localhost:1337 >/dev/null 2>&1 &"])
    try:
        inside.open_tabs(desktop, ["https://www.example.com/help"], 30)
        assert sh(desktop, "pgrep -x chromium").returncode == 1  # vdesk's own browser never started
        windows = until(desktop, "wmctrl -lx | grep -F .Google-chrome")
        assert len(windows.strip().splitlines()) == 1, windows
        assert until(desktop, "wmctrl -l | grep -F 'www.example.com - '")  # the tab, shown in that window
        assert inside.address_bar(desktop) == "example.com/help"
    finally:
        sh(desktop, "pkill chrome; pkill socat")
        until(desktop, "! pgrep chrom >/dev/null", explain=CHROME_LEFT)
        # The port free again for the next test's socat, which binds it once and without reuse:
        # the connections this one made hold it in TIME_WAIT for up to a minute.
        until(desktop, "python -c \"import socket; socket.socket().bind(('0.0.0.0', 9222))\"", timeout=90)


def test_google_chrome_answers_cdp_and_pkill_chrome_stops_it(desktop):
    desktop.programs.run(["bash", "-c", "google-chrome --remote-debugging-port=1337 about:blank >/dev/null 2>&1 & "
                               "socat tcp-listen:9222,fork tcp:localhost:1337 >/dev/null 2>&1 &"])
    version = until(desktop, "python -c \"import urllib.request; print(urllib.request.urlopen("
                             "'http://127.0.0.1:9222/json/version', timeout=5).read().decode())\"", timeout=90)
    assert '"Browser"' in version and "webSocketDebuggerUrl" in version
    assert sh(desktop, "test -d ~/.config/google-chrome/Default").returncode == 0
    window = until(desktop, "wmctrl -lx | grep -F 'about:blank - Google Chrome'")  # titled once the page is in
    assert ".Google-chrome " in window
    assert sh(desktop, "wmctrl -a 'Google Chrome'").returncode == 0
    assert sh(desktop, "pkill chrome").returncode == 0
    until(desktop, "! pgrep chrom >/dev/null", explain=CHROME_LEFT)  # every process of it, not only the crash handlers
    sh(desktop, "pkill socat")


def test_vlc_answers_on_its_http_interface(desktop):
    desktop.programs.run(["bash", "-c", "VLC_VERBOSE=-1 vlc --no-audio --no-video-title-show >/dev/null 2>&1"])
    status = until(desktop, "curl -sf -u :password http://127.0.0.1:8080/requests/status.xml", timeout=90)
    assert "<state>" in status
    assert sh(desktop, "curl -s -o /dev/null -w '%{http_code}' -u :wrong http://127.0.0.1:8080/requests/status.xml").stdout == "401"
    sh(desktop, "pkill vlc")


def test_wmctrl_and_the_mime_defaults(desktop):
    assert "Name: GNOME Shell" in sh(desktop, "wmctrl -m").stdout
    assert sh(desktop, "xdg-mime query default video/mp4").stdout.strip() == "org.gnome.Totem.desktop"  # a fresh Ubuntu's
    assert sh(desktop, "xdg-mime query default audio/mpeg").stdout.strip() == "vlc.desktop"
    assert sh(desktop, "xdg-mime query default text/html").stdout.strip() == "google-chrome.desktop"
    assert sh(desktop, "xdg-mime query default application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
                       ).stdout.strip() == "libreoffice-calc.desktop"


def test_files_written_to_the_home_land_in_home_user(desktop, tmp_path):
    desktop.files.write_file("~/notes.txt", b"from the host\n")
    assert sh(desktop, "cat /home/user/notes.txt").stdout == "from the host\n"
    sh(desktop, "mkdir -p /home/user/Desktop && echo made > /home/user/Desktop/out.txt")
    assert desktop.files.read_file("/home/user/Desktop/out.txt") == b"made\n"
    local = tmp_path / "up.txt"
    local.write_text("uploaded")
    desktop.files.upload(local, "/home/user/Documents/up.txt")
    assert sh(desktop, "cat ~/Documents/up.txt").stdout == "uploaded"


@pytest.mark.parametrize(("image", "manager"), [("osworld", "GNOME Shell"), ("osworld-openbox", "Openbox")])
def test_vdesk_up_image_osworld_starts_one_at_the_references_size(image: str, manager: str) -> None:
    """Both desktops of OSWorld's machine, through the CLI: the VM's screen size, each its own
    window manager."""
    import json
    import subprocess
    import sys
    import uuid

    name = f"osworld-cli-{uuid.uuid4().hex[:6]}"
    vdesk = [str(Path(sys.executable).with_name("vdesk"))]
    try:
        out = subprocess.run([*vdesk, "up", "--image", image, "--name", name, "--ttl", "300", "--json"],
                             capture_output=True, text=True, timeout=240, check=True)
        assert json.loads(out.stdout)["size"] == "1920x1080"
        told = subprocess.run([*vdesk, "run", "--wait", name, "--", "wmctrl", "-m"], capture_output=True, text=True, timeout=60)
        assert f"Name: {manager}" in told.stdout, told.stdout + told.stderr
    finally:
        subprocess.run([*vdesk, "down", name], capture_output=True, timeout=120)

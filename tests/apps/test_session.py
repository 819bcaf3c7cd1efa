"""The apps desktop's session: what ``Desktop.up`` promises once it returns (the wallpaper, the
taskbar drawn, the accessibility bus announced and on), and that the taskbar found its launcher
icons in the cache the image ships (it looked none up through the icon themes)."""

from __future__ import annotations

import pytest

from vdesk.desktop import Desktop

pytestmark = pytest.mark.desktop
WALLPAPER = (0x3B, 0x6E, 0x8F)  # session.sh's xsetroot colour
PANEL = (0x1F, 0x2A, 0x33)  # tint2rc's panel background
PANEL_HEIGHT = 30
LAUNCHERS = 8  # tint2rc's launcher_item_app lines
IS_ENABLED = ["gdbus", "call", "--session", "--dest", "org.a11y.Bus", "--object-path", "/org/a11y/bus",
              "--method", "org.freedesktop.DBus.Properties.Get", "org.a11y.Status", "IsEnabled"]
LAUNCHER_ICONS = r"""
for desktop_file in $(sed -n 's/^launcher_item_app = //p' /etc/xdg/tint2/tint2rc); do
  sed -n 's/^Icon=//p' "$desktop_file" | head -1
done
"""


def test_the_first_frame_after_up_has_the_wallpaper_and_the_drawn_taskbar_and_the_bus_is_up():
    with Desktop.up(image="apps", timeout=120) as desktop:
        frame = desktop.screen.shot()  # nothing waited for: what an agent sees first
        width, height = desktop.screen.size
        assert frame.getpixel((width // 2, height // 2)) == WALLPAPER
        assert frame.getpixel((width // 2, height - PANEL_HEIGHT // 2)) == PANEL
        icons = frame.crop((0, height - PANEL_HEIGHT, LAUNCHERS * 32, height))
        assert len(set(icons.getdata())) > 50, "the taskbar's launcher icons are not drawn"
        bus = desktop.programs.run(["xprop", "-root", "AT_SPI_BUS"], wait=True).check().stdout
        assert '= "unix:path=' in bus, bus
        assert desktop.programs.run(IS_ENABLED, wait=True, timeout=20).check().stdout.strip() == "(<true>,)"
        assert desktop.programs.run(["gsettings", "get", "org.gnome.desktop.interface", "toolkit-accessibility"],
                           wait=True, timeout=20).check().stdout.strip() == "true"


def test_the_taskbar_finds_every_launcher_icon_in_the_shipped_cache(shared_desktop):
    shipped = shared_desktop.programs.run(["cat", "/etc/xdg/tint2/icon.cache"], wait=True).check().stdout
    cached = dict(line.rsplit("=", 1) for line in shipped.splitlines())
    icons = shared_desktop.programs.run(["bash", "-c", LAUNCHER_ICONS], wait=True).check().stdout.split()
    assert len(icons) == LAUNCHERS
    for icon in icons:
        path = cached.get(f"Adwaita\t{icon}\t24")
        assert path, f"the launcher icon {icon} is not in docker/apps/tint2-icon.cache"
        shared_desktop.programs.run(["test", "-f", path], wait=True).check()
    # tint2 rewrites its cache when it had to look an icon up: it did not.
    used = shared_desktop.programs.run(["cat", "/home/desk/.cache/tint2/icon.cache"], wait=True).check().stdout
    assert used == shipped

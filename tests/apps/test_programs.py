"""The apps desktop's programs: documents open in the right program, the programs expose
accessibility on the session's AT-SPI bus, and the fonts cover the scripts people write."""

from __future__ import annotations

import pytest

from vdesk.desktop import Desktop

pytestmark = pytest.mark.desktop

ACCESSIBLE_APPS = """
import gi
gi.require_version("Atspi", "2.0")
from gi.repository import Atspi
desktop = Atspi.get_desktop(0)
print("\\n".join(desktop.get_child_at_index(i).get_name() for i in range(desktop.get_child_count())))
"""


def test_xdg_open_sends_each_document_to_its_program():
    with Desktop.up(image="apps", timeout=120) as desktop:
        for path, content in [("page.html", "<title>opened page</title>"), ("notes.txt", "some notes"),
                              ("sheet.csv", "a,b\n1,2\n")]:
            desktop.programs.run(["tee", f"/home/desk/{path}"], stdin=content, wait=True).check()
        desktop.programs.run(["libreoffice", "--headless", "--convert-to", "xlsx", "--outdir", "/home/desk",
                     "/home/desk/sheet.csv"], wait=True, timeout=120).check()
        desktop.programs.run(["libreoffice", "--headless", "--convert-to", "pdf", "--outdir", "/home/desk",
                     "/home/desk/notes.txt"], wait=True, timeout=120).check()
        expected = {"page.html": "chromium", "notes.pdf": "evince", "sheet.xlsx": "libreoffice-calc",
                    "notes.txt": "mousepad"}
        for path, program in expected.items():
            desktop.programs.run(["xdg-open", f"/home/desk/{path}"])
        want = set(expected.values())
        seen: list[str] = []
        for _ in range(120):
            seen = [f"{w.wm_class}: {w.title}" for w in desktop.windows.list()]
            if all(any(name in line.lower() for line in seen) for name in want):
                break
            desktop.screen.settle(quiet=0.5, timeout=10)
        else:
            pytest.fail(f"not every document opened in its program: {seen}")
        assert any("sheet.xlsx" in line for line in seen) and any("notes.pdf" in line for line in seen), seen


def test_gtk_programs_libreoffice_and_chromium_are_on_the_accessibility_bus():
    with Desktop.up(image="apps", timeout=120) as desktop:
        desktop.programs.run(["mousepad"])
        desktop.programs.run(["pcmanfm"])
        desktop.programs.run(["libreoffice", "--calc"])
        desktop.programs.run(["chromium", "data:text/html,<title>accessible page</title><button>Press</button>"])
        for title in ("Mousepad", "desk", "LibreOffice Calc", "accessible page"):
            desktop.windows.wait_for(title, timeout=90)
        names = set(desktop.programs.run(["python3", "-c", ACCESSIBLE_APPS], wait=True, timeout=60).check().stdout.split())
        assert {"mousepad", "pcmanfm", "soffice", "Chromium"} <= names, names


@pytest.mark.parametrize("language", ["en", "zh-cn", "ja", "ko", "ar", "he"])
def test_a_font_covers_each_script(shared_desktop, language):
    families = shared_desktop.programs.run(["fc-list", f":lang={language}", "family"], wait=True).check().stdout
    assert families.strip(), f"no font for {language}"


def test_a_colour_emoji_font_is_installed(shared_desktop):
    found = shared_desktop.programs.run(["fc-list", ":charset=1f600:color=true", "family"], wait=True).check().stdout
    assert "Noto Color Emoji" in found

"""A typed line end is the Return key and a tab the Tab key in every toolkit of the apps desktop,
proved by what each program then did: LibreOffice Writer made a paragraph of each line, Calc
moved to the next cell, GTK's Save dialog saved the file, mousepad kept the lines, Chromium's
address bar went to the page, a GTK2 location bar opened the folder, VLC's Qt dialog opened the
address typed. (xdotool's `type` sends a line end as Linefeed, which only xterm and Chromium take
as Enter.)"""

from __future__ import annotations

import io
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import docx
import pytest

from vdesk.adapters.formats import parse_payloads
from vdesk.desktop import Desktop
from vdesk.harness.checks import document_check
from vdesk.harness.tasks import DocumentCheck

pytestmark = pytest.mark.desktop
VDESK = str(Path(sys.executable).with_name("vdesk"))


@pytest.fixture(scope="module")
def desktop() -> Iterator[Desktop]:
    with Desktop.up(size=(1280, 800), image="apps", timeout=180) as desktop:
        desktop.programs.wait_for_window_manager()
        yield desktop


def until(what: str, probe: Callable[[], Any], timeout: float = 60.0) -> Any:
    """Poll ``probe`` until it gives something true; fail naming ``what`` past the deadline."""
    deadline = time.monotonic() + timeout
    while not (found := probe()):
        if time.monotonic() > deadline:
            pytest.fail(f"{what} within {timeout:g} s")
        time.sleep(0.3)
    return found


def front(desktop: Desktop, title: str, timeout: float = 90) -> None:
    window = desktop.windows.wait_for(title, timeout=timeout)
    desktop.windows.focus(window)
    desktop.screen.settle(quiet=0.5, timeout=15)


def act(desktop: Desktop, *actions: dict[str, Any]) -> None:
    result = desktop.input.execute(list(actions))
    assert result.status == "success", result.error_message


def address_bar_focused(desktop: Desktop) -> bool:
    return bool(desktop.elements.tree().query("entry", "Address and search bar", states=("focused",)))


def type_text(text: str, method: str = "keys") -> dict[str, Any]:
    return {"type": "type", "inputs": {"content": text, "method": method}}


def hotkey(key: str) -> dict[str, Any]:
    return {"type": "hotkey", "inputs": {"key": key}}


def file_text(desktop: Desktop, path: str) -> str | None:
    done = desktop.programs.run(["cat", path], wait=True)
    return done.stdout if done.returncode == 0 else None


def save_as(desktop: Desktop, path: str, method: str = "keys") -> None:
    """Save through LibreOffice's or mousepad's GTK Save dialog: the path typed with a line end,
    no Enter pressed; the dialog must close and the file appear."""
    act(desktop, hotkey("ctrl+shift+s"))
    dialog = desktop.windows.wait_for("^Save( As)?$", regex=True, timeout=60)  # LibreOffice's, mousepad's
    desktop.screen.settle(quiet=0.5, timeout=15)  # the name field has the focus once the dialog is drawn
    # Emptied first: a paste takes the PRIMARY selection, so the entry's selected name would stay.
    act(desktop, hotkey("ctrl+a"), hotkey("BackSpace"), type_text(f"{path}\n", method))
    until(f"the Save dialog did not save {path}", lambda: desktop.programs.run(["test", "-s", path], wait=True).returncode == 0)
    desktop.windows.wait_gone(dialog, timeout=30)


@pytest.fixture(autouse=True)
def programs_closed(desktop: Desktop) -> Iterator[None]:
    """Each test starts its program afresh: whatever it left (an unsaved document) is killed."""
    yield
    for program in ("soffice", "mousepad", "pcmanfm"):
        desktop.programs.run(["pkill", "-9", "-f", program], wait=True)
        until(f"{program} did not end", lambda: desktop.programs.run(["pgrep", "-f", program], wait=True).returncode != 0)


def test_writer_makes_a_paragraph_of_each_typed_line(desktop):
    document = docx.Document()
    document.add_paragraph("")
    buffer = io.BytesIO()
    document.save(buffer)
    desktop.files.write_file("/home/desk/lines.docx", buffer.getvalue())
    desktop.programs.run(["libreoffice", "--writer", "--norestore", "/home/desk/lines.docx"])
    front(desktop, "lines.docx")
    until("Writer's document did not show", lambda: desktop.elements.tree().query("toggle button", "Bold"), 90)
    act(desktop, type_text("Hello\nSecond line.\n"), hotkey("ctrl+s"))

    def paragraphs() -> list[str] | None:
        saved = docx.Document(io.BytesIO(desktop.files.read_file("/home/desk/lines.docx")))
        texts = [paragraph.text for paragraph in saved.paragraphs]
        return texts if any(texts) else None

    assert until("Writer did not save the document", paragraphs) == ["Hello", "Second line.", ""]


@pytest.mark.parametrize("method", ["keys", "paste"])
def test_the_gtk_save_dialog_saves_when_the_typed_path_ends_with_a_line_end(desktop, method):
    path = f"/home/desk/two-{method}.odt"
    desktop.programs.run(["libreoffice", "--writer", "--norestore"])
    front(desktop, "LibreOffice Writer")
    until("Writer's document did not show", lambda: desktop.elements.tree().query("toggle button", "Bold"), 90)
    act(desktop, type_text("One\tcell\nTwo\n"))
    save_as(desktop, path, method)
    check = document_check(desktop, DocumentCheck(document=Path(path).name, paragraphs=["One\tcell", "Two"]))
    assert check.passed, check.detail


def test_calc_moves_down_a_cell_on_each_line_end_of_pyautogui_typing(desktop):
    desktop.programs.run(["libreoffice", "--calc", "--norestore"])
    front(desktop, "LibreOffice Calc")
    until("Calc's sheet did not show", lambda: desktop.elements.tree().query("toggle button", "Bold"), 90)
    # As an OSWorld agent writes it, through the command line: `vdesk exec --format pyautogui`.
    for code in ("pyautogui.typewrite('=1+2\\n')", "pyautogui.write('7\\tright\\n')"):
        run = subprocess.run([VDESK, "exec", desktop.name, "--format", "pyautogui", code],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
    save_as(desktop, "/home/desk/sum.ods")
    check = document_check(desktop, DocumentCheck(document="sum.ods", cells={"A1": 3, "A2": 7, "B2": "right"},
                                                  formulas={"A1": "=1+2"}))
    assert check.passed, check.detail


@pytest.mark.parametrize("method", ["keys", "paste"])
def test_mousepad_keeps_the_typed_line_breaks_and_tabs_in_the_saved_file(desktop, method):
    path = f"/home/desk/lines-{method}.txt"
    desktop.programs.run(["mousepad"])
    front(desktop, "Mousepad")
    act(desktop, type_text("first\nsecond\n\tthird\n", method))
    save_as(desktop, path, method)
    assert until("mousepad did not write the file", lambda: file_text(desktop, path)) == "first\nsecond\n\tthird\n"


def test_chromium_goes_to_the_address_typed_with_a_line_end(desktop):
    desktop.files.write_file("/home/desk/start.html", b"<title>Start page</title><p>start")
    desktop.files.write_file("/home/desk/target.html", b"<title>Target page</title><p>target")
    browser = desktop.browser
    browser.open("file:///home/desk/start.html")
    front(desktop, "Start page")
    act(desktop, hotkey("ctrl+l"))
    # Keys pressed before Chromium has moved the focus to its address bar go to the page: on a
    # loaded machine the first half of the address was lost that way and the rest was searched.
    until("the address bar did not take the focus", lambda: address_bar_focused(desktop), 30)
    act(desktop, type_text("file:///home/desk/target.html\n"))
    until("Chromium did not go to the typed address", lambda: browser.title == "Target page", 30)
    assert browser.url == "file:///home/desk/target.html"


def test_a_gtk2_location_bar_opens_the_folder_typed_with_a_line_end(desktop):
    desktop.programs.run(["sh", "-c", "mkdir -p /home/desk/typed-folder"], wait=True).check()
    desktop.programs.run(["pcmanfm", "/home/desk"])
    front(desktop, "desk")
    batch = parse_payloads("uitars", ["Action: hotkey(key='ctrl l')\n\ntype(content='/home/desk/typed-folder\\n')"],
                           desktop.screen.image())
    result = desktop.input.execute(batch)
    assert result.status == "success", result.error_message
    desktop.windows.wait_for("typed-folder", timeout=30)


def test_vlcs_open_media_dialog_takes_an_address_typed_with_a_line_end():
    """Qt (VLC on the osworld image): the dialog closes on the typed line end and VLC opens it."""
    with Desktop.up(size=(1280, 800), image="osworld-openbox", timeout=180) as vlc_desktop:
        home = vlc_desktop.programs.run(["sh", "-c", "echo $HOME"], wait=True).stdout.strip()
        tone = (f"import wave; w = wave.open('{home}/tone.wav', 'wb'); w.setnchannels(1); w.setsampwidth(2); "
                "w.setframerate(8000); w.writeframes(bytes(2 * 8000 * 20)); w.close()")
        vlc_desktop.programs.run(["python3", "-c", tone], wait=True).check()
        vlc_desktop.programs.run(["vlc", "--no-qt-privacy-ask"])
        front(vlc_desktop, "VLC media player")
        act(vlc_desktop, hotkey("ctrl+n"))  # Media > Open Network Stream: its address field has the focus
        dialog = vlc_desktop.windows.wait_for("Open Media", timeout=60)
        vlc_desktop.screen.settle(quiet=0.5, timeout=15)
        act(vlc_desktop, type_text(f"file://{home}/tone.wav\n"))  # the default receipt: no tree read (it ends VLC)
        vlc_desktop.windows.wait_for("tone.wav - VLC media player", timeout=60)
        vlc_desktop.windows.wait_gone(dialog, timeout=30)

"""desktop.browser on a real apps desktop: a local page served inside it, read and driven."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from vdesk.desktop import Desktop
from vdesk.harness.desktop_files import pack
from vdesk.harness.env import serve
from vdesk.harness.tasks import ServeStep

pytestmark = pytest.mark.desktop
SITE = Path(__file__).resolve().parents[2] / "examples" / "apps" / "site"
ORDER = "http://127.0.0.1:8000/order.html"


@pytest.fixture(scope="module")
def desktop():
    with Desktop.up(size=(1280, 800), image="apps", timeout=120) as desktop:
        desktop.programs.wait_for_window_manager()
        serve(desktop, pack(SITE), ServeStep(serve="site"))
        yield desktop


def test_the_browser_reads_a_local_page(desktop):
    browser = desktop.browser
    browser.open(ORDER)
    assert browser.url == ORDER and browser.title == "Order form"
    assert browser.evaluate("document.querySelectorAll('option').length") == 3
    assert browser.text("h1") == "Order form"
    assert [tab.title for tab in browser.tabs] == ["Order form"]
    window = desktop.windows.wait_for("Order form - Chromium", timeout=10)
    assert window.viewable


def test_a_form_submitted_by_clicks_and_typing_changes_the_page(desktop):
    browser = desktop.browser
    browser.open(ORDER)
    box = browser.evaluate("(() => { const r = document.getElementById('name').getBoundingClientRect();"
                           " return [r.x + r.width / 2, r.y + r.height / 2, window.outerHeight - window.innerHeight]; })()")
    x, y, chrome = box
    point = {"raw": {"x": round(x), "y": round(y + chrome)}}
    desktop.input.execute([{"type": "click", "inputs": {"point": point}},
                     {"type": "type", "inputs": {"content": "Grace"}},
                     {"type": "hotkey", "inputs": {"key": "enter"}}])  # Enter in a field submits the form
    deadline = time.monotonic() + 10
    while browser.title != "Order received" and time.monotonic() < deadline:
        time.sleep(0.05)
    browser.wait_for_load()
    assert browser.url == "http://127.0.0.1:8000/done.html?name=Grace&item=pens"
    assert browser.text("#result") == "Thank you, Grace: one box of pens."


def test_the_handle_answers_from_any_thread(desktop):
    desktop.browser.open(ORDER)
    answers: list[object] = []

    def read_the_title() -> None:
        try:
            answers.append(desktop.browser.title)
        except Exception as error:  # shown by the assertion below, not lost in the thread
            answers.append(error)

    worker = threading.Thread(target=read_the_title)
    worker.start()
    worker.join(120)  # the handle's own call timeout is 30 s; a loaded machine gets more than that
    assert not worker.is_alive(), "the title was not read from another thread within 120 s"
    assert answers == ["Order form"]


def test_closing_the_desktop_stops_the_browser_loop():
    with Desktop.up(size=(800, 600), image="apps", timeout=120) as desktop:
        browser = desktop.browser
        browser.open("about:blank")
        loops = [t for t in threading.enumerate() if t.name == f"vdesk-browser-{desktop.name}"]
        assert len(loops) == 1
    loops[0].join(10)
    assert not loops[0].is_alive()

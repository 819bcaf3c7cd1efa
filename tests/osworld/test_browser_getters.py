"""The browser getters and the update_browse_history step on a real osworld desktop, each
getter's output compared with what OSWorld's own getter returns for the same desktop at the
same moment.

The desktop runs ``google-chrome`` (Chromium) as the tasks start it, with its debugging port
forwarded by ``socat``; vdesk's getters reach it through vdesk's tunnels, the reference's
through :mod:`vdesk.osworld.server` (OSWorld's protocol, CDP beside it), from
``.venv-osworld``. The reference finds the shown tab from the address bar of the accessibility
tree plus ``goto_prefix``; for a ``file://`` page the bar shows the path, so the prefix is
``file://``.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.osworld.plain import plain
from tests.osworld.reference import REPO, reference_python
from tests.osworld.test_server import desktop, served, until  # noqa: F401  (the same osworld desktop and server)
from vdesk.desktop import Desktop
from vdesk.harness.hosts import LocalHost
from vdesk.osworld.format import StepSpec
from vdesk.osworld.getters import getter
from vdesk.osworld.server import Served
from vdesk.osworld.steps import Context, run_step

pytestmark = pytest.mark.desktop
HOME = "/home/user"
SITE = f"{HOME}/site"
SHOP = f"file://{SITE}/shop.html?q=drip+coffee&cat=women&price=over-%2460&brand=nike"
HISTORY = [
    {"url": "https://www.youtube.com/watch?v=dQw4w9WgXcQ", "title": "Never Gonna Give You Up", "visit_time_from_now_in_seconds": 3600},
    {"url": "https://www.nytimes.com/", "title": "The New York Times", "visit_time_from_now_in_seconds": 300},
    {"url": "https://www.bbc.co.uk/", "title": "BBC – Home", "visit_time_from_now_in_seconds": 1500},
]
# A shop's page: classes holding texts (some several times, some with direct text nodes, list
# items with spans, cards with an h3), form fields, a label, and elements reached by XPath.
SHOP_HTML = """<!doctype html><html><head><meta charset="utf-8"><title>Shop – results</title></head><body>
<div class="crumbs"><ul><li class="catAllProducts"><span> Spider-Man </span></li>
<li class="catAllProducts"><span>Toys</span></li><li class="other"><span>Hidden</span></li>
<li class="catAllProducts"><span>Kids</span></li></ul></div>
<div class="filter"> Black </div><div class="filter">$25 - $60</div><div class="filter">On sale</div>
<div class="route">SEA<div class="sep"></div>NYC</div>
<div class="date">  Fri, Dec 5, 2026 </div>
<div class="card"><h3> Apply for a pass </h3><p>x</p></div><div class="card"><h3>October 6, 10:15 AM</h3></div>
<section><form><div><input name="name" value="  James Smith "><input name="mail" value="james.smith@gmail.com">
<textarea>typed words</textarea></div></form></section>
<a class="rank" href="#">Number of Seats (High to Low)</a>
<label>Pick-up location</label>
<span class="tag">women</span><span class="tag">NIKE</span><span class="tag">over $60</span>
<h2 data-automation="header_geo_title">New York City Hotels</h2>
</body></html>"""
HTML_CONFIGS: list[dict[str, Any]] = [
    {"category": "class", "class_singleObject": {"date": "time", "missing": "nothing"},
     "class_multiObject": {"filter": {"0": "first", "2": "third", "7": "eighth"}},
     "class_multiObject_child": {"route": {"0": "start", "1": "end", "4": "fifth"}},
     "class_multiObject_only_child": {"card": {"0": "content", "1": "time"}}},
    {"category": "class", "class_multiObject_search_exist": {"filter": ["Black", "$25 - $60", "On sale", "is_other_exist"]}},
    {"category": "class", "class_multiObject_search_exist": {"filter": ["Black", "Red", "is_other_exist"]}},
    {"category": "xpath", "xpathObject": {"/html/body/a": "rank", "//h2[@data-automation='header_geo_title']": "city",
                                          "//div[@class='date']": "date", "/html/body/nav": "missing"}},
    {"category": "input", "inputObject": {"/html/body/section/form/div/input[1]": "name",
                                          "/html/body/section/form/div/input[2]": "mail",
                                          "/html/body/section/form/div/textarea": "words",
                                          "/html/body/h2": "not a field", "/html/body/nav": "missing"}},
    {"category": "label", "labelObject": {"Pick-up location": "pickup", "No such words": "none"}},
    {"category": "class&url", "class_multiObject": {"tag": ["over $60", "women", "jerseys", "nike"]},
     "url_include_expected": ["over-%2460", "women", "jerseys", "nike"]},
    {"category": "class&url", "class_multiObject_li": {"crumbs": ["Spider-Man", "Toys", "Kids"]},
     "url_include_expected_multichoice": {"drip": "Coffee", "spiderman": "Spider-Man", "cat=women": "Women"}},
    {"category": "nothing we know"},
]
ADDRESS_CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("active_tab_url_parse", {"parse_keys": ["q", "cat", "price", "absent"]}),
    ("active_tab_url_parse", {"parse_keys": ["q", "brand"], "replace": {"brand": "maker"}, "split_list": True}),
    ("url_dashPart", {"partIndex": -1, "needDeleteId": True, "returnType": "string"}),
    ("url_dashPart", {"partIndex": 3, "returnType": "json", "key": "folder"}),
    ("url_path_parse", {"parse_keys": ["Men_regular_size_t", "Price_discount_range"]}),
]
PROFILE_GETTERS = ("enable_safe_browsing", "data_delete_automacally", "find_unpacked_extension_path",
                   "find_installed_extension_name", "shortcuts_on_desktop")
EXTENSION = f"{HOME}/Desktop/helloExtension"

# Runs in .venv-osworld: the reference's getters against the served desktop, each output as
# JSON (tuples as lists, bytes as {"hex": …}; a file path as {"file": path}) or the error.
_CHILD = r"""
import json, logging, os, sys
logging.disable(logging.CRITICAL)
from desktop_env.controllers.python import PythonController
from desktop_env.evaluators import getters

request = json.load(sys.stdin)
class Env:
    vm_platform = "Linux"
    vm_ip, server_port, chromium_port = request["host"], request["server_port"], request["chromium_port"]
    cache_dir = request["cache"]
    controller = PythonController(request["host"], request["server_port"])

from tests.osworld.plain import plain

out = []
for kind, config in request["cases"]:
    try:
        out.append({"value": plain(getattr(getters, "get_" + kind)(Env(), config))})
    except Exception as error:
        out.append({"error": f"{type(error).__name__}: {error}"[:300]})
print("\n" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def context(desktop: Desktop, tmp_path_factory: pytest.TempPathFactory) -> Context:
    return Context(LocalHost(desktop), None, None, tmp_path_factory.mktemp("vdesk-cache"), home=HOME)  # type: ignore[arg-type]


def reference(served: Served, cases: list[tuple[str, dict[str, Any]]], cache: Path) -> list[dict[str, Any]]:
    """Each case's output by OSWorld's own getter against the served desktop."""
    cache.mkdir(exist_ok=True)
    request = {"host": served.host, "server_port": served.server_port, "chromium_port": served.chromium_port,
               "cache": str(cache), "cases": cases}
    done = subprocess.run([str(reference_python()), "-c", _CHILD], input=json.dumps(request), capture_output=True,
                          text=True, timeout=900, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def ours(context: Context, cases: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    answers = []
    for kind, config in cases:
        try:
            answers.append({"value": plain(getter(kind)(context, config))})
        except Exception as error:  # compared too: both must fail
            answers.append({"error": f"{type(error).__name__}: {error}"})
    return answers


def assert_same(cases: list[tuple[str, dict[str, Any]]], mine: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> None:
    differ = [f"{kind} {config}: vdesk {a!r:.400}, reference {b!r:.400}" for (kind, config), a, b in zip(cases, mine, theirs)
              if ("error" in a) != ("error" in b) or a.get("value") != b.get("value")]
    assert not differ, "getters differ from OSWorld's own on the same desktop:\n" + "\n".join(differ)


# -- before the browser starts: the history a task gives it ----------------------------------
def test_update_browse_history_gives_a_fresh_profile_exactly_those_visits(desktop, served, context, tmp_path):
    assert desktop.programs.run(["test", "-e", f"{HOME}/.config/google-chrome/Default/History"], wait=True).returncode != 0
    started = time.time()
    run_step(context, StepSpec(type="update_browse_history", parameters={"history": HISTORY}))
    cases = [("history", {"dest": "history.sqlite"})]
    mine, theirs = ours(context, cases), reference(served, cases, tmp_path / "reference")
    assert_same(cases, mine, theirs)
    rows = mine[0]["value"]
    assert [row[:2] for row in rows] == [[item["url"], item["title"]] for item in HISTORY]
    for row, item in zip(rows, HISTORY):  # Chrome's time: microseconds since 1601
        seconds_ago = started + 11644473600 - row[2] / 1e6
        assert item["visit_time_from_now_in_seconds"] - 60 < seconds_ago < item["visit_time_from_now_in_seconds"] + 60


def test_a_bad_history_entry_is_one_clear_error(context):
    from vdesk.errors import InvalidArgument

    with pytest.raises(InvalidArgument, match="visit_time_from_now_in_seconds"):
        run_step(context, StepSpec(type="update_browse_history", parameters={"history": [{"url": "https://a.example/"}]}))


# -- the browser as the tasks start it --------------------------------------------------------
@pytest.fixture(scope="module")
def browser(desktop: Desktop, served: Served, context: Context) -> str:
    """google-chrome started as the tasks start it (with an unpacked extension), showing the shop."""
    desktop.programs.run(["mkdir", "-p", SITE, EXTENSION], wait=True).check()
    desktop.files.write_file(f"{SITE}/shop.html", SHOP_HTML.encode())
    desktop.files.write_file(f"{SITE}/about.html", b"<html><head><title>About us</title></head><body><h1>About</h1>"
                                              b"<p>We sell coffee makers.</p></body></html>")
    desktop.files.write_file(f"{EXTENSION}/manifest.json", json.dumps(
        {"manifest_version": 3, "name": "Hello Extension", "version": "1.0"}).encode())
    desktop.files.write_file(f"{HOME}/Desktop/game.desktop", b"[Desktop Entry]\nVersion=1.0\nType=Application\n"
                                                       b"Name=Play Puzzle Game 2048\nExec=google-chrome --app=https://play2048.co/\n")
    for command in (["google-chrome", "--remote-debugging-port=1337", f"--load-extension={EXTENSION}", SHOP],
                    ["socat", "tcp-listen:9222,fork", "tcp:localhost:1337"]):
        run_step(context, StepSpec(type="launch", parameters={"command": command}))
    until(lambda: requests.get(f"http://{served.host}:{served.chromium_port}/json/version", timeout=10).ok, "CDP")
    until(lambda: 'name="Address and search bar"' in requests.get(served.url + "/accessibility", timeout=60).json()["AT"]
          and desktop.browser.url == SHOP, "the shop in the address bar")
    return SHOP


def _bar_prefix(served: Served, url: str) -> str:
    """What the reference must put before the address bar's text to get ``url``."""
    from lxml import etree

    tree = etree.fromstring(requests.get(served.url + "/accessibility", timeout=60).json()["AT"].encode())
    shown = [e.text for e in tree.iter("entry") if e.get("name") == "Address and search bar"][0]
    assert shown and url.endswith(shown), (shown, url)
    return url[: len(url) - len(shown)]


def test_html_and_address_parts_of_the_shown_tab_are_the_references(browser, served, context, tmp_path):
    prefix = _bar_prefix(served, browser)
    cases = [("active_tab_html_parse", {"goto_prefix": prefix, **config}) for config in HTML_CONFIGS]
    cases += [(kind, {"goto_prefix": prefix, **config}) for kind, config in ADDRESS_CONFIGS]
    mine, theirs = ours(context, cases), reference(served, cases, tmp_path / "reference")
    assert_same(cases, mine, theirs)
    first, exist, _, xpath, inputs, label, words, crumbs = (answer["value"] for answer in mine[:8])
    # "time" is named twice: the single object's text (read last) wins, as in the reference
    assert first == {"first": "Black", "third": "On sale", "eighth": "", "start": "SEA", "end": "NYC", "fifth": "",
                     "content": "Apply for a pass", "time": "Fri, Dec 5, 2026", "nothing": ""}
    assert exist == {"Black": True, "$25 - $60": True, "On sale": True, "is_other_exist": False}
    assert xpath["city"] == "New York City Hotels" and xpath["missing"] == ""
    assert inputs == {"name": "James Smith", "mail": "james.smith@gmail.com", "words": "typed words",
                      "not a field": "", "missing": ""}
    assert label == {"pickup": "Pick-up location", "none": ""}
    assert words["women"] is True and words["jerseys"] is False and words["is_other_exist"] is False
    assert crumbs == {"spider-man": True, "toys": True, "kids": True, "is_other_exist": False, "coffee": True,
                      "women": True}
    assert mine[len(HTML_CONFIGS)]["value"]["q"] == "drip coffee"


def test_page_info_and_pdf_from_url_read_a_page_as_the_reference_does(browser, served, context, tmp_path):
    from pypdf import PdfReader

    about = f"file://{SITE}/about.html"
    cases = [("page_info", {"url": about}), ("pdf_from_url", {"path": about, "dest": "about.pdf"})]
    mine, theirs = ours(context, cases), reference(served, cases, tmp_path / "reference")
    assert mine[0] == theirs[0] and mine[0]["value"]["title"] == "About us"
    texts = [" ".join(page.extract_text() for page in PdfReader(answer["value"]).pages) for answer in (mine[1], theirs[1])]
    assert texts[0] == texts[1] and "We sell coffee makers." in texts[0]
    assert desktop_url(context) == browser  # the shown tab is still the shop


def desktop_url(context: Context) -> str:
    return getter("active_url_from_accessTree")(context, {"goto_prefix": "file://"})  # the bar shows a file's path


def same_reads(served: Served, context: Context, cases: list[tuple[str, dict[str, Any]]], cache: Path) -> list[Any]:
    """Both getters' outputs, compared once two reads of vdesk's around the reference's agree (the
    browser writes its profile when it likes: a write between two reads is no difference)."""
    found: list[Any] = []

    def same() -> bool:
        before, theirs, after = ours(context, cases), reference(served, cases, cache), ours(context, cases)
        if before != after:
            return False
        assert_same(cases, before, theirs)
        found[:] = [answer.get("value") for answer in before]
        return True
    until(same, "two reads with no write between")
    return found


def test_profile_getters_read_the_running_browsers_profile_as_the_reference_does(browser, served, context, tmp_path):
    until(lambda: EXTENSION in getter("find_unpacked_extension_path")(context, {}), "the extension in Preferences")
    values = dict(zip(PROFILE_GETTERS, same_reads(served, context, [(kind, {}) for kind in PROFILE_GETTERS],
                                                  tmp_path / "reference")))
    assert "Name=Play Puzzle Game 2048\n" in values["shortcuts_on_desktop"]["game.desktop"]
    assert values["data_delete_automacally"] in ("true", "false")
    assert values["enable_safe_browsing"] in ("true", "false")
    # This Chromium keeps no manifest in Preferences for an unpacked extension: the reference's
    # getter then answers its fallback, and so does vdesk's.
    assert values["find_installed_extension_name"] == "Google" or "Hello Extension" in values["find_installed_extension_name"]
    assert getter("chrome_appearance_mode_ui")(context, {}) in ("light", "system")  # a fresh profile follows the system


def test_cookies_and_history_of_the_browser_are_the_references(browser, desktop, served, context, tmp_path):
    """A page of a site served inside the desktop sets a cookie; once the browser has written its
    Cookies database, both read the same rows, and the visits with it."""
    desktop.files.write_file(f"{SITE}/cookie.html", b"<html><head><title>Cookie</title></head><body>"
                                              b"<script>document.cookie = 'session=abc; max-age=86400';</script></body></html>")
    desktop.programs.run(["python3", "-m", "http.server", "8765", "--bind", "127.0.0.1", "--directory", SITE])
    until(lambda: desktop.programs.run(["python3", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8765/')"],
                              wait=True).returncode == 0, "the site inside the desktop")
    desktop.browser.new_tab("http://127.0.0.1:8765/cookie.html")
    cookie = ("cookie_data", {"dest": "Cookies"})
    until(lambda: any(row[1] == "127.0.0.1" for row in getter(cookie[0])(context, cookie[1]) or []),
          "the cookie in the Cookies database", timeout=120)
    cookies, visits = same_reads(served, context, [cookie, ("history", {"dest": "history.sqlite"})], tmp_path / "reference")
    assert any(row[1] == "127.0.0.1" and row[3] == "session" for row in cookies)
    assert HISTORY[0]["url"] in [row[0] for row in visits]
    from vdesk.osworld.metrics import lookup

    assert lookup("is_cookie_deleted")(cookies, {"type": "domains", "domains": [".amazon.com"]}) == 1.0
    assert lookup("check_history_deleted")(visits, {"type": "keywords", "keywords": ["youtube"]}) == 0.0
    assert desktop.browser.close_tabs("http://127.0.0.1:8765/cookie.html") == 1


def test_a_tab_whose_page_did_not_load_shows_the_address_typed(browser, desktop, served, context, tmp_path):
    """With no network every address an agent types ends on the browser's error page, whose
    page is ``chrome-error://chromewebdata/``; the address bar still shows what was typed, which
    is what the reference's getter reads and what tasks judged by the address expect."""
    unreachable = "https://www.example.invalid/help/ticket-delivery?q=faq"
    desktop.browser.new_tab(unreachable)
    try:
        until(lambda: desktop.browser.url == unreachable, "the error page's tab shown")
        cases = [("active_url_from_accessTree", {"goto_prefix": "https://www."})]
        assert_same(cases, ours(context, cases), reference(served, cases, tmp_path / "reference"))
        assert unreachable in [tab.url for tab in desktop.browser.tabs]
    finally:
        assert desktop.browser.close_tabs(unreachable) == 1

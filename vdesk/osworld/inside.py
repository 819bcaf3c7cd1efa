"""What OSWorld's steps and getters do inside a desktop, as functions of a real
:class:`~vdesk.desktop.Desktop`. They run next to it (``DesktopHost.call``), so each is
module-level and takes plain arguments; the host side is :mod:`vdesk.osworld.steps` and
:mod:`vdesk.osworld.getters`.

Windows are found as ``wmctrl`` finds them, over X itself (no ``wmctrl`` needed): a title
contains the name, case ignored; ``strict`` wants the whole title, case kept; ``by_class``
reads ``WM_CLASS`` (``instance.class``) instead of the title.
"""

from __future__ import annotations

import base64
import http.client
import json
import posixpath
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vdesk.channel import Completed
from vdesk.desktop import Desktop
from vdesk.errors import DesktopTimeout, SetupError
from vdesk.idle import program, wait_idle
from vdesk.tunnel import Tunnel
from vdesk.windows import Window

POLL = 0.3  # the reference's pause between two tries of an `until` command
VLC_TARGET = "TCP:127.0.0.1:8080"   # VLC's web interface inside the osworld desktop (its vlcrc)
VLC_PASSWORD = "password"           # ... and its password, as on the reference's machine
VLC_STATUS_LIMIT = 4 << 20          # bytes of a status.xml (VLC's are a few KiB)
TREE_TIMEOUT = 20.0  # a program builds its accessible objects on the first read: seconds, on a busy machine


@dataclass(frozen=True)
class Ran:
    """A command's exit code and output, as they travel back from the desktop."""

    returncode: int
    stdout: str
    stderr: str


def home(desktop: Desktop) -> str:
    """The desktop user's home folder."""
    return desktop.programs.run(["sh", "-c", 'printf %s "$HOME"'], wait=True, timeout=10).stdout or "/"


def run(desktop: Desktop, argv: Sequence[str], timeout: float) -> Ran:
    """Run ``argv`` from the home folder and wait (the reference's ``/setup/execute``)."""
    done: Completed = desktop.programs.run(["sh", "-c", 'cd && exec "$@"', "sh", *argv], wait=True, timeout=timeout)
    return Ran(done.returncode, done.stdout, done.stderr)


def run_until(desktop: Desktop, argv: Sequence[str], until: dict[str, object], timeout: float) -> Ran:
    """Run ``argv`` again every 0.3 s until one of ``until``'s conditions holds: ``returncode``
    equals, ``stdout`` / ``stderr`` contains; :class:`DesktopTimeout` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        ran = run(desktop, argv, timeout=max(1.0, deadline - time.monotonic()))
        if _holds(ran, until):
            return ran
        if time.monotonic() > deadline:
            raise DesktopTimeout(f"{argv[0]!r} did not reach {until} within {timeout:g} s "
                                 f"(last exit code {ran.returncode})")
        time.sleep(POLL)


def _holds(ran: Ran, until: dict[str, object]) -> bool:
    return (("returncode" in until and ran.returncode == until["returncode"])
            or ("stdout" in until and str(until["stdout"]) in ran.stdout)
            or ("stderr" in until and str(until["stderr"]) in ran.stderr))


def start(desktop: Desktop, argv: Sequence[str]) -> None:
    """Start ``argv`` from the home folder and leave it running (``/setup/launch``)."""
    desktop.programs.run(["sh", "-c", 'cd && exec "$@"', "sh", *argv])


def has_command(desktop: Desktop, name: str) -> bool:
    return desktop.programs.run(["sh", "-c", 'command -v "$1" >/dev/null', "sh", name], wait=True, timeout=10).returncode == 0


def file_bytes(desktop: Desktop, path: str, limit: int) -> bytes | None:
    """The bytes of a file (absolute path), None when there is no such file."""
    if desktop.programs.run(["test", "-f", path], wait=True, timeout=30).returncode != 0:
        return None
    return desktop.files.read_file(path, limit=limit)


def put_file(desktop: Desktop, path: str, data: bytes) -> None:
    """Write a file (absolute path), creating its folders (``/setup/upload``)."""
    folder = path.rsplit("/", 1)[0] or "/"
    desktop.programs.run(["mkdir", "-p", folder], wait=True, timeout=30).check()
    desktop.files.write_file(path, data)


def directory_tree(desktop: Desktop, path: str) -> dict[str, Any] | None:
    """A folder as the reference's ``/list_directory`` returns it: a tree of
    ``{"type": "directory"|"file", "name": …, "children": […]}``; None when it is no folder.
    One ``find`` lists it all (its output bounded as every command's is)."""
    if path.startswith("-"):  # else find would take it for an expression
        path = "./" + path
    listing = run(desktop, ["sh", "-c", 'test -d "$1" && exec find "$1" -mindepth 1 -printf "%y %P\\n"', "sh", path], 60)
    if listing.returncode != 0:
        return None
    root: dict[str, Any] = {"type": "directory", "name": posixpath.basename(path.rstrip("/")), "children": []}
    folders = {"": root}
    for line in sorted(listing.stdout.splitlines(), key=lambda text: text[2:]):
        kind, _, relative = line.partition(" ")
        parent, _, name = relative.rpartition("/")
        node: dict[str, Any] = {"type": "directory" if kind == "d" else "file", "name": name}
        if kind == "d":
            node["children"] = []
            folders[relative] = node
        folders.get(parent, root)["children"].append(node)
    return root


# -- windows ----------------------------------------------------------------------------------
def find_windows(desktop: Desktop, name: str, strict: bool, by_class: bool) -> list[Window]:
    """The windows ``wmctrl -a``/``-c`` (with ``-F``, ``-x``) would pick, newest last."""
    windows = desktop.windows.list()

    def label(window: Window) -> str:
        return (desktop.windows.wm_class(window) or window.wm_class) if by_class else window.title

    if strict:
        return [w for w in windows if label(w) == name]
    return [w for w in windows if name.lower() in label(w).lower()]


def wait_window(desktop: Desktop, name: str, strict: bool, by_class: bool, timeout: float) -> Window | None:
    """The newest matching window once one is shown, or None after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        found = [w for w in find_windows(desktop, name, strict, by_class) if w.viewable]
        if found:
            return found[-1]
        if time.monotonic() > deadline:
            return None
        time.sleep(0.1)


def activate(desktop: Desktop, name: str, strict: bool, by_class: bool, timeout: float) -> str | None:
    """Activate the newest matching window; a note saying what was missing, or None."""
    window = wait_window(desktop, name, strict, by_class, timeout)
    if window is None:
        return f"no window {name!r} to activate"
    desktop.windows.focus(window)
    return None


def close(desktop: Desktop, name: str, strict: bool, by_class: bool) -> str | None:
    """Ask the window manager to close the newest matching window (``_NET_CLOSE_WINDOW``)."""
    found = find_windows(desktop, name, strict, by_class)
    if not found:
        return f"no window {name!r} to close"
    desktop.windows.close(found[-1])
    return None


@dataclass(frozen=True)
class Opened:
    """What :func:`open_path` found: the window it activated (None when none came) and a note
    saying what went otherwise than planned."""

    window: Window | None
    note: str | None


def open_path(desktop: Desktop, path: str, timeout: float) -> Opened:
    """``xdg-open`` a file (or run ``path`` as a command when it is no file), wait for a window
    whose title holds its name, or its name without the extension (GIMP titles an image
    ``[name] (imported)``), and activate it (``/setup/open_file``).

    Unlike the reference it also waits (within ``timeout``) for the window's program to go idle
    before activating it: an office program shows its window while the document still loads and
    raises it again once loaded, taking the focus from whatever a later step activated (a
    terminal launched next got Calc's keys on a loaded machine)."""
    is_file = desktop.programs.run(["test", "-e", path], wait=True, timeout=10).returncode == 0
    start(desktop, ["xdg-open", path] if is_file else ["sh", "-c", path])
    name = path.rstrip("/").rsplit("/", 1)[-1] if is_file else path.split()[0].rsplit("/", 1)[-1]
    stem = posixpath.splitext(name)[0] if is_file else ""
    started = time.monotonic()
    window = _wait_titled(desktop, [name, stem] if stem and stem != name else [name], timeout)
    if window is None:
        return Opened(None, f"no window titled {name!r} within {timeout:g} s of opening {path!r}")
    note = None
    if (program_name := program(desktop, window)) is not None:
        try:
            wait_idle(desktop, program_name, timeout=max(1.0, timeout - (time.monotonic() - started)))
        except DesktopTimeout as error:  # still busy: activate it anyway, as the reference does
            note = f"opening {path!r}: {error}"
    desktop.windows.focus(window)
    return Opened(window, note)


def _wait_titled(desktop: Desktop, names: list[str], timeout: float) -> Window | None:
    """The newest shown window whose title holds one of ``names`` (the first name first)."""
    deadline = time.monotonic() + timeout
    while True:
        for name in names:
            found = [w for w in find_windows(desktop, name, False, False) if w.viewable]
            if found:
                return found[-1]
        if time.monotonic() > deadline:
            return None
        time.sleep(0.1)


def window_size(desktop: Desktop, class_name: str) -> dict[str, int] | None:
    """The size of the newest window of that class (``vm_window_size``)."""
    found = find_windows(desktop, class_name, False, True)
    return {"width": found[-1].width, "height": found[-1].height} if found else None


def screen_size(desktop: Desktop) -> dict[str, int]:
    """The root window's size as the X server answers now (``vm_screen_size``): not the size the
    desktop was asked for, so a screen changed since (xrandr) is seen as it is."""
    geometry = desktop.windows.request(lambda display: display.screen().root.get_geometry())
    return {"width": int(geometry.width), "height": int(geometry.height)}


# OSWorld's machine runs Google Chrome, and its getters find the browser's tree by that name
# (active_tab_info, active_url_from_accessTree); the desktop's browser is Chromium, which AT-SPI
# names so.
OSWORLD_APP_NAMES = {"Chromium": "Google Chrome"}


def accessibility_xml(desktop: Desktop) -> str:
    """The whole accessibility tree in OSWorld's XML (``accessibility_tree``), its applications
    named as on OSWorld's machine."""
    from vdesk.accessibility.osworld_xml import to_xml
    from vdesk.accessibility.tree import TreeLimits

    return to_xml(desktop.elements.tree(TreeLimits(details=True, timeout=TREE_TIMEOUT)), OSWORLD_APP_NAMES)


def terminal_text(desktop: Desktop, timeout: float) -> str | None:
    """The text of the focused terminal in GNOME Terminal's active window, as the reference's
    ``/terminal`` reads it (``vm_terminal_output``): None unless there is exactly one."""
    from vdesk.accessibility.tree import TreeLimits

    tree = desktop.elements.tree(TreeLimits(timeout=timeout, details=False), apps=("gnome-terminal-server",))
    found: list[str] = []
    for app in tree.applications:
        for frame in app.root.children:
            if frame.role == "frame" and "active" in frame.states:
                found += [node.text or "" for node in frame.walk()
                          if node.role == "terminal" and "focused" in node.states]
    return found[0].rstrip() if len(found) == 1 else None


# -- the browser ------------------------------------------------------------------------------
def open_tabs(desktop: Desktop, urls: list[str], timeout: float) -> None:
    for url in urls:
        desktop.browser.new_tab(url, timeout=timeout)


def close_tabs(desktop: Desktop, urls: list[str]) -> None:
    for url in urls:
        desktop.browser.close_tabs(url)


def active_tab(desktop: Desktop) -> dict[str, str]:
    """The shown tab's title, address and text (``active_tab_info``)."""
    browser = desktop.browser
    return {"title": browser.title, "url": browser.url,
            "content": str(browser.evaluate("document.documentElement ? document.documentElement.innerText : ''"))}


def tabs(desktop: Desktop) -> list[dict[str, str]]:
    return [{"title": tab.title, "url": tab.url} for tab in desktop.browser.tabs]


def active_url(desktop: Desktop) -> str:
    return desktop.browser.url


ADDRESS_BAR = "Address and search bar"


def address_bar(desktop: Desktop) -> str | None:
    """What the browser's address bar shows, read from the accessibility tree as the reference's
    ``active_url_from_accessTree`` reads it (the first bar of the browser's application; None
    without one, or when it is empty). Not the tab's address over CDP: an address typed with no
    network (the error page) or still loading is shown in the bar before any page of it exists,
    and the bar hides ``https://`` and ``www.``, which the task's ``goto_prefix`` puts back."""
    from defusedxml import ElementTree

    root = ElementTree.fromstring(accessibility_xml(desktop))
    for application in root.iter("application"):
        if application.get("name") == OSWORLD_APP_NAMES["Chromium"]:
            bars = [entry for entry in application.iter("entry") if entry.get("name") == ADDRESS_BAR]
            if bars:
                return bars[0].text or None
    return None


# -- VLC -------------------------------------------------------------------------------------
def vlc_status(desktop: Desktop, timeout: float = 10.0) -> bytes | None:
    """VLC's ``/requests/status.xml`` as its web interface serves it inside the desktop (basic
    auth, no user, the password), through a tunnel opened for this one request; None when VLC
    does not answer, or answers with another status than 200, as the reference's getter."""
    tunnel = Tunnel(desktop.client.api, desktop.id, VLC_TARGET, tcp_port=0)
    try:
        host, port = tunnel.address.rsplit(":", 1)
        connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
        token = base64.b64encode(f":{VLC_PASSWORD}".encode()).decode()
        try:
            connection.request("GET", "/requests/status.xml", headers={"Authorization": f"Basic {token}"})
            response = connection.getresponse()
            body = response.read(VLC_STATUS_LIMIT + 1)
        except (OSError, http.client.HTTPException):
            return None
        finally:
            connection.close()
        return body if response.status == 200 and len(body) <= VLC_STATUS_LIMIT else None
    finally:
        tunnel.close()


# What the page-reading getters ask of the shown tab, in one round trip: each query is
# [kind, selector]; each answer is a list of raw strings (stripped on the host, as the reference
# strips them in Python), or null where the selector is not valid. CSS queries reach into open
# shadow roots, as Playwright's CSS engine does.
_PAGE_PARTS = r"""(queries) => {
  const all = (css) => {
    const found = [];
    const walk = (root) => {
      found.push(...root.querySelectorAll(css));
      for (const element of root.querySelectorAll('*')) if (element.shadowRoot) walk(element.shadowRoot);
    };
    walk(document);
    return found;
  };
  const byXpath = (xpath) => {
    const hits = document.evaluate(xpath, document, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
    for (let i = 0; i < hits.snapshotLength; i++) {
      if (hits.snapshotItem(i).nodeType === Node.ELEMENT_NODE) return hits.snapshotItem(i);
    }
    return null;
  };
  const answer = ([kind, selector]) => {
    try {
      if (kind === 'text') return all(selector).map((e) => e.textContent ?? '');
      if (kind === 'direct') {
        const first = all(selector)[0];
        return first ? Array.from(first.childNodes).filter((n) => n.nodeType === Node.TEXT_NODE)
          .map((n) => n.textContent.trim()).filter(Boolean) : [];
      }
      if (kind === 'li') return all(selector + ' li.catAllProducts').map((e) => e.querySelector('span'))
        .filter(Boolean).map((span) => span.innerText);
      if (kind === 'h3') return all(selector).map((e) => e.querySelector('h3')).filter(Boolean)
        .map((h3) => h3.textContent ?? '');
      const element = byXpath(selector);
      if (!element) return [];
      if (kind === 'xpath') return [element.textContent ?? ''];
      if (kind === 'value' && ['INPUT', 'TEXTAREA', 'SELECT'].includes(element.tagName)) return [element.value];
      return null;
    } catch (error) {
      return null;
    }
  };
  return queries.map(answer);
}"""


def page_parts(desktop: Desktop, queries: list[tuple[str, str]], timeout: float) -> list[list[str] | None]:
    """The shown tab's parts for ``queries`` (see ``_PAGE_PARTS``), once it has loaded."""
    browser = desktop.browser
    try:
        browser.wait_for_load(timeout=timeout)
    except DesktopTimeout:
        pass  # the reference reads a page that never finished loading too
    answers = browser.evaluate(_PAGE_PARTS, [list(query) for query in queries], timeout=timeout)
    return [None if answer is None else [str(text) for text in answer] for answer in answers]


def first_text(desktop: Desktop, selector: str) -> str | None:
    """The text of the first element a Playwright selector (``text=…`` too) finds in the shown tab."""
    return desktop.browser.text(selector)


def visit(desktop: Desktop, url: str, pdf: bool, timeout: float) -> Any:
    """``url`` read in a tab of its own (:meth:`vdesk.browser.Browser.visit`)."""
    return desktop.browser.visit(url, pdf=pdf, timeout=timeout)


# Runs in the desktop (its python3): makes sure the browser's profile has a History database,
# letting the browser create it (headless, then stopped) when there is none, so its tables are
# those the desktop's browser version reads; then replaces its visits with the given ones, each
# dated that many seconds before the desktop's now. Chrome's times are microseconds since 1601.
_ADD_HISTORY = r"""
import json, os, shutil, sqlite3, subprocess, sys, time
rows, deadline = json.loads(sys.argv[1]), time.monotonic() + float(sys.argv[2])
chrome = shutil.which("google-chrome")
profile = os.path.expanduser("~/.config/google-chrome" if chrome else "~/.config/chromium")
path = os.path.join(profile, "Default", "History")

def ready():
    try:
        with sqlite3.connect("file:" + path + "?mode=ro", uri=True, timeout=1) as db:
            return db.execute("SELECT count(*) FROM sqlite_master WHERE name IN ('urls', 'visits')").fetchone()[0] == 2
    except sqlite3.Error:
        return False

if not os.path.exists(path):
    argv = [chrome or "chromium", "--headless=new", "--no-sandbox", "--no-first-run", "--disable-gpu",
            "--user-data-dir=" + profile, "about:blank"]
    browser = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        while not ready():
            if time.monotonic() > deadline or browser.poll() is not None:
                sys.exit("the browser made no History database in its profile " + profile)
            time.sleep(0.2)
    finally:
        browser.terminate()
        try:
            browser.wait(max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            browser.kill()
            browser.wait()
epoch = (time.time() + 11644473600) * 1000000   # now, in microseconds since 1601-01-01 (UTC)
db = sqlite3.connect(path, timeout=10)
with db:
    db.execute("DELETE FROM visits")
    db.execute("DELETE FROM urls")
    for row in rows:
        when = int(epoch - float(row["visit_time_from_now_in_seconds"]) * 1000000)
        url_id = db.execute("INSERT INTO urls (url, title, visit_count, typed_count, last_visit_time, hidden) "
                            "VALUES (?, ?, 1, 0, ?, 0)", (row["url"], row["title"], when)).lastrowid
        db.execute("INSERT INTO visits (url, visit_time, from_visit, transition, segment_id, visit_duration) "
                   "VALUES (?, ?, 0, 805306368, 0, 0)", (url_id, when))
db.close()
"""


def add_history(desktop: Desktop, rows: list[dict[str, Any]], timeout: float) -> None:
    """Make the browser profile's history hold exactly ``rows`` (``url``, ``title``,
    ``visit_time_from_now_in_seconds``), as typed visits (``update_browse_history``)."""
    ran = run(desktop, ["python3", "-c", _ADD_HISTORY, json.dumps(rows), str(timeout)], timeout + 15)
    if ran.returncode != 0:
        lines = (ran.stderr.strip() or ran.stdout.strip() or f"exit code {ran.returncode}").splitlines()
        raise SetupError(f"writing the browser's history failed: {lines[-1]}")

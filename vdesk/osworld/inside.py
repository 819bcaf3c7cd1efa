"""What OSWorld's steps and getters do inside a desktop, as functions of a real
:class:`~vdesk.desktop.Desktop`. They run next to it (``DesktopHost.call``), so each is
module-level and takes plain arguments; the host side is :mod:`vdesk.osworld.steps` and
:mod:`vdesk.osworld.getters`.

Windows are found as ``wmctrl`` finds them, over X itself (no ``wmctrl`` needed): a title
contains the name, case ignored; ``strict`` wants the whole title, case kept; ``by_class``
reads ``WM_CLASS`` (``instance.class``) instead of the title.
"""

from __future__ import annotations

import posixpath
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from Xlib import X, Xatom, display as xdisplay, error as xerror
from Xlib.protocol import event as xevent

from vdesk.channel import Completed
from vdesk.desktop import Desktop
from vdesk.errors import DesktopTimeout
from vdesk.idle import program, wait_idle
from vdesk.windows import Window

MAX_CLASS_BYTES = 512
POLL = 0.3  # the reference's pause between two tries of an `until` command
TREE_TIMEOUT = 20.0  # a program builds its accessible objects on the first read: seconds, on a busy machine


@dataclass(frozen=True)
class Ran:
    """A command's exit code and output, as they travel back from the desktop."""

    returncode: int
    stdout: str
    stderr: str


def home(desktop: Desktop) -> str:
    """The desktop user's home folder."""
    return desktop.run(["sh", "-c", 'printf %s "$HOME"'], wait=True, timeout=10).stdout or "/"


def run(desktop: Desktop, argv: Sequence[str], timeout: float) -> Ran:
    """Run ``argv`` from the home folder and wait (the reference's ``/setup/execute``)."""
    done: Completed = desktop.run(["sh", "-c", 'cd && exec "$@"', "sh", *argv], wait=True, timeout=timeout)
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
    desktop.run(["sh", "-c", 'cd && exec "$@"', "sh", *argv])


def has_command(desktop: Desktop, name: str) -> bool:
    return desktop.run(["sh", "-c", 'command -v "$1" >/dev/null', "sh", name], wait=True, timeout=10).returncode == 0


def file_bytes(desktop: Desktop, path: str, limit: int) -> bytes | None:
    """The bytes of a file (absolute path), None when there is no such file."""
    if desktop.run(["test", "-f", path], wait=True, timeout=30).returncode != 0:
        return None
    return desktop.files.read_file(path, limit=limit)


def put_file(desktop: Desktop, path: str, data: bytes) -> None:
    """Write a file (absolute path), creating its folders (``/setup/upload``)."""
    folder = path.rsplit("/", 1)[0] or "/"
    desktop.run(["mkdir", "-p", folder], wait=True, timeout=30).check()
    desktop.write_file(path, data)


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
def _classes(desktop: Desktop) -> dict[int, str]:
    """Each managed window's ``WM_CLASS`` as ``instance.class``."""
    def ask(display: xdisplay.Display) -> dict[int, str]:
        root = display.screen().root
        reply = root.get_property(display.intern_atom("_NET_CLIENT_LIST"), Xatom.WINDOW, 0, 1 << 16)
        found: dict[int, str] = {}
        for window_id in (reply.value if reply is not None else []):
            try:
                value = display.create_resource_object("window", window_id).get_property(
                    Xatom.WM_CLASS, Xatom.STRING, 0, MAX_CLASS_BYTES // 4)
            except (xerror.BadWindow, xerror.BadDrawable):
                continue
            parts = value.value.decode("latin-1").rstrip("\0").split("\0") if value else []
            found[int(window_id)] = ".".join(parts)
        return found
    return desktop.windows.request(ask)


def find_windows(desktop: Desktop, name: str, strict: bool, by_class: bool) -> list[Window]:
    """The windows ``wmctrl -a``/``-c`` (with ``-F``, ``-x``) would pick, newest last."""
    windows = desktop.windows.list()
    classes = _classes(desktop) if by_class else {}

    def label(window: Window) -> str:
        return classes.get(window.id, window.wm_class) if by_class else window.title

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

    def send(display: xdisplay.Display) -> None:
        root = display.screen().root
        message = xevent.ClientMessage(window=found[-1].id, client_type=display.intern_atom("_NET_CLOSE_WINDOW"),
                                       data=(32, [X.CurrentTime, 2, 0, 0, 0]))
        root.send_event(message, event_mask=X.SubstructureRedirectMask | X.SubstructureNotifyMask)
        display.flush()
    desktop.windows.request(send)
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
    is_file = desktop.run(["test", "-e", path], wait=True, timeout=10).returncode == 0
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
    from vdesk.accessibility.tree import Limits

    return to_xml(desktop.accessibility_tree(Limits(details=True, timeout=TREE_TIMEOUT)), OSWORLD_APP_NAMES)


def terminal_text(desktop: Desktop, timeout: float) -> str | None:
    """The text of the focused terminal in GNOME Terminal's active window, as the reference's
    ``/terminal`` reads it (``vm_terminal_output``): None unless there is exactly one."""
    from vdesk.accessibility.tree import Limits

    tree = desktop.accessibility_tree(Limits(timeout=timeout, details=False), apps=("gnome-terminal-server",))
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

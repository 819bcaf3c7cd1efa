"""The accessibility tree of a real apps desktop names what a person sees, with bounds a click at
their centre hits (proved by what the program then did); element actions click the right thing
and a missing element fails cleanly; OSWorld's XML parses with its namespaces; marks number what
can be clicked."""

from __future__ import annotations

import io
import json
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from unittest.mock import ANY

import docx
import pytest

from vdesk.accessibility.osworld_xml import NAMESPACES, TABLE_HEADER, linearize, to_xml
from vdesk.accessibility.tree import TreeLimits, Tree
from vdesk.desktop import Desktop

pytestmark = pytest.mark.desktop

FORM = """<!doctype html><title>Form page</title><h1>Sign up</h1>
<label>Name <input id="n"></label> <label><input type="checkbox" id="c"> Agree</label>
<button type="button" onclick="document.getElementById('out').textContent='Submitted '+document.getElementById('n').value+(document.getElementById('c').checked?' agreed':'')">Submit</button>
<p id="out">Nothing yet</p>"""


@pytest.fixture(scope="module")
def desktop() -> Iterator[Desktop]:
    with Desktop.up(size=(1280, 800), image="apps", timeout=180) as desktop:
        yield desktop


@pytest.fixture(scope="module")
def form(desktop: Desktop) -> Desktop:
    """Chromium showing the form, opened once for the tests that read or use it: each asks for
    it, so any of them runs alone (``-k``) as well as in order."""
    desktop.files.write_file("/home/desk/form.html", FORM.encode())
    desktop.programs.run(["chromium", "file:///home/desk/form.html"])
    _front(desktop, "Form page")
    _wait(desktop, lambda t: t.query("push button", "Submit"), "the form's button did not appear")
    desktop.screen.settle(quiet=1.0, timeout=15)  # Chromium's tree follows its layout with a delay
    return desktop


def _front(desktop: Desktop, title: str, timeout: float = 90) -> None:
    window = desktop.windows.wait_for(title, timeout=timeout)
    desktop.windows.focus(window)
    desktop.screen.settle(quiet=0.3, timeout=10)


def _wait(desktop: Desktop, predicate, what: str, timeout: float = 30.0) -> Tree:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        tree = desktop.elements.tree(TreeLimits(timeout=20))  # a program's first read can be slow
        if predicate(tree):
            return tree
        if time.monotonic() > deadline:
            pytest.fail(f"{what} within {timeout:g} s; errors: {tree.errors()}; the table:\n{linearize(tree, 6000)}")
        time.sleep(0.3)


def _texts(tree: Tree) -> str:
    return "\n".join(node.text or "" for node in tree.nodes())


def test_chromium_form_is_named_and_element_clicks_fill_and_submit_it(desktop, form):
    _front(desktop, "Form page")
    tree = desktop.elements.tree()
    assert tree.find("heading", "Sign up")
    assert tree.find("check box", "Agree")
    entry = tree.find("entry", "Name")
    assert entry.bounds is not None and entry.bounds.width > 50
    # One action a call, as an agent sends them: a click chained straight after another in one
    # xdotool run can be lost by Chromium (seen with the check box), whatever names its point.
    for action in ({"type": "click", "inputs": {"element": {"role": "check box", "name": "Agree"}}},
                   {"type": "click", "inputs": {"element": {"role": "entry", "name": "Name"}}},
                   {"type": "type", "inputs": {"content": "Ada"}},
                   {"type": "click", "inputs": {"element": {"role": "push button", "name": "Submit"}}}):
        result = desktop.input.execute([action])
        assert result.status == "success", (action, result)
    _wait(desktop, lambda t: "Submitted Ada agreed" in _texts(t), "the page did not say 'Submitted Ada agreed'")


def test_a_missing_element_fails_cleanly_naming_the_query_and_candidates(desktop, form):
    _front(desktop, "Form page")
    result = desktop.input.execute([{"type": "type", "inputs": {"content": "never typed"}},
                              {"type": "click", "inputs": {"element": {"role": "push button", "name": "Sbmit"}}}])
    assert result.status == "failed" and result.executed == 0
    assert "name='Sbmit'" in result.error_message and "Submit" in result.error_message
    assert "never typed" not in _texts(desktop.elements.tree())


def test_the_osworld_xml_parses_with_its_namespaces(desktop, form):
    _front(desktop, "Form page")
    tree = desktop.elements.tree(TreeLimits(details=True))
    root = ET.fromstring(to_xml(tree))
    assert root.tag == "desktop-frame"
    chromium = root.find("application[@name='Chromium']")
    assert chromium is not None
    button = chromium.find(".//push-button[@name='Submit']")
    assert button is not None
    assert button.get(f"{{{NAMESPACES['st']}}}showing") == "true"
    x, y = (int(v) for v in button.get(f"{{{NAMESPACES['cp']}}}screencoord").strip("()").split(","))
    w, h = (int(v) for v in button.get(f"{{{NAMESPACES['cp']}}}size").strip("()").split(","))
    node = tree.find("push button", "Submit")
    assert (x, y, w, h) == tuple(round(v) for v in (node.bounds.x, node.bounds.y, node.bounds.width, node.bounds.height))
    entry = chromium.find(".//entry[@name='Address and search bar']")
    assert entry is not None and "form.html" in (entry.text or "")


def test_calc_toolbar_bounds_are_corrected_so_bold_is_hit(desktop):
    desktop.programs.run(["libreoffice", "--calc", "--norestore"])
    _front(desktop, "LibreOffice Calc")
    tree = _wait(desktop, lambda t: t.query("toggle button", "Bold"), "Calc's Bold button did not appear")
    bold = tree.find("toggle button", "Bold")
    assert "checked" not in bold.states
    assert bold.bounds is not None and bold.bounds.y > 48  # below the menu bar, not 26 px over it
    assert desktop.input.execute([{"type": "click", "inputs": {"element": {"role": "toggle button", "name": "Bold"}}}]).status == "success"
    _wait(desktop, lambda t: "checked" in t.find("toggle button", "Bold").states, "Bold did not turn on")


def test_writer_bold_clicked_at_its_centre_makes_the_saved_text_bold(desktop, tmp_path):
    document = docx.Document()
    document.add_paragraph("")
    buffer = io.BytesIO()
    document.save(buffer)
    desktop.files.write_file("/home/desk/letter.docx", buffer.getvalue())
    desktop.programs.run(["libreoffice", "--writer", "--norestore", "/home/desk/letter.docx"])
    _front(desktop, "letter.docx")
    tree = _wait(desktop, lambda t: any("Writer" in n.name for n in t.query("frame")) and t.query("toggle button", "Bold"),
                 "Writer's Bold button did not appear", timeout=90)
    x, y = tree.find("toggle button", "Bold").bounds.centre
    desktop.input.execute([{"type": "click", "inputs": {"point": {"normalized": {"x": x / 1280, "y": y / 800}}}}])
    _wait(desktop, lambda t: any("checked" in n.states for n in t.query("toggle button", "Bold")), "Bold did not turn on")
    result = desktop.input.execute([{"type": "type", "inputs": {"content": "Strong words"}},
                              {"type": "hotkey", "inputs": {"key": "ctrl+s"}}])
    assert result.status == "success", result
    deadline = time.monotonic() + 30
    while True:
        saved = docx.Document(io.BytesIO(desktop.files.read_file("/home/desk/letter.docx")))
        runs = [run for paragraph in saved.paragraphs for run in paragraph.runs if run.text.strip()]
        if runs or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert runs and "".join(r.text for r in runs) == "Strong words"
    assert all(run.bold for run in runs), [(r.text, r.bold) for r in runs]


def test_a_gtk2_program_is_named_and_its_toolbar_button_is_hit_at_its_centre(desktop):
    desktop.programs.run(["pcmanfm", "/home/desk"])
    _front(desktop, "desk")
    tree = _wait(desktop, lambda t: any(n.app == "pcmanfm" for n in t.query("push button", "Parent Folder")),
                 "pcmanfm's Parent Folder button did not appear")
    assert any(n.app == "pcmanfm" for n in tree.query("menu", "File"))
    x, y = tree.find("push button", "Parent Folder").bounds.centre
    desktop.input.execute([{"type": "click", "inputs": {"point": {"normalized": {"x": x / 1280, "y": y / 800}}}}])
    desktop.windows.wait_for("home", timeout=30)  # it went up from /home/desk


def test_marks_number_the_clickable_elements_and_a_mark_number_clicks_one(desktop, form):
    _front(desktop, "Form page")
    _wait(desktop, lambda t: t.query("push button", "Submit"), "the form's button was not on screen")
    marks = desktop.elements.marks()
    assert marks.image.size == (1280, 800)
    submit = next(m for m in marks.marks if m.role == "push button" and m.name == "Submit")
    assert submit.source == "tree"
    assert f"{submit.number}\tpush-button\tSubmit" in marks.table()
    # The entry first takes the focus, then its text is replaced: a ctrl+a that Chromium takes
    # before the click's focus selects nothing (seen once on a quiet machine: "AdaGrace").
    name = {"role": "entry", "name": "Name"}
    assert desktop.input.execute([{"type": "click", "inputs": {"element": name}}]).status == "success"
    _wait(desktop, lambda t: t.query("entry", "Name", states=("focused",)), "the entry did not take the focus")
    for action in ({"type": "hotkey", "inputs": {"key": "ctrl+a"}}, {"type": "type", "inputs": {"content": "Grace"}}):
        assert desktop.input.execute([action]).status == "success"
    _wait(desktop, lambda t: any(n.text == "Grace" for n in t.query("entry", "Name")), "the entry did not read Grace")
    assert desktop.input.execute([{"type": "click", "inputs": {"element": submit.number}}]).status == "success"
    _wait(desktop, lambda t: "Submitted Grace" in _texts(t), "the mark's click did not submit")
    stale = desktop.input.execute([{"type": "click", "inputs": {"element": 9999}}])
    assert stale.status == "failed" and "no mark 9999" in stale.error_message


def test_a_program_without_accessibility_is_reported_as_such(desktop):
    desktop.programs.run(["xterm", "-title", "plain terminal"])
    desktop.windows.wait_for("plain terminal", timeout=60)
    tree = desktop.elements.tree()
    assert "plain terminal" in [w.title for w in tree.silent]
    assert any(w["title"] == "plain terminal" for w in tree.to_json()["silent"])


def test_marks_fall_back_to_text_read_on_a_window_without_a_tree(desktop):
    desktop.programs.run(["xterm", "-geometry", "60x10+300+300", "-title", "ocr terminal", "-e", "bash", "-c",
                 "echo Launch sequence ready; sleep 600"])
    window = desktop.windows.wait_for("ocr terminal", timeout=60)
    desktop.windows.focus(window)
    desktop.screen.settle(quiet=0.5, timeout=10)
    marks = desktop.elements.marks()
    assert marks.sources.get("ocr terminal") == "ocr"
    read = [m for m in marks.marks if m.source == "ocr"]
    assert any("sequence ready" in m.name for m in read), [m.name for m in read]
    assert all(m.source == "tree" for m in marks.marks if m.role == "push button")


def test_a_program_that_hangs_is_named_and_the_others_still_come_back(desktop, form):
    desktop.programs.run(["mousepad"])
    desktop.windows.wait_for("Mousepad", timeout=60)
    _wait(desktop, lambda t: any(a.name == "mousepad" for a in t.applications), "mousepad did not join the bus")
    desktop.programs.run(["pkill", "-STOP", "-x", "mousepad"], wait=True).check()
    try:  # the bound leaves Chromium's form time to come back on a loaded machine; mousepad never does
        tree = desktop.elements.tree(TreeLimits(timeout=10))
    finally:
        desktop.programs.run(["pkill", "-CONT", "-x", "mousepad"], wait=True)
    assert any("mousepad" in error for error in tree.errors()), tree.errors()
    assert tree.query("push button", "Submit")  # Chromium's form is still there


def test_vdesk_tree_prints_the_table_and_the_xml(desktop, form, capsys):
    from vdesk.cli.app import invoke

    assert invoke(["tree", desktop.name, "--format", "table", "--app", "Chromium"]) == 0
    assert "push-button\tSubmit" in capsys.readouterr().out
    assert invoke(["tree", desktop.name, "--format", "xml", "--app", "Chromium"]) == 0
    root = ET.fromstring(capsys.readouterr().out)
    assert root.find(".//push-button[@name='Submit']") is not None


def test_vdesk_tree_json_is_a_line_per_node_and_an_app_not_there_is_named_with_those_that_are(desktop, form, capsys):
    from vdesk.cli import run

    assert run(["tree", desktop.name, "--app", "Chromium"]) == 0
    out = capsys.readouterr().out
    data = json.loads(out)
    nodes = sum(1 for app in data["applications"] for _ in _json_nodes(app["tree"]))
    assert nodes > 20 and len(out.splitlines()) <= 2 * nodes + 4  # a line per node, and one closing its children
    assert all(isinstance(v, int | float) for v in data["applications"][0]["tree"]["children"][0]["bounds"])
    assert run(["tree", desktop.name, "--app", "Chromium", "--indent", "2"]) == 0
    assert json.loads(capsys.readouterr().out) == data | {"elapsed_ms": ANY}
    assert run(["tree", desktop.name, "--app", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"vdesk: no application named 'nosuch' on the accessibility bus of desktop {desktop.name}: "
                          "the applications on it are ") and "Chromium" in err and len(err.splitlines()) == 1


def _json_nodes(node):  # type: ignore[no-untyped-def]
    yield node
    for child in node["children"]:
        yield from _json_nodes(child)


def test_vdesk_tree_of_a_desktop_showing_only_xterm_says_it_has_no_accessible_objects(capsys):
    from vdesk.cli import run

    with Desktop.up(size=(800, 600), image="apps", timeout=180) as desktop:
        desktop.programs.run(["xterm", "-title", "lone terminal"])
        desktop.windows.wait_for("lone terminal", timeout=60)
        assert run(["tree", desktop.name, "--format", "table"]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [TABLE_HEADER]
    assert captured.err == (f"vdesk: no accessible objects on desktop {desktop.name}: 'lone terminal' (XTerm) "
                            "exposes none (not on the accessibility bus)\n")

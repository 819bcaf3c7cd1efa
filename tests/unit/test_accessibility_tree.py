"""The tree's pure parts: what the reader's JSON becomes (bounds mapped and corrected), queries
and their errors, OSWorld's XML and table, marks, and element inputs of actions."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from pydantic import ValidationError
from PIL import Image

from vdesk.accessibility import marks as set_of_marks
from vdesk.accessibility.text import TextBox
from vdesk.accessibility.osworld_xml import NAMESPACES, linearize, tag_of, to_xml
from vdesk.accessibility.tree import Tree, _application, _RawApp, json_text, mark_covered
from vdesk.actions import BaseAction, ElementQuery
from vdesk.coords import Box, Screen
from vdesk.errors import InvalidAction
from vdesk.plan import plan
from vdesk.windows import Window

SHOWN = ["enabled", "sensitive", "showing", "visible", "focusable"]


def raw(parent, role, name="", bounds=None, states=SHOWN, **extra):
    return {"parent": parent, "role": role, "name": name, "states": states, "bounds": bounds, **extra}


def libreoffice() -> _RawApp:
    """The shape LibreOffice gtk3 reports: its drawn part ("root pane") reported at the top of
    the client area although its panel starts below the 27 px menu bar."""
    return _RawApp.model_validate({"name": "soffice", "nodes": [
        raw(-1, "application", "soffice", [0, 0, 0, 0]),
        raw(0, "frame", "Untitled 1 - LibreOffice Calc", [0, 0, 1280, 770]),
        raw(1, "panel", "", [0, 21, 1280, 749]),
        raw(2, "menu bar", "", [0, 21, 1280, 27]),
        raw(3, "menu", "File", [0, 21, 37, 27]),
        raw(2, "panel", "", [0, 48, 1280, 722]),
        raw(5, "root pane", "Untitled 1 - LibreOffice Calc", [0, 21, 1280, 722]),
        raw(6, "menu bar", "", [0, 21, 1280, 0]),
        raw(7, "menu", "File", [0, 21, 36, 22]),
        raw(6, "tool bar", "Formatting", [0, 60, 1280, 39]),
        raw(9, "toggle button", "Bold", [328, 62, 33, 35], text="", value={"value": 1.0, "min": 0.0}),
        raw(9, "push button", "Hidden", None, states=["enabled", "visible"]),
    ]})


def calc_tree() -> Tree:
    return Tree([_application(libreoffice(), 1.0)])


def test_a_displaced_copy_of_its_parents_box_is_moved_back_with_its_subtree():
    tree = calc_tree()
    bold = tree.find("toggle button", "Bold")
    assert bold.bounds == Box.from_xywh(328, 89, 33, 35)  # 62 + 27: where it is drawn
    assert tree.find("menu", "File").bounds == Box.from_xywh(0, 21, 37, 27)  # the native menu bar is left alone


def test_menus_inside_an_empty_menu_bar_are_not_on_screen():
    tree = calc_tree()
    assert len(tree.query("menu", "File")) == 1
    assert len(tree.query("menu", "File", showing=False)) == 2


def test_bounds_are_logical_pixels_on_a_hidpi_screen():
    app = _application(libreoffice(), 2.0)
    bold = Tree([app]).find("toggle button", "Bold")
    assert bold.bounds == Box.from_xywh(164, 31 + 13.5, 16.5, 17.5)


def test_a_query_that_matches_nothing_names_itself_and_the_closest_candidates():
    with pytest.raises(InvalidAction) as error:
        calc_tree().find("toggle button", "Bolt")
    assert "role='toggle button', name='Bolt'" in str(error.value)
    assert "toggle button 'Bold'" in str(error.value)


def test_several_matches_need_an_index():
    app = _RawApp.model_validate({"name": "x", "nodes": [
        raw(-1, "application", "x", [0, 0, 0, 0]),
        raw(0, "push button", "OK", [0, 0, 10, 10]), raw(0, "push button", "ok", [20, 0, 10, 10])]})
    tree = Tree([_application(app, 1.0)])
    with pytest.raises(InvalidAction, match="2 elements match"):
        tree.find("push button", "OK")
    assert tree.find("push button", "OK", index=1).bounds == Box.from_xywh(20, 0, 10, 10)
    with pytest.raises(InvalidAction, match="2 matches"):
        tree.find("push button", "OK", index=2)


def test_a_node_under_a_window_higher_in_the_stack_is_covered():
    tree = calc_tree()
    stack = [Window(1, "Untitled 1 - LibreOffice Calc", "libreoffice-calc", 0, 0, 1280, 770),
             Window(2, "Form page - Chromium", "Chromium", 300, 80, 400, 400)]
    mark_covered(tree, stack, 1.0)
    assert tree.query("toggle button", "Bold") == []
    assert tree.query("menu", "File")  # at (18, 34): not under the browser


def test_the_xml_is_osworlds():
    root = ET.fromstring(to_xml(calc_tree()))
    assert root.tag == "desktop-frame"
    bold = root.find(".//toggle-button[@name='Bold']")
    assert bold.get(f"{{{NAMESPACES['cp']}}}screencoord") == "(328, 89)"
    assert bold.get(f"{{{NAMESPACES['cp']}}}size") == "(33, 35)"
    assert bold.get(f"{{{NAMESPACES['st']}}}showing") == "true"
    assert bold.get(f"{{{NAMESPACES['val']}}}value") == "1"
    hidden = root.find(".//push-button[@name='Hidden']")
    assert hidden.get(f"{{{NAMESPACES['cp']}}}screencoord") is None
    assert tag_of("push button") == "push-button" and tag_of("3d thing") == "x-3d-thing"


def test_the_table_lists_interesting_nodes_within_its_bound():
    table = linearize(calc_tree())
    assert "toggle-button\tBold\t\t(328, 89)\t(33, 35)" in table.splitlines()
    assert "Hidden" not in table and "root-pane" not in table
    many = Tree([_application(_RawApp.model_validate({"name": "x", "nodes": [raw(-1, "application", "x")] + [
        raw(0, "push button", f"Button {i}", [i, 0, 10, 10]) for i in range(500)]}), 1.0)])
    cut = linearize(many, max_chars=1000)
    assert len(cut) <= 1000 and cut.endswith("[…cut]")


def test_marks_number_clickable_nodes_once_and_draw_them():
    tree = calc_tree()
    boxes = [TextBox("Ready", Box.from_xywh(500, 700, 40, 12))]
    found = set_of_marks.number(tree, (1280, 800), boxes)
    assert [(m.role, m.name, m.source) for m in found] == [
        ("menu", "File", "tree"), ("toggle button", "Bold", "tree"), ("text", "Ready", "ocr")]
    assert [m.number for m in found] == [1, 2, 3]
    drawn = set_of_marks.draw(Image.new("RGB", (1280, 800), "white"), found)
    assert drawn.getpixel((328, 89)) == set_of_marks.BOX_COLOUR or drawn.getpixel((328, 100)) == set_of_marks.BOX_COLOUR
    marks = set_of_marks.Marks(found, drawn)
    assert marks.get(2).centre == (344.5, 106.5)
    with pytest.raises(InvalidAction, match="no mark 9"):
        marks.get(9)


def test_an_action_may_name_an_element_instead_of_a_point():
    click = BaseAction.parse({"type": "click", "inputs": {"element": {"role": "push button", "name": "Save"}}})
    assert click.inputs.element == ElementQuery(role="push button", name="Save")
    assert BaseAction.parse({"type": "click", "inputs": {"element": 3}}).inputs.element == 3
    for bad, why in [({"type": "click", "inputs": {"element": {}}}, "needs a role or a name"),
                     ({"type": "click", "inputs": {"element": 1, "point": [1, 2]}}, "not both"),
                     ({"type": "type", "inputs": {"content": "x", "element": 1}}, "takes no element"),
                     ({"type": "click", "inputs": {"element": 0}}, "element")]:
        with pytest.raises(InvalidAction, match=why):
            BaseAction.parse(bad)
    with pytest.raises(InvalidAction, match="resolved against a desktop"):
        plan([click], Screen(1280, 800))


def test_the_reader_output_is_bounded():
    with pytest.raises(ValidationError, match="nodes.0.name") as refused:
        _RawApp.model_validate({"name": "x", "nodes": [raw(-1, "application", "x" * 20_000)]})
    assert refused.value.errors()[0]["type"] == "string_too_long"
    _RawApp.model_validate({"name": "x", "nodes": [raw(-1, "application", "x" * 10_000)]})  # the bound itself is kept


def test_a_tree_survives_a_json_round_trip():
    tree = calc_tree()
    again = json.loads(json.dumps(tree.to_json()))
    assert again == tree.to_json()
    assert json.dumps(again).count('"Bold"') == json.dumps(tree.to_json()).count('"Bold"') >= 1


def test_the_tree_as_json_text_is_the_same_data_a_line_per_node_bounds_short():
    tree = calc_tree()
    text = json_text(tree)
    assert json.loads(text) == tree.to_json() == json.loads(json_text(tree, indent=2))
    nodes = list(tree.nodes())
    lines = text.splitlines()
    assert len(lines) <= 2 * len(nodes) + 4  # a node's line, and one closing its children
    assert all(line.lstrip().startswith(('{"role"', "]}", '{"name"', '{"applications"', "], ")) for line in lines)
    assert tree.to_json()["applications"][0]["tree"]["children"][0]["bounds"] == [0, 0, 1280, 770]
    empty = Tree([])
    assert json.loads(json_text(empty)) == empty.to_json()


def test_the_osworld_xml_can_name_an_application_as_another_machine_does():
    tree = calc_tree()
    name = tree.applications[0].root.name
    renamed = ET.fromstring(to_xml(tree, {name: "Other Name"}))
    assert [app.get("name") for app in renamed] == ["Other Name"]
    assert [app.get("name") for app in ET.fromstring(to_xml(tree))] == [name]
    assert ET.tostring(renamed[0][0]) == ET.tostring(ET.fromstring(to_xml(tree))[0][0])  # only the name changes

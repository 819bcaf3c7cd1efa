"""OSWorld's two forms of the tree: its XML (what its ``/accessibility`` endpoint returns and
its checkers read) and the linearized table its agents put into prompts.

XML: root ``desktop-frame``; each element's tag is the AT-SPI role with spaces as ``-``;
``name`` and, in namespaces, ``st:<state>="true"``, ``attr:<key>``, ``cp:screencoord="(x, y)"``
and ``cp:size="(w, h)"`` (only for nodes that are visible and showing), ``val:value|min|max|step``
and ``act:<action>_desc``; the element's text is the node's text. So XPath or CSS selectors
written for OSWorld (with its namespace map, :data:`NAMESPACES`) work on it.

Table: one line per interesting node (OSWorld's filter: a kind of node an agent acts on or
reads, showing, visible, enabled or editable or the like, named or with text, on screen),
tab-separated ``tag name text position size``, cut to a length bound.
"""

from __future__ import annotations


import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping

from vdesk.accessibility.tree import Node, Tree

_BASE = "https://accessibility.ubuntu.example.org/ns"
NAMESPACES = {"st": f"{_BASE}/state", "attr": f"{_BASE}/attributes", "cp": f"{_BASE}/component",
              "doc": f"{_BASE}/document", "docattr": f"{_BASE}/document/attributes", "txt": f"{_BASE}/text",
              "val": f"{_BASE}/value", "act": f"{_BASE}/action"}
TABLE_HEADER = "tag\tname\ttext\tposition (top-left x&y)\tsize (w&h)"
DEFAULT_TABLE_CHARS = 40_000  # about OSWorld's 10,000 tokens
_NOT_NAME = re.compile(r"[^A-Za-z0-9_.-]")
# OSWorld's kinds of interesting node: tags that end so, or are one of the plain ones.
_TAG_ENDINGS = ("item", "button", "heading", "label", "scrollbar", "searchbox", "textbox", "link", "tabelement",
                "textfield", "textarea", "menu")
_TAGS = {"alert", "canvas", "check-box", "combo-box", "entry", "icon", "image", "paragraph", "scroll-bar", "section",
         "slider", "static", "table-cell", "terminal", "text", "netuiribbontab", "start", "trayclockwclass",
         "traydummysearchcontrol", "uiimage", "uiproperty", "uiribboncommandbar"}
_ACTIONABLE = ("enabled", "editable", "expandable", "checkable")

for _prefix, _uri in NAMESPACES.items():
    ET.register_namespace(_prefix, _uri)


def tag_of(role: str) -> str:
    """The XML tag of a role: ``push button`` → ``push-button``."""
    tag = _NOT_NAME.sub("-", role.strip().replace(" ", "-")) or "unknown"
    return tag if tag[0].isalpha() or tag[0] == "_" else f"x-{tag}"


def to_xml(tree: Tree, app_names: Mapping[str, str] | None = None) -> str:
    """The tree as OSWorld's XML (a string with the namespace declarations on the root).
    ``app_names`` renames applications, as another machine names the same program."""
    root = ET.Element("desktop-frame", {"name": "main"})
    for app in tree.applications:
        element = _element(app.root)
        if app_names and element.get("name") in app_names:
            element.set("name", app_names[element.get("name", "")])
        root.append(element)
    return ET.tostring(root, encoding="unicode")


def _element(node: Node) -> ET.Element:
    element = ET.Element(tag_of(node.role), {"name": node.name})
    for state in sorted(node.states):
        element.set(f"{{{NAMESPACES['st']}}}{_NOT_NAME.sub('-', state)}", "true")
    for key, value in node.attributes.items():
        element.set(f"{{{NAMESPACES['attr']}}}{_NOT_NAME.sub('-', key) or 'x'}", value)
    if node.showing and node.bounds is not None:
        box = node.bounds
        element.set(f"{{{NAMESPACES['cp']}}}screencoord", f"({round(box.x)}, {round(box.y)})")
        element.set(f"{{{NAMESPACES['cp']}}}size", f"({round(box.width)}, {round(box.height)})")
    for key, value in zip(("value", "min", "max", "step"), (node.value, *node.value_range)):
        if value is not None:
            element.set(f"{{{NAMESPACES['val']}}}{key}", f"{value:g}")
    for action, description, keybinding in node.actions:
        key = _NOT_NAME.sub("_", action)
        element.set(f"{{{NAMESPACES['act']}}}{key}_desc", description)
        if keybinding:
            element.set(f"{{{NAMESPACES['act']}}}{key}_kb", keybinding)
    if node.text:
        element.text = _xml_safe(node.text)
    for child in node.children:
        element.append(_element(child))
    return element


def _xml_safe(text: str) -> str:
    # XML 1.0 cannot hold most control characters; a program's text may contain any.
    return "".join(ch for ch in text if ch in "\t\n\r" or ord(ch) >= 0x20)


def interesting(node: Node) -> bool:
    """OSWorld's filter: a node an agent would act on or read, on screen."""
    tag = tag_of(node.role)
    if not (tag.startswith("document") or tag.endswith(_TAG_ENDINGS) or tag in _TAGS):
        return False
    if not node.showing or not any(state in node.states for state in _ACTIONABLE):
        return False
    if not (node.name or (node.text or "").strip()):
        return False
    box = node.bounds
    return box is not None and box.x >= 0 and box.y >= 0 and box.width > 0 and box.height > 0


def interesting_nodes(tree: Tree) -> list[Node]:
    return [node for node in tree.nodes() if interesting(node)]


def linearize(tree: Tree, max_chars: int = DEFAULT_TABLE_CHARS) -> str:
    """The table of interesting nodes for a prompt, cut (at a line) to ``max_chars``."""
    lines = [TABLE_HEADER]
    used = len(TABLE_HEADER)
    for node in interesting_nodes(tree):
        assert node.bounds is not None
        box = node.bounds
        text = " ".join((node.text or "").split())[:200]
        line = (f"{tag_of(node.role)}\t{_cell(node.name)}\t{_cell(text)}\t"
                f"({round(box.x)}, {round(box.y)})\t({round(box.width)}, {round(box.height)})")
        if used + len(line) + 1 > max_chars - 20:
            lines.append("[…cut]")
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)


def _cell(value: str) -> str:
    return " ".join(value.split())

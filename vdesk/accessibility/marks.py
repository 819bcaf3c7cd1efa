"""Set-of-marks: the interactive elements on screen, numbered, with their boxes drawn on the
screenshot, so an agent can answer "click 7" (``{"type": "click", "inputs": {"element": 7}}``).

Marks come from the accessibility tree; where a window's program exposes no tree (or an empty
one), from boxes of text on screen (OCR) inside that window, in the same numbering. Each mark
says which source it came from.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from PIL import Image, ImageDraw, ImageFont

from vdesk.accessibility.osworld_xml import tag_of
from vdesk.accessibility.text import TextBox
from vdesk.accessibility.tree import Node, Tree
from vdesk.coords import Box
from vdesk.errors import InvalidAction

Source = Literal["tree", "ocr"]
INTERACTIVE_ROLES = frozenset({
    "push button", "toggle button", "check box", "radio button", "menu", "menu item", "check menu item",
    "radio menu item", "combo box", "entry", "password text", "text", "link", "page tab", "list item",
    "tree item", "slider", "spin button", "icon", "table cell", "toggle", "button", "menu button",
    "split button", "search box"})
# Roles that hold other elements: focusable and named at times, but never what one clicks.
CONTAINER_ROLES = frozenset({
    "application", "frame", "window", "dialog", "root pane", "panel", "filler", "tool bar", "menu bar",
    "scroll pane", "split pane", "layered pane", "viewport", "page tab list", "table", "tree table", "list",
    "tree", "status bar", "statusbar", "form", "section", "grouping", "internal frame", "desktop frame"})
MAX_MARKS = 300
BOX_COLOUR = (230, 30, 30)


@dataclass(frozen=True)
class Mark:
    number: int
    role: str
    name: str
    bounds: Box
    source: Source
    app: str = ""
    text: str = ""

    @property
    def centre(self) -> tuple[float, float]:
        return self.bounds.centre


@dataclass
class Marks:
    """The numbered marks and the screenshot with their boxes drawn."""

    marks: list[Mark]
    image: Image.Image
    sources: dict[str, Source] = field(default_factory=dict)  # application or window → where its marks came from

    def get(self, number: int) -> Mark:
        for mark in self.marks:
            if mark.number == number:
                return mark
        raise InvalidAction(f"no mark {number}: the last marks are numbered 1..{len(self.marks)}")

    def table(self) -> str:
        """``index tag name text`` per mark, for a prompt (OSWorld's som list, plus the source)."""
        lines = ["index\ttag\tname\ttext\tsource"]
        lines += [f"{m.number}\t{tag_of(m.role)}\t{' '.join(m.name.split())}\t{' '.join(m.text.split())[:100]}\t{m.source}"
                  for m in self.marks]
        return "\n".join(lines)


def interactive(node: Node, screen: tuple[int, int]) -> bool:
    """Showing, inside the screen, of a kind a person acts on (or focusable and named)."""
    box = node.bounds
    if box is None or not node.reachable or "enabled" not in node.states and "sensitive" not in node.states:
        return False
    if not (0 <= box.centre[0] < screen[0] and 0 <= box.centre[1] < screen[1]):
        return False
    if node.role in INTERACTIVE_ROLES:
        return True
    container = node.role in CONTAINER_ROLES or node.role.startswith("document")
    return not container and "focusable" in node.states and bool(node.name)


def number(tree: Tree, screen: tuple[int, int], text_boxes: Iterable[TextBox] = ()) -> list[Mark]:
    """The marks: interactive tree nodes in document order, then text boxes; one mark per box."""
    marks: list[Mark] = []
    seen: set[tuple[int, int, int, int]] = set()

    def add(role: str, name: str, box: Box, source: Source, app: str = "", text: str = "") -> None:
        key = (round(box.x), round(box.y), round(box.width), round(box.height))
        if key in seen or len(marks) >= MAX_MARKS:
            return
        seen.add(key)
        marks.append(Mark(len(marks) + 1, role, name, box, source, app, text))

    for node in tree.nodes():
        if interactive(node, screen):
            assert node.bounds is not None
            add(node.role, node.name, node.bounds, "tree", node.app, (node.text or "")[:200])
    for box in text_boxes:
        add("text", box.text, box.bounds, "ocr")
    return marks


def draw(image: Image.Image, marks: list[Mark]) -> Image.Image:
    """A copy of ``image`` with each mark's box and number drawn (red box, number on white)."""
    drawn = image.convert("RGB")
    pen = ImageDraw.Draw(drawn)
    font = ImageFont.load_default()
    for mark in marks:
        box = mark.bounds
        left, top = box.x, box.y
        right, bottom = left + box.width - 1, top + box.height - 1
        pen.rectangle((left, top, right, bottom), outline=BOX_COLOUR, width=1)
        label = str(mark.number)
        x0, y0, x1, y1 = pen.textbbox((left + 1, top + 1), label, font=font)
        pen.rectangle((x0 - 1, y0 - 1, x1 + 1, y1 + 1), fill=(255, 255, 255), outline=BOX_COLOUR)
        pen.text((left + 1, top + 1), label, fill=(0, 0, 0), font=font)
    return drawn

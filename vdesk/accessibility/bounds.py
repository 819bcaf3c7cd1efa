"""Corrections to the bounds programs report, so that a click at a node's centre hits it.

LibreOffice's gtk3 backend (7.4 and 25.2) draws its own widgets (toolbars, formula bar,
document, status bar) inside a GTK container that sits below the native menu bar, yet reports
their extents as if that container started at the top of the window's client area: about 26 px
too high, the menu bar's height. The tree shows the mistake itself: the "root pane" of the
drawn part has exactly the size of the panel that holds it, but not its position. Such a child
is a copy of its parent's box displaced; the parent (a GTK widget) is right, so the child's
whole subtree is moved by the difference. Chromium, GTK programs and LibreOffice's native
parts (menu bar, infobar, window frame) report true bounds and are left alone: a true child
of the same size as its parent has the parent's position too.

LibreOffice also keeps its own menu bar, zero pixels high, beside the native one, with its
menus "showing": their boxes lie over the toolbar. Nodes inside an empty menu bar are not
on screen, whatever they say.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from vdesk.coords import Box

MAX_OFFSET = 200  # logical px: a larger displacement is not this mistake


class Boxed(Protocol):
    """What a correction needs of a tree node (:class:`vdesk.accessibility.tree.Node`)."""

    bounds: Box | None  # logical pixels

    @property
    def children(self) -> list[Boxed]: ...

    def walk(self) -> Iterator[Boxed]: ...


def correct_offsets(root: Boxed) -> None:
    """Move every subtree whose root is a displaced copy of its parent's box (see above)."""
    for node in list(root.walk()):
        parent_box = node.bounds
        if parent_box is None or parent_box.empty:
            continue
        for child in node.children:
            box = child.bounds
            if box is None or (box.width, box.height) != (parent_box.width, parent_box.height):
                continue
            dx, dy = parent_box.x - box.x, parent_box.y - box.y
            if (dx or dy) and abs(dx) <= MAX_OFFSET and abs(dy) <= MAX_OFFSET:
                _shift(child, dx, dy)


def hide_inside_empty_menu_bars(root: Boxed) -> None:
    """Drop the bounds of everything inside a menu bar with an empty box (see above)."""
    for node in list(root.walk()):
        if getattr(node, "role", "") == "menu bar" and node.bounds is not None and node.bounds.empty:
            for inside in list(node.walk())[1:]:
                inside.bounds = None


def _shift(node: Boxed, dx: float, dy: float) -> None:
    for each in node.walk():
        if each.bounds is not None:
            each.bounds = each.bounds.shifted(dx, dy)

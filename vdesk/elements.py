"""The elements on a desktop's screen: its accessibility tree, queries on it, and marks.

``desktop.elements.tree()`` reads every application's tree over the desktop's accessibility bus
(the apps image; :mod:`vdesk.accessibility.tree` says what is read and its bounds);
``find(role, name)`` is the one element a query names, ``wait_for`` waits until one is there,
and ``marks()`` numbers what can be acted on, drawn on a screenshot, so that an action's
``{"element": N}`` names mark N (:mod:`vdesk.accessibility.marks`). Windows whose program
exposes no tree get marks from the text read on them (OCR).

An action that names an element (a mark or a query) is resolved here to the centre of its
bounds before it is planned (:meth:`DesktopElements.resolve`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import NoReturn

from vdesk import images as desktop_image
from vdesk.accessibility import marks as set_of_marks, text as text_on_screen
from vdesk.accessibility.text import TextBox
from vdesk.accessibility.tree import (TreeLimits, Node, Tree, TreeReader, describe_query, mark_covered,
                                      silent_windows)
from vdesk.actions import BaseAction, Coordinates, ElementQuery
from vdesk.coords import Box
from vdesk.errors import CommandFailed, DesktopTimeout, InvalidAction, InvalidArgument, VdeskError
from vdesk.guard import Guard
from vdesk.screen import DesktopScreen
from vdesk.windows import Windows

POLL = 0.1  # seconds between two trees of a wait
FOCUS_TREE_TIMEOUT = 3.0  # seconds for the tree that says what typing reached


class DesktopElements:
    """The accessibility tree of one desktop and what is built on it."""

    def __init__(self, reader: TreeReader, screen: DesktopScreen, windows: Windows, guard: Guard) -> None:
        self._reader = reader
        self._screen = screen
        self._windows = windows
        self._guard = guard
        self._marks: set_of_marks.Marks | None = None  # the last marks(), which element numbers name
        self._readable: bool | None = None  # None: not tried yet (receipts of typing read it)

    def tree(self, limits: TreeLimits = TreeLimits(), *, apps: Sequence[str] = (), strict: bool = False) -> Tree:
        """The accessibility tree of every application on the desktop (apps image), or of
        ``apps`` only, bounds in logical pixels; ``tree.silent`` lists the windows whose programs
        expose none, and an application that did not answer in time has ``error`` set (the
        others are complete). ``strict``: an application of ``apps`` not on the bus is an
        InvalidArgument naming those that are (else it is simply not in the tree).
        See :mod:`vdesk.accessibility.tree`."""
        self._refuse_lean()
        tree = self._read(limits, tuple(apps))
        missing = [name for name in apps if name not in {app.name for app in tree.applications}]
        if strict and missing:
            self._no_such_application(missing[0], limits.timeout)
        stack = self._windows.stacked()
        mark_covered(tree, stack, self._screen.scale)
        if not apps:
            tree.silent = silent_windows(tree, stack)
        return tree

    def find(self, role: str | None = None, name: str | None = None, index: int | None = None) -> Node:
        """The one element on screen with this role and name (see :meth:`Tree.find`)."""
        return self.tree().find(role, name, index)

    def wait_for(self, role: str | None = None, name: str | None = None, *, states: Sequence[str] = (),
                 timeout: float = 10.0) -> Node:
        """Wait until an element with this role, name and states is on screen; return the first."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.tree().query(role, name, states=tuple(states))
            if found:
                return found[0]
            if time.monotonic() > deadline:
                raise DesktopTimeout(f"desktop {self._guard.name}: no element {describe_query(role, name)} "
                                     f"appeared within {timeout:g} s")
            time.sleep(POLL)

    def marks(self, tree: Tree | None = None) -> set_of_marks.Marks:
        """Number the interactive elements on screen (from a fresh tree) and draw them on a
        screenshot; an action's ``{"element": N}`` then names mark N of the last call. Windows
        whose program exposes no tree (or an empty one) get marks from the text read on them
        (OCR), in the same numbering; each mark says its source."""
        tree = tree or self.tree()
        frame = self._screen.with_frames(lambda frames: frames.fresh())
        shot = self._screen.to_image(frame.image)
        sources: dict[str, set_of_marks.Source] = {app.name: "tree" for app in tree.applications if not app.empty}
        boxes = []
        for title, region in self._treeless_windows(tree):
            sources[title] = "ocr"
            for line in text_on_screen.read(frame.image, scale=self._screen.scale, region=region):
                boxes.append(TextBox(line.text, line.bounds, min(word.confidence for word in line.words)))
        found = set_of_marks.number(tree, self._screen.size, boxes)
        self._marks = set_of_marks.Marks(found, set_of_marks.draw(shot, found), sources)
        return self._marks

    def resolve(self, actions: list[BaseAction]) -> list[BaseAction]:
        """Each action's element replaced by the centre of its bounds: a mark of the last
        :meth:`marks`, or a query against one fresh tree. Raises InvalidAction (nothing has run)."""
        if not any(action.inputs.element is not None for action in actions):
            return actions
        tree = self.tree() if any(isinstance(a.inputs.element, ElementQuery) for a in actions) else None
        resolved = []
        for index, action in enumerate(actions):
            element = action.inputs.element
            if element is None:
                resolved.append(action)
                continue
            try:
                if isinstance(element, ElementQuery):
                    assert tree is not None
                    x, y = tree.find(element.role, element.name, element.index).bounds.centre  # type: ignore[union-attr]
                elif self._marks is None:
                    raise InvalidAction(f"mark {element} names nothing: call marks() first")
                else:
                    x, y = self._marks.get(element).centre
            except InvalidAction as error:
                raise InvalidAction(f"action {index} ({action.type.value}): {error}") from None
            width, height = self._screen.size
            point = Coordinates(normalized={"x": min(max(x / width, 0), 1), "y": min(max(y / height, 0), 1)})
            inputs = action.inputs.model_copy(update={"element": None, "point": point})
            resolved.append(action.model_copy(update={"inputs": inputs}))
        return resolved

    def typed_into_focus(self, typed: str) -> tuple[bool | None, str | None]:
        """Whether the focused element's text contains the last line of ``typed``, and which
        element that is; (None, None) where there is no tree (the lean image: remembered) or no
        focused element with text. A fresh tree costs 0.1-1.5 s with big programs open."""
        wanted = next((line.strip() for line in reversed(typed.splitlines()) if line.strip()), "")
        if not wanted or self._readable is False:
            return None, None
        try:
            tree = self._read(TreeLimits(timeout=FOCUS_TREE_TIMEOUT))
        except CommandFailed as error:
            if "needs the apps image" in str(error):  # no reader in this image: never ask again
                self._readable = False
            return None, None
        except VdeskError:  # slow or too big this time: say nothing rather than fail the batch
            return None, None
        self._readable = True
        focused = [node for node in tree.nodes() if "focused" in node.states and node.text is not None]
        if not focused:
            return None, None
        node = focused[-1]  # the innermost
        return wanted in (node.text or ""), node.label()

    def close(self) -> None:
        """Close the reader's session (it opens again on next use)."""
        self._reader.close()

    def _read(self, limits: TreeLimits, apps: tuple[str, ...] = ()) -> Tree:
        return self._guard(lambda: self._reader.read(self._screen.geometry, limits, apps))

    def _no_such_application(self, name: str, timeout: float) -> NoReturn:
        """Raise InvalidArgument naming ``name`` and the applications the bus has (read shallowly)."""
        present = self._read(TreeLimits(max_depth=1, timeout=timeout))
        names = sorted({app.name for app in present.applications if app.name})
        there = f"the applications on it are {', '.join(names)}" if names else "no application is on it"
        raise InvalidArgument(f"no application named {name!r} on the accessibility bus of desktop "
                              f"{self._guard.name}: {there}")

    def _refuse_lean(self) -> None:
        """The lean image has no accessibility bus: say so before asking a reader it lacks."""
        container = self._guard.container
        if desktop_image.resolve(container.attrs.get("Config", {}).get("Image") or "?") == desktop_image.IMAGE:
            self._readable = False
            raise CommandFailed(f"desktop {self._guard.name} runs the lean image, which has no accessibility bus: "
                                "the tree (and marks) needs the apps image (vdesk up --apps, image='apps')")

    def _treeless_windows(self, tree: Tree) -> list[tuple[str, Box]]:
        """The windows on screen without a usable tree, as (title, region in logical pixels)."""
        empty_titles = {top.name for app in tree.applications if app.empty for top in app.root.children}
        width, height = self._screen.size
        scale = self._screen.scale
        found = []
        for window in tree.silent + [w for w in self._windows.stacked() if w.title in empty_titles and w.viewable]:
            left, top = max(0, round(window.x / scale)), max(0, round(window.y / scale))
            right = min(width, round((window.x + window.width) / scale))
            bottom = min(height, round((window.y + window.height) / scale))
            if right > left and bottom > top:
                found.append((window.title, Box(left, top, right, bottom)))
        return found

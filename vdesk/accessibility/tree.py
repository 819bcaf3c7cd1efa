"""The accessibility tree of a desktop: every application on its AT-SPI bus, as typed nodes.

The tree is read inside the desktop by ``vdesk-atspi`` (shipped in the apps image), which the
controller keeps running in an exec session (:class:`TreeReader`): it sends every D-Bus request at once and reads a node's
subtree only when the node is showing, so a desktop with Calc and Chromium open is read in a
few hundred milliseconds instead of one round trip per property per node. What comes back is
untrusted: it is validated here (pydantic), bounded, and its bounds are mapped to the logical
pixels of screenshots and actions (:mod:`vdesk.coords`) and corrected (:mod:`.bounds`).

    tree = desktop.elements.tree()
    save = tree.find(role="push button", name="Save")      # exactly one, or InvalidAction
    x, y = save.bounds.centre
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

import docker
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vdesk.accessibility.bounds import correct_offsets, hide_inside_empty_menu_bars
from vdesk.actions import validation_message
from vdesk.channel import ReplyLines
from vdesk.coords import Box, Screen
from vdesk.errors import CommandFailed, DesktopTimeout, InvalidAction, InvalidArgument
from vdesk.execstream import ExecStream
from vdesk.windows import Window

READER_PROGRAM = "/usr/local/bin/vdesk-atspi"
READER_OUTPUT_LIMIT = 32 << 20  # bytes of JSON a tree may take
READER_SLACK = 10.0  # seconds beyond a read's own limit (the reader's start, the transfer)
MAX_TEXT = 2000  # characters of a node's text kept
CLOSEST = 5  # candidates an unmatched query names


@dataclass
class Node:
    """One accessible object. ``bounds`` is None when it is not showing (or has no extents)."""

    role: str
    name: str = ""
    text: str | None = None
    value: float | None = None
    states: frozenset[str] = frozenset()
    description: str = ""
    bounds: Box | None = None  # logical pixels
    attributes: dict[str, str] = field(default_factory=dict)
    actions: list[tuple[str, str, str]] = field(default_factory=list)  # name, description, key binding
    value_range: tuple[float | None, float | None, float | None] = (None, None, None)  # min, max, step
    children: list[Node] = field(default_factory=list)
    app: str = ""  # the application it belongs to
    covered: bool = False  # its centre is under another window (a click there would not reach it)

    @property
    def showing(self) -> bool:
        return "showing" in self.states and "visible" in self.states

    @property
    def reachable(self) -> bool:
        """On screen, with a box, and not under another window: a click at its centre hits it."""
        return self.showing and self.bounds is not None and not self.bounds.empty and not self.covered

    def walk(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            yield from child.walk()

    def label(self) -> str:
        """``push button 'Save'``: how errors and tables name it."""
        return f"{self.role} {self.name!r}" if self.name else self.role

    def to_json(self) -> dict[str, Any]:
        return {"role": self.role, "name": self.name, "text": self.text, "value": self.value,
                "states": sorted(self.states), "description": self.description,
                "bounds": None if self.bounds is None else [_short(v) for v in (self.bounds.x, self.bounds.y,
                                                                                self.bounds.width, self.bounds.height)],
                "children": [child.to_json() for child in self.children]}


@dataclass
class Application:
    """One program on the bus. ``error`` says why its tree is missing or partial (it hung)."""

    name: str
    root: Node
    error: str | None = None

    @property
    def empty(self) -> bool:
        """True when it shows nothing with bounds: its tree is of no use for pointing."""
        return not any(node.bounds is not None and not node.bounds.empty for node in self.root.walk()
                       if node is not self.root)


@dataclass
class Tree:
    """Every application's tree, and the windows whose programs expose no accessibility."""

    applications: list[Application]
    silent: list[Window] = field(default_factory=list)  # on screen, absent from the bus (xterm, mupdf)
    elapsed_ms: float = 0.0

    def nodes(self) -> Iterator[Node]:
        for app in self.applications:
            yield from app.root.walk()

    def errors(self) -> list[str]:
        return [app.error for app in self.applications if app.error]

    def query(self, role: str | None = None, name: str | None = None, *, states: tuple[str, ...] = (),
              showing: bool = True) -> list[Node]:
        """Nodes with this role and name (exact, case-insensitive) and these states, in
        document order; by default only the ones on screen."""
        return [node for node in self.nodes()
                if (role is None or node.role.lower() == role.lower())
                and (name is None or node.name.strip().lower() == name.strip().lower())
                and all(state in node.states for state in states)
                and (not showing or node.reachable)]

    def find(self, role: str | None = None, name: str | None = None, index: int | None = None) -> Node:
        """The one node on screen with this role and name (the ``index``-th of several when
        given). No match, or several without an index, raises :class:`InvalidAction` naming the
        query and the closest candidates."""
        found = self.query(role, name)
        described = describe_query(role, name, index)
        if index is not None:
            if 0 <= index < len(found):
                return found[index]
            raise InvalidAction(f"no element {described}: {len(found)} match{_plural(len(found), 'es')}"
                                f"{self._closest(role, name)}")
        if len(found) == 1:
            return found[0]
        if not found:
            raise InvalidAction(f"no element {described} on screen{self._closest(role, name)}")
        listed = ", ".join(f"{n.label()} at {_where(n)}" for n in found[:CLOSEST])
        raise InvalidAction(f"{len(found)} elements match {described} ({listed}); give an index")

    def _closest(self, role: str | None, name: str | None) -> str:
        wanted = f"{role or ''} {name or ''}".lower()
        candidates = [node for node in self.nodes() if node.reachable and (node.name or node.text)]
        ranked = sorted(candidates, key=lambda n: -SequenceMatcher(None, wanted, f"{n.role} {n.name}".lower()).ratio())
        return f"; closest: {', '.join(n.label() for n in ranked[:CLOSEST])}" if ranked else "; nothing is on screen"

    def to_json(self) -> dict[str, Any]:
        return {"applications": [{"name": app.name, "error": app.error, "empty": app.empty,
                                  "tree": app.root.to_json()} for app in self.applications],
                "silent": [{"title": w.title, "class": w.wm_class} for w in self.silent],
                "elapsed_ms": round(self.elapsed_ms, 1)}


def json_text(tree: Tree, indent: int | None = None) -> str:
    """:meth:`Tree.to_json` as text: by default one line per node, each indented by its depth
    (a Writer window's tree is 165 KB instead of the 433 KB ``indent=1`` makes of it, and a
    node is still one line to grep); ``indent`` spreads every field over lines as ``json`` does."""
    data = tree.to_json()
    if indent is not None:
        return json.dumps(data, ensure_ascii=False, indent=indent)
    lines = ['{"applications": [']
    for number, app in enumerate(data["applications"]):
        head = {key: value for key, value in app.items() if key != "tree"}
        lines.append(" " + _compact(head)[:-1] + ', "tree":')
        _node_lines(app["tree"], 2, lines)
        lines[-1] += "}" + ("," if number < len(data["applications"]) - 1 else "")
    rest = {key: value for key, value in data.items() if key != "applications"}
    lines.append("], " + _compact(rest)[1:])
    return "\n".join(lines)


def _node_lines(node: dict[str, Any], depth: int, lines: list[str]) -> None:
    """``node`` on one line (its children on the lines after it, one deeper), appended to ``lines``."""
    children = node["children"]
    own = _compact({key: value for key, value in node.items() if key != "children"})[:-1]
    if not children:
        lines.append(" " * depth + own + ', "children": []}')
        return
    lines.append(" " * depth + own + ', "children": [')
    for number, child in enumerate(children):
        _node_lines(child, depth + 1, lines)
        if number < len(children) - 1:
            lines[-1] += ","
    lines.append(" " * depth + "]}")


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _short(value: float) -> float | int:
    """A coordinate as short as it is exact enough: whole pixels as ints, else one decimal."""
    rounded = round(value, 1)
    return int(rounded) if rounded == int(rounded) else rounded


def describe_query(role: str | None, name: str | None, index: int | None = None) -> str:
    parts = [f"role={role!r}" if role is not None else "", f"name={name!r}" if name is not None else "",
             f"index={index}" if index is not None else ""]
    return "{" + ", ".join(p for p in parts if p) + "}"


def _where(node: Node) -> str:
    if node.bounds is None:
        return "?"
    x, y = node.bounds.centre
    return f"({x:.0f}, {y:.0f})"


def _plural(count: int, suffix: str) -> str:
    return "" if count == 1 else suffix


# -- reading ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class TreeLimits:
    """How much of the tree to read: the defaults are OSWorld's (depth 50, 1024 children)."""

    max_depth: int = 50
    max_children: int = 1024
    timeout: float = 5.0  # seconds for the whole read; an application still answering is named
    hidden: bool = False  # also read the subtrees of nodes that are not showing (closed menus)
    details: bool = False  # also read object attributes and actions (OSWorld's attr: and act:)

    def __post_init__(self) -> None:
        if not (1 <= self.max_depth <= 500 and 1 <= self.max_children <= 100_000):
            raise InvalidArgument(f"tree limits out of range: depth {self.max_depth}, children {self.max_children}")
        if not 0.1 <= self.timeout <= 120:
            raise InvalidArgument(f"a tree timeout must be 0.1..120 s, got {self.timeout}")


class _RawValue(BaseModel):
    value: float | None = None
    min: float | None = None
    max: float | None = None
    step: float | None = None


class _RawAction(BaseModel):
    name: str = Field(default="", max_length=200)
    description: str = Field(default="", max_length=1000)
    keybinding: str = Field(default="", max_length=200)


class _RawNode(BaseModel):
    model_config = ConfigDict(extra="ignore")
    parent: int
    role: str = Field(default="", max_length=100)
    name: str = Field(default="", max_length=10_000)
    description: str = Field(default="", max_length=10_000)
    states: list[str] = Field(default_factory=list, max_length=64)
    bounds: list[int] | None = Field(default=None, min_length=4, max_length=4)
    text: str | None = Field(default=None, max_length=4 * MAX_TEXT)
    value: _RawValue | None = None
    attributes: dict[str, str] = Field(default_factory=dict)
    actions: list[_RawAction] = Field(default_factory=list, max_length=64)


class _RawApp(BaseModel):
    name: str = Field(default="", max_length=1000)
    error: str | None = Field(default=None, max_length=2000)
    nodes: list[_RawNode] = Field(default_factory=list)


class _RawTree(BaseModel):
    apps: list[_RawApp] = Field(default_factory=list)
    error: str | None = None
    elapsed_ms: float = 0.0


class TreeReader:
    """The desktop's ``vdesk-atspi serve``, kept running in an exec session of its own: one
    line of options in, one tree out. Opened on the first read, reopened when it dropped
    (a read that timed out drops it: its late answer must not answer the next read)."""

    def __init__(self, api: docker.APIClient, container_id: str, name: str) -> None:
        self._api, self._container_id, self._name = api, container_id, name
        self._lock = threading.Lock()
        self._stream: ExecStream | None = None
        self._replies: queue.Queue[object] = queue.Queue()

    def read(self, screen: Screen, limits: TreeLimits = TreeLimits(), apps: tuple[str, ...] = ()) -> Tree:
        """Read the tree (see the module's docstring); ``apps`` names the applications to read
        (default: all)."""
        options = {"max_depth": limits.max_depth, "max_children": limits.max_children, "max_text": MAX_TEXT,
                   "timeout": limits.timeout, "hidden": limits.hidden, "details": limits.details,
                   "apps": list(apps)}
        with self._lock:
            reply = self._exchange(options, limits.timeout + READER_SLACK)
        try:
            raw = _RawTree.model_validate(reply)
        except ValidationError as error:
            raise CommandFailed(f"desktop {self._name}: the accessibility reader gave no readable tree: "
                                f"{validation_message(error)}") from None
        if raw.error:
            raise CommandFailed(f"desktop {self._name}: {raw.error}")
        return Tree([_application(app, screen.scale) for app in raw.apps], elapsed_ms=raw.elapsed_ms)

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _exchange(self, options: dict[str, Any], timeout: float) -> object:
        stream = self._open()
        stream.send((json.dumps(options) + "\n").encode())
        try:
            reply = self._replies.get(timeout=timeout)
        except queue.Empty:
            self._drop()
            raise DesktopTimeout(f"desktop {self._name}: the accessibility tree was not read within {timeout:g} s") from None
        except BaseException:
            self._drop()
            raise
        if not isinstance(reply, dict):
            self._drop()
            why = reply if isinstance(reply, str) else "it exited"
            raise CommandFailed(f"desktop {self._name}: the accessibility reader ({READER_PROGRAM}) failed: {why}; "
                                f"the tree needs the apps image")
        return reply

    def _open(self) -> ExecStream:
        if self._stream is None or self._stream.closed:
            self._replies = queue.Queue()
            lines = ReplyLines(self._replies, self._name)
            lines.cap = READER_OUTPUT_LIMIT
            self._stream = ExecStream(self._api, self._container_id, [READER_PROGRAM, "serve"], on_data=lines.feed,
                                      on_close=lambda: lines.replies.put(None), label=f"{self._name} tree")
            lines.stream = self._stream
        return self._stream

    def _drop(self) -> None:
        if self._stream is not None:
            self._stream.close()
        self._stream = None


def _application(raw: _RawApp, scale: float) -> Application:
    nodes: list[Node] = []
    for item in raw.nodes:
        node = _node(item, scale, raw.name)
        if 0 <= item.parent < len(nodes):
            nodes[item.parent].children.append(node)
        elif nodes:  # a parent index that is not earlier: malformed, keep it under the root
            nodes[0].children.append(node)
        nodes.append(node)
    root = nodes[0] if nodes else Node(role="application", name=raw.name, app=raw.name)
    correct_offsets(root)
    hide_inside_empty_menu_bars(root)
    return Application(raw.name, root, raw.error)


def _node(raw: _RawNode, scale: float, app: str) -> Node:
    bounds = None
    if raw.bounds is not None and "showing" in raw.states:
        x, y, w, h = (v / scale for v in raw.bounds)
        bounds = Box.from_xywh(x, y, w, h)
    value = raw.value.value if raw.value else None
    return Node(role=raw.role, name=raw.name.strip(), text=raw.text, value=value, states=frozenset(raw.states),
                description=raw.description, bounds=bounds, attributes=dict(raw.attributes),
                actions=[(a.name, a.description, a.keybinding) for a in raw.actions if a.name],
                value_range=(raw.value.min, raw.value.max, raw.value.step) if raw.value else (None, None, None),
                app=app)


def mark_covered(tree: Tree, stack: list[Window], scale: float) -> None:
    """Mark the nodes whose centre another window covers. ``stack`` is bottom to top; an
    application's top-level node is matched to its window by title (an unmatched one, a
    popup menu say, is taken to be on top)."""
    boxes = [(w.title, Box.from_xywh(w.x / scale, w.y / scale, w.width / scale, w.height / scale))
             for w in stack if w.viewable]
    for app in tree.applications:
        for top in app.root.children:
            level = max((i for i, (title, _) in enumerate(boxes) if title and title == top.name), default=None)
            if level is None:
                continue
            above = [box for _, box in boxes[level + 1:]]
            for node in top.walk():
                if node.bounds is not None:
                    node.covered = any(box.contains(*node.bounds.centre) for box in above)


def silent_windows(tree: Tree, windows: list[Window]) -> list[Window]:
    """The visible top-level windows no application on the bus claims (by its frame's title)."""
    titles = {node.name for app in tree.applications for node in app.root.children if node.name}
    return [w for w in windows if w.viewable and w.title and w.title not in titles and w.wm_class.lower() != "tint2"]

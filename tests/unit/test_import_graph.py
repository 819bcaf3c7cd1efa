"""The import graph of ``vdesk/`` has no cycle, counting every import: at module level, inside
functions, under ``TYPE_CHECKING``, relative ones, and the package ``__init__`` that Python runs
before any submodule of it (importing ``vdesk.harness.hosts`` runs ``vdesk/harness/__init__.py``).
No module imports the package face (``vdesk/__init__.py``), which only re-exports. And every
module imports first, alone, in a fresh interpreter."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "vdesk"


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the imported vdesk module
    line: int
    face_names: tuple[str, ...] = ()  # names taken from the package face itself


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> list[Import]:
    """Every import of a vdesk module in ``path``, wherever it stands in the file."""
    is_package = path.name == "__init__.py"
    found: list[Import] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _known_prefix(alias.name, known)
                if target is not None:
                    found.append(Import(name, target, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, name, is_package)
            if _known_prefix(base, known) is None:
                continue
            plain: list[str] = []
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                if submodule in known:  # `from vdesk import engine`: the module vdesk.engine
                    found.append(Import(name, submodule, node.lineno))
                else:
                    plain.append(alias.name)
            if plain:
                target = _known_prefix(base, known)
                assert target is not None
                face = tuple(plain) if target == "vdesk" else ()
                found.append(Import(name, target, node.lineno, face))
    return found


def _absolute(node: ast.ImportFrom, name: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    package = name.split(".") if is_package else name.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _known_prefix(dotted: str, known: set[str]) -> str | None:
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in known:
            return ".".join(parts[:end])
    return None


def graph() -> tuple[dict[str, set[str]], list[Import]]:
    found = modules()
    known = set(found)
    edges: dict[str, set[str]] = {name: set() for name in known}
    every: list[Import] = []
    for name, path in found.items():
        for item in imports_of(name, path, known):
            every.append(item)
            if item.target != name:
                edges[name].add(item.target)
    return edges, every


def _enclosing_package(name: str, known: set[str]) -> str | None:
    parent = name.rpartition(".")[0]
    return parent if parent in known and parent != "vdesk" else None


def package_init_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Cycles through a package ``__init__`` that Python runs before a submodule of it.

    Importing ``pkg.sub`` runs ``pkg/__init__.py`` first. A chain from there back to ``pkg.sub``
    that stays inside ``pkg`` is harmless: every module of ``pkg`` starts after its ``__init__``,
    so none is half-made when the chain reaches it. A chain that leaves ``pkg`` fails when the
    module outside is imported first: it is half-made when the chain comes back to it
    (``import vdesk.osworld.getters`` once failed this way, through ``vdesk.harness``)."""
    known = set(edges)
    found: list[list[str]] = []
    for sub in sorted(known):
        package = _enclosing_package(sub, known)
        if package is None or sub in edges[package]:
            continue
        path = _path_leaving(package, sub, edges)
        if path is not None:
            found.append([sub, *path])
    return found


def _path_leaving(package: str, target: str, edges: dict[str, set[str]]) -> list[str] | None:
    """A shortest import chain ``package → … → target`` through a module outside ``package``."""
    inside = lambda name: name == package or name.startswith(package + ".")  # noqa: E731
    paths: dict[tuple[str, bool], list[str]] = {(package, False): [package]}
    queue = [(package, False)]
    while queue:
        node, left = queue.pop(0)
        for nxt in sorted(edges[node]):
            state = (nxt, left or not inside(nxt))
            if nxt == target and state[1]:
                return paths[(node, left)] + [nxt]
            if state not in paths:
                paths[state] = paths[(node, left)] + [nxt]
                queue.append(state)
    return None


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected group of modules (Tarjan), e.g.
    ``[a, b, a]``, sorted so the report is stable."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(_cycle_in(group, edges) for group in groups)


def _cycle_in(group: set[str], edges: dict[str, set[str]]) -> list[str]:
    """A shortest cycle through the group's first module (breadth-first)."""
    start = min(group)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for target in sorted(edges[node] & group):
            if target == start:
                return paths[node] + [start]
            if target not in paths:
                paths[target] = paths[node] + [target]
                queue.append(target)
    raise AssertionError(f"no cycle in {sorted(group)}")


# -- the checker checks what it should ------------------------------------------------------------
def test_the_walker_sees_imports_inside_functions_under_type_checking_and_relative_ones(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "import vdesk.coords\n"
        "if TYPE_CHECKING:\n"
        "    from vdesk.desktop import Desktop\n"
        "def f():\n"
        "    from . import keys\n"
        "    from .adapters import uitars\n"
        "    from vdesk import Desktop\n")
    known = {"vdesk", "vdesk.m", "vdesk.coords", "vdesk.desktop", "vdesk.keys", "vdesk.adapters",
             "vdesk.adapters.uitars"}
    found = imports_of("vdesk.m", source, known)
    assert sorted({item.target for item in found}) == ["vdesk", "vdesk.adapters.uitars", "vdesk.coords",
                                                       "vdesk.desktop", "vdesk.keys"]
    assert [item.face_names for item in found if item.face_names] == [("Desktop",)]


def test_the_cycle_finder_names_each_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": {"d"}, "f": {"a"}}
    assert cycles(edges) == [["a", "b", "c", "a"], ["d", "e", "d"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


# -- vdesk itself ------------------------------------------------------------------------------------
def test_vdesk_has_no_import_cycle() -> None:
    edges, _ = graph()
    found = cycles(edges)
    assert not found, "import cycles in vdesk/:\n" + "\n".join(" → ".join(cycle) for cycle in found)


def test_vdesk_has_no_cycle_through_a_package_init() -> None:
    edges, _ = graph()
    found = package_init_cycles(edges)
    assert not found, "cycles through a package __init__ (the first module runs it):\n" + "\n".join(
        " ⇢ ".join(cycle[:2]) + " → " + " → ".join(cycle[2:]) for cycle in found)


def test_the_package_init_checker_tells_a_chain_that_leaves_the_package() -> None:
    leaves = {"p": {"p.a"}, "p.a": {"q"}, "q": {"p.b"}, "p.b": set()}
    assert package_init_cycles(leaves) == [["p.b", "p", "p.a", "q", "p.b"]]
    stays = {"p": {"p.a"}, "p.a": {"p.b"}, "p.b": set(), "q": set()}
    assert package_init_cycles(stays) == []


# Imports each named module first in a child forked from an interpreter that holds the third-party
# libraries but no vdesk module: as fresh as a new interpreter for vdesk, without paying docker-py,
# pydantic and Pillow again for each of a hundred modules.
_FORK_EACH = """
import importlib, os, sys
for library in ("docker", "pydantic", "PIL.Image", "Xlib.display", "twisted.internet.reactor", "vncdotool",
                "typer", "rich", "numpy", "yaml", "httpx", "starlette", "mcp"):
    try:
        importlib.import_module(library)
    except Exception:
        pass
assert not [name for name in sys.modules if name == "vdesk" or name.startswith("vdesk.")]
for name in sys.argv[1:]:
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(read)
        try:
            importlib.import_module(name)
            message = ""
        except BaseException as error:
            message = f"{type(error).__name__}: {error}"
        os.write(write, message.encode()[:4000])
        os._exit(0)
    os.close(write)
    message = b""
    while chunk := os.read(read, 4096):
        message += chunk
    os.close(read)
    os.waitpid(child, 0)
    if message:
        print(f"{name}: {message.decode()}")
"""


def test_every_module_imports_first_in_a_fresh_interpreter() -> None:
    """A cycle hidden behind a package ``__init__`` shows only at run time, as an ImportError of a
    partially initialised module, and only when that module is the first one imported."""
    root = str(PACKAGE.parent)
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", _FORK_EACH, *sorted(modules())], capture_output=True,
                          text=True, env=env, cwd=root, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not done.stdout.strip(), "modules that fail to import first:\n" + done.stdout


def test_a_module_that_fails_to_import_first_is_named(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("raise ImportError('partially initialized')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", _FORK_EACH, "json", "broken"], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.stdout.strip() == "broken: ImportError: partially initialized"


def test_no_module_imports_the_package_face() -> None:
    _, every = graph()
    offenders = [f"{item.source} (line {item.line}) takes {', '.join(item.face_names)} from vdesk"
                 for item in every if item.face_names and item.source != "vdesk"]
    assert not offenders, "\n".join(offenders)


def test_the_desktop_does_not_import_the_operator() -> None:
    edges, _ = graph()
    assert "vdesk.integrations.operator" not in edges["vdesk.desktop"]


def test_what_only_encodes_frames_does_not_import_the_agent_contract() -> None:
    edges, _ = graph()
    for module in ("vdesk.cluster.actors", "vdesk.mcp.tools", "vdesk.osworld.server", "vdesk.bench.speed"):
        assert "vdesk.integrations.operator" not in edges[module], module


def test_the_mcp_server_layers_call_only_down() -> None:
    """Transports (stdio, http) over the tool catalogue over the pool of desktops; nothing in
    vdesk imports the package's face (it only re-exports, for users)."""
    edges, every = graph()
    assert not edges["vdesk.mcp.pool"] & {"vdesk.mcp.tools", "vdesk.mcp.http", "vdesk.mcp.stdio"}
    assert not edges["vdesk.mcp.tools"] & {"vdesk.mcp.http", "vdesk.mcp.stdio"}
    assert [item.source for item in every if item.target == "vdesk.mcp" and item.source != "vdesk.mcp"] == []


def test_importing_the_mcp_package_loads_neither_the_sdk_nor_a_desktop() -> None:
    root = str(PACKAGE.parent)
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    code = ("import sys, vdesk.mcp; print(sorted(m for m in sys.modules "
            "if m.split('.')[0] in ('vdesk', 'mcp', 'docker')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=root, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "['vdesk', 'vdesk.lazy', 'vdesk.mcp', 'vdesk.version']"


def test_the_x_connection_is_a_transport_its_users_sit_above() -> None:
    """Windows, XTEST input and the keymap take the X connection; it knows none of them."""
    edges, _ = graph()
    assert not edges["vdesk.xconn"] & {"vdesk.windows", "vdesk.xtest", "vdesk.keymap", "vdesk.desktop"}
    for user in ("vdesk.windows", "vdesk.xtest", "vdesk.keymap"):
        assert "vdesk.xconn" in edges[user], user


PARTS = ("vdesk.screen", "vdesk.input", "vdesk.text", "vdesk.elements", "vdesk.programs", "vdesk.vnc",
         "vdesk.files", "vdesk.clipboard", "vdesk.windows", "vdesk.browser", "vdesk.guard")


def test_the_desktop_is_a_handle_over_parts_that_never_reach_back() -> None:
    """The desktop builds its parts; no part imports the desktop, and the guard (which every
    part takes) imports no part."""
    edges, _ = graph()
    for part in PARTS:
        assert "vdesk.desktop" not in edges[part], part
    assert not edges["vdesk.guard"] & set(PARTS)
    for part in ("vdesk.screen", "vdesk.input", "vdesk.text", "vdesk.elements", "vdesk.programs", "vdesk.vnc"):
        assert part in edges["vdesk.desktop"], part


def test_the_harness_knows_no_benchmark_its_task_extensions_bring() -> None:
    """OSWorld depends on the harness (its tasks are a task extension), never the reverse."""
    edges, _ = graph()
    for module, targets in edges.items():
        if module == "vdesk.harness" or module.startswith("vdesk.harness."):
            assert not {t for t in targets if t == "vdesk.osworld" or t.startswith("vdesk.osworld.")}, module

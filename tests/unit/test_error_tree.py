"""vdesk's errors are grouped by what a caller catches: every error vdesk raises belongs to
exactly one group under ``VdeskError``, the tree drawn in ``vdesk.errors``' docstring is the tree
the classes make, and no code raises the bare base class (a caller could catch nothing narrower)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import vdesk
from vdesk import errors

GROUPS = (errors.UsageError, errors.HostError, errors.DesktopError, errors.VNCError, errors.HarnessError,
          errors.OSWorldError, errors.ClusterError)
PACKAGE = Path(vdesk.__file__).parent


def _classes() -> list[type[BaseException]]:
    return [value for value in vars(errors).values()
            if inspect.isclass(value) and issubclass(value, errors.VdeskError) and value.__module__ == "vdesk.errors"]


def test_every_error_is_in_exactly_one_group() -> None:
    for cls in _classes():
        if cls is errors.VdeskError or cls in GROUPS:
            continue
        groups = [group.__name__ for group in GROUPS if issubclass(cls, group)]
        assert len(groups) == 1, f"{cls.__name__} is in {groups or 'no group'}"


def test_the_docstring_draws_the_tree_the_classes_make() -> None:
    drawn: dict[str, str] = {}  # name -> the name of the line above it one level up
    stack: list[tuple[int, str]] = []
    for line in (errors.__doc__ or "").splitlines():
        stripped = line.strip()
        if not stripped or stripped[0] not in "├└│V" or not any(c.isalpha() for c in stripped):
            continue
        name = stripped.lstrip("├└│─ ").split()[0]
        depth = len(line) - len(line.lstrip(" │├└─"))
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            drawn[name] = stack[-1][1]
        stack.append((depth, name))
    made = {cls.__name__: next(base.__name__ for base in cls.__bases__ if issubclass(base, errors.VdeskError))
            for cls in _classes() if cls is not errors.VdeskError}
    assert drawn == made


def test_no_code_raises_the_bare_base_class() -> None:
    bare = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "errors.py" and path.parent == PACKAGE:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "VdeskError":
                bare.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert not bare, bare

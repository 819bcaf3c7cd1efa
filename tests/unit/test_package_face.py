"""The package face: ``from vdesk import Desktop`` and every other public name works, the
errors users catch all live in ``vdesk.errors`` and are exported, and ``import vdesk`` alone
loads none of the heavy modules behind those names."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import vdesk
from vdesk import errors

PACKAGE = Path(vdesk.__file__).parent


@pytest.mark.parametrize("name", vdesk.__all__)
def test_every_public_name_imports_from_the_package(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from vdesk import {name}", namespace)  # the statement a user writes
    assert namespace[name] is getattr(vdesk, name)
    assert name in dir(vdesk)


def test_the_public_surface_holds_what_a_user_reaches_for_first() -> None:
    from vdesk import BaseAction, Coordinates, Desktop, ExecuteResult, ImageSpace, Limits, Operator, ScreenContext

    assert Desktop.__module__ == "vdesk.desktop" and Operator.__module__ == "vdesk.integrations.operator"
    assert [cls.__module__ for cls in (BaseAction, Coordinates, ExecuteResult, ImageSpace, Limits, ScreenContext)] == [
        "vdesk.actions", "vdesk.actions", "vdesk.actions", "vdesk.coords", "vdesk.spec", "vdesk.integrations.operator"]
    assert vdesk.__version__ and len(set(vdesk.__all__)) == len(vdesk.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_thing"):
        vdesk.no_such_thing  # type: ignore[attr-defined]  # noqa: B018
    with pytest.raises(ImportError):
        exec("from vdesk import no_such_thing", {})


def test_every_error_in_errors_is_exported_and_is_a_vdesk_error() -> None:
    defined = {name for name, value in vars(errors).items()
               if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == "vdesk.errors"}
    assert defined <= set(vdesk.__all__)
    assert all(issubclass(getattr(errors, name), errors.VdeskError) for name in defined)
    assert all(name in (errors.__doc__ or "") for name in defined), "the docstring draws every error"


def test_no_exception_class_is_defined_outside_errors() -> None:
    elsewhere = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "errors.py" and path.parent == PACKAGE:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and any(_names_an_exception(base) for base in node.bases):
                elsewhere.append(f"{path.relative_to(PACKAGE.parent)}: {node.name}")
    assert not elsewhere, "exceptions belong in vdesk/errors.py: " + ", ".join(elsewhere)


def _names_an_exception(base: ast.expr) -> bool:
    name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
    return name.endswith(("Error", "Exception", "Refused", "Unavailable", "Gone", "Timeout", "NotFound",
                          "Failed", "Invalid", "Key")) or name in vars(errors)


def test_import_vdesk_alone_loads_nothing_heavy() -> None:
    code = ("import sys, vdesk\n"
            "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('vdesk', 'docker', 'PIL', 'Xlib', 'twisted', 'vncdotool', 'pydantic', 'ray'))))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert loaded == ["vdesk", "vdesk.lazy", "vdesk.version"]


def test_py_typed_is_shipped() -> None:
    assert (PACKAGE / "py.typed").is_file()

"""The documentation site's docstring roles become inline code (scripts/docs_roles.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("docs_roles", ROOT / "scripts" / "docs_roles.py")
docs_roles = importlib.util.module_from_spec(spec)
spec.loader.exec_module(docs_roles)


def test_roles_become_inline_code_and_a_tilde_keeps_the_last_name():
    text = "raises :class:`InvalidArgument`; see :mod:`vdesk.clock` and :py:meth:`~vdesk.desktop.Desktop.run`"
    assert docs_roles.plain(text) == "raises `InvalidArgument`; see `vdesk.clock` and `run`"


def test_text_without_roles_and_plain_code_stay_as_they_are():
    text = "``run(argv)`` returns at once: a `literal` and a time 10:30"
    assert docs_roles.plain(text) == text

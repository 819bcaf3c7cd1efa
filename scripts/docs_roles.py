"""A Griffe extension for the documentation site: vdesk's docstrings cross-reference in Sphinx
roles (:class:`InvalidArgument`, :meth:`run`, :mod:`vdesk.clock`), which Markdown shows as the
raw role; here each becomes inline code (`InvalidArgument`), before mkdocstrings renders it.

Loaded by mkdocs.yml (the python handler's ``extensions``). A role becomes code, not a link:
most name a short, unqualified target that the site could not resolve, and an unresolved link
is a warning, which `mkdocs build --strict` makes an error. The cost: one substitution per
docstring as the reference is built.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|mod|func|meth|data|attr|exc|obj|const):`(~?)([^`]+)`")


def plain(text: str) -> str:
    """``text`` with every Sphinx cross-reference role written as inline code (``~a.b.C``: ``C``)."""
    return ROLE.sub(lambda match: f"`{match.group(2).rsplit('.', 1)[-1] if match.group(1) else match.group(2)}`", text)


class SphinxRolesAsCode(griffe.Extension):
    """Rewrites the roles of every docstring Griffe reads."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = plain(obj.docstring.value)

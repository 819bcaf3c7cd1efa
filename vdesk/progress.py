"""How long operations report what they are doing: one line at a time, for people.

Any ``Callable[[str], None]`` will do (``print`` is the default almost everywhere); the CLI
passes one that writes to stderr.
"""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[str], None]

"""stdout carries a command's answer alone: what vdesk says on the way goes to stderr."""

from __future__ import annotations

import inspect

from vdesk import images as image


def test_image_progress_goes_to_stderr_by_default(capsys):
    for step in (image.ensure, image.copy, image.build, image.build_apps, image.resolve_base, image.make_local_base):
        assert inspect.signature(step).parameters["progress"].default is image._to_stderr, step.__name__
    image._to_stderr("Step 1/15 : FROM base")
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == "Step 1/15 : FROM base\n"

"""Fixtures for tests against a real apps desktop (``vdesk/desktop-apps``) in a real container."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from vdesk.desktop import Desktop


@pytest.fixture(scope="session")
def shared_desktop() -> Iterator[Desktop]:
    """One 1280x800 apps desktop for the tests that only look at it (the sandbox tests of
    tests/desktop run against it too, under this name)."""
    with Desktop.up(size=(1280, 800), image="apps", timeout=120) as desktop:
        yield desktop

"""Fixtures for tests against a real desktop in a real container."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.desktop.probe import EventProbe
from vdesk.desktop import Desktop


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test here needs a Docker engine and the desktop image: `-m "not desktop"` leaves them out."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.desktop)


@pytest.fixture(scope="session")
def shared_desktop() -> Iterator[Desktop]:
    """One 1280x800 desktop for the tests that only need a screen (a probe covers it)."""
    with Desktop.up(size=(1280, 800)) as desktop:
        yield desktop


@pytest.fixture
def probe(shared_desktop: Desktop) -> Iterator[EventProbe]:
    with EventProbe(shared_desktop) as probe:
        yield probe

"""Fixtures for the protocol front doors (Gymnasium, the agent SDKs' computer interfaces) on
real desktops in real containers."""

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


@pytest.fixture(scope="module")
def screen_desktop() -> Iterator[Desktop]:
    """One 1280x800 desktop per module for the tests that drive a screen (a probe covers it)."""
    with Desktop.up(size=(1280, 800)) as desktop:
        yield desktop


@pytest.fixture
def probe(screen_desktop: Desktop) -> Iterator[EventProbe]:
    with EventProbe(screen_desktop) as probe:
        yield probe

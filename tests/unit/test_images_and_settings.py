"""Image names, each image's context hash, and the desktop settings a task may ask for."""

from __future__ import annotations

from pathlib import Path

import pytest

from vdesk import images
from vdesk.errors import InvalidArgument
from vdesk.spec import DesktopSpec


def test_image_names_resolve_to_vdesks_images_or_pass_through():
    assert images.resolve("lean") == images.IMAGE and images.resolve("apps") == images.APPS_IMAGE
    assert images.resolve("example/custom:1") == "example/custom:1"
    assert images.is_apps("apps") and images.is_apps(images.APPS_IMAGE) and not images.is_apps("lean")
    with pytest.raises(InvalidArgument, match="image must be"):
        images.resolve("  ")


@pytest.fixture
def context(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "apps").mkdir()
    (tmp_path / "Dockerfile").write_text("FROM base\n")
    (tmp_path / "apps" / "Dockerfile").write_text("ARG BASE\nFROM ${BASE}\n")
    monkeypatch.setattr(images, "context_dir", lambda: tmp_path)
    return tmp_path


def test_the_apps_files_do_not_make_the_lean_image_stale_but_a_lean_change_makes_both(context):
    lean, apps = images.context_hash("lean"), images.context_hash("apps")
    (context / "apps" / "tint2rc").write_text("panel_size = 100% 30\n")
    assert images.context_hash("lean") == lean and images.context_hash("apps") != apps
    apps = images.context_hash("apps")
    (context / "entrypoint.sh").write_text("#!/bin/bash\n")
    assert images.context_hash("lean") != lean and images.context_hash("apps") != apps


def test_the_osworld_image_is_made_stale_by_its_own_files_and_those_it_is_built_from(context):
    (context / "osworld").mkdir()
    (context / "osworld" / "Dockerfile").write_text("ARG BASE\nFROM ${BASE}\n")
    lean, apps, osworld = (images.context_hash(name) for name in ("lean", "apps", "osworld"))
    (context / "osworld" / "vlcrc").write_text("[core]\n")
    assert (images.context_hash("lean"), images.context_hash("apps")) == (lean, apps)
    assert images.context_hash("osworld") != osworld
    osworld = images.context_hash("osworld")
    (context / "apps" / "tint2rc").write_text("panel_size = 100% 30\n")
    assert images.context_hash("osworld") != osworld
    assert images.resolve("osworld") == images.OSWORLD_IMAGE and images.is_osworld(images.OSWORLD_IMAGE)
    assert images.is_apps("osworld") and not images.is_osworld("apps")


def test_a_task_may_ask_for_the_apps_image_and_a_clock():
    settings = DesktopSpec.model_validate({"image": "apps", "clock": "2026-01-01 00:00:00"})
    assert (settings.image, settings.clock) == ("apps", "2026-01-01 00:00:00")
    assert DesktopSpec().image is None and DesktopSpec().clock is None
    with pytest.raises(ValueError, match="invalid clock"):
        DesktopSpec.model_validate({"clock": "soon"})


def test_the_gnome_desktop_is_given_longer_to_start_than_the_others() -> None:
    assert images.start_timeout("osworld") == images.start_timeout(images.OSWORLD_IMAGE) == images.GNOME_START_TIMEOUT
    assert {images.start_timeout(name) for name in ("lean", "apps", "osworld-openbox", "some/other:image")} == \
        {images.START_TIMEOUT}
    assert images.GNOME_START_TIMEOUT > images.START_TIMEOUT

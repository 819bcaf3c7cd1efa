"""The HTML report: actions drawn on frames, an animated GIF per episode, and the page as a
real headless browser shows it (its screenshot becomes the README's picture, images/report.png,
only when `make pictures` asks for it: a test run writes nothing tracked)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from vdesk.actions import BaseAction
from vdesk.coords import ImageSpace
from vdesk.harness.record import episode_folders, load_run
from vdesk.harness.report import CLICK, DRAG, annotate, write_report

PICTURES = "VDESK_README_PICTURES"  # set by `make pictures`: the folder of the README's pictures
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
                  "--disable-component-update", "--disable-sync", "--hide-scrollbars"]


def near(image: Image.Image, point: tuple[int, int], colour: tuple[int, int, int], radius: int = 12) -> bool:
    x0, y0 = point
    return any(image.getpixel((x, y)) == colour for x in range(x0 - radius, x0 + radius + 1)
               for y in range(y0 - radius, y0 + radius + 1))


def test_clicks_drags_and_typed_text_are_drawn_where_they_happened():
    frame = Image.new("RGB", (400, 300), (255, 255, 255))
    actions = [BaseAction.of("click", point=[100, 80]),
               BaseAction.of("drag", start=[200, 150], end=[350, 150]),
               BaseAction.of("type", content="hello\n")]
    drawn = annotate(frame, actions, ImageSpace(400, 300))
    assert near(drawn, (100, 90), CLICK) and not near(frame, (100, 90), CLICK)
    assert drawn.getpixel((275, 150)) == DRAG  # along the arrow
    assert drawn.getpixel((12, 290)) != (255, 255, 255)  # the caption box at the bottom


def test_points_are_drawn_in_the_frame_the_agent_saw():
    frame = Image.new("RGB", (200, 100), (255, 255, 255))
    drawn = annotate(frame, [BaseAction.of("click", point={"normalized": {"x": 0.5, "y": 0.5}})], ImageSpace(200, 100))
    assert near(drawn, (100, 50), CLICK, radius=11)


@pytest.fixture(scope="module")
def report(suite_run: Path) -> Path:
    return write_report(suite_run)


@pytest.mark.desktop
def test_the_report_links_every_frame_and_an_animated_gif_per_episode(report, suite_run):
    page = report.read_text()
    sources = re.findall(r"src='([^']+)'", page)
    assert sources and all((suite_run / source).is_file() for source in sources)
    for folder in episode_folders(suite_run):
        run = load_run(folder)
        assert f"id=\"{run.task.id}\"" in page
        with Image.open(suite_run / "report" / f"{run.task.id}.gif") as gif:
            assert gif.is_animated and gif.n_frames == len(run.steps) + 1


@pytest.mark.desktop
def test_the_report_renders_in_a_headless_browser(report, tmp_path):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    assert browser, "chromium is not installed (make engine installs it)"  # never a silent skip
    flags = [browser, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([*flags, "--virtual-time-budget=10000", "--dump-dom", report.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    counts = re.search(r'<body data-images="(\d+)" data-loaded="(\d+)"', dom.stdout)
    assert counts, dom.stdout[:500]
    assert int(counts[1]) > 20 and counts[1] == counts[2]  # every picture loaded
    picture_path = Path(os.environ.get(PICTURES) or tmp_path) / "report.png"
    shot = subprocess.run([*flags, "--window-size=1280,1400", f"--screenshot={picture_path}", report.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert shot.returncode == 0 and picture_path.is_file(), shot.stderr[-2000:]
    with Image.open(picture_path) as picture:
        assert picture.size == (1280, 1400)
        assert len(picture.convert("RGB").getcolors(maxcolors=1 << 20) or []) > 100  # not a blank page


@pytest.mark.desktop
def test_an_episode_recorded_with_video_shows_it_in_the_report(tmp_path):
    import imageio_ffmpeg

    from tests.harness.conftest import SUITE
    from vdesk.harness.agents import ScriptedAgent
    from vdesk.harness.runner import run_suite
    from vdesk.harness.tasks import load_suite

    task = load_suite(SUITE)[0]
    out = tmp_path / "run"
    run_suite([task], ScriptedAgent, out=out, video=True)
    video = out / task.id / "video.mp4"
    page = write_report(out).read_text()
    assert f"<video controls preload='metadata' src='{task.id}/video.mp4'>" in page
    reader = imageio_ffmpeg.read_frames(str(video))
    size = next(reader)["size"]
    frames = [bytes(data) for data in reader]
    assert len(frames) >= 10  # a second or more of the episode at 10 fps
    with Image.open(out / task.id / "final.png") as final:
        last = Image.frombytes("RGB", size, frames[-1])
        assert last.size == final.size
        # The video ends on the screen the episode ended on (lossy coding: close, not equal).
        difference = sum(abs(a - b) for a, b in zip(last.tobytes(), final.convert("RGB").tobytes(), strict=True))
        assert difference / len(frames[-1]) < 8

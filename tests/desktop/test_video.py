"""Video: what a recording shows is what screenshots showed at the same moments."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import imageio_ffmpeg
import pytest
from PIL import Image, ImageChops, ImageStat

from vdesk.desktop import Desktop
from vdesk.errors import InvalidArgument

COLOURS = ((200, 30, 30), (30, 200, 30), (30, 30, 200), (230, 230, 40))
FPS = 10
HOLD = 2 * FPS  # frames each colour stays on screen past its screenshot, counted as the video writes them
SIZE = (640, 400)


def decode(path: Path) -> list[Image.Image]:
    """Every frame of a video file, as RGB images."""
    reader = imageio_ffmpeg.read_frames(str(path))
    size = next(reader)["size"]
    return [Image.frombytes("RGB", size, bytes(data)) for data in reader]


def difference(first: Image.Image, second: Image.Image) -> float:
    """Mean absolute difference per channel, 0-255 (video coding is lossy; colours stay close)."""
    return sum(ImageStat.Stat(ImageChops.difference(first, second)).mean) / 3


def paint(desktop: Desktop, colour: tuple[int, int, int]) -> None:
    desktop.programs.run(["xsetroot", "-solid", "#%02x%02x%02x" % colour], wait=True).check()


@pytest.fixture(scope="module")
def desktop():
    with Desktop.up(size=SIZE) as desktop:
        yield desktop


def test_a_recorded_video_shows_what_screenshots_showed_at_the_same_moments(desktop, tmp_path):
    path = tmp_path / "session.mp4"
    moments: list[tuple[int, Image.Image]] = []  # the last frame before the next colour, and the screenshot
    with desktop.screen.record(path, fps=FPS) as recording:
        for colour in COLOURS:
            paint(desktop, colour)
            shot = desktop.screen.shot()
            # Counted in frames, not seconds: HOLD frames written after the screenshot, the last
            # of them before the next colour is painted, show what the screen showed meanwhile.
            shown, deadline = recording.frames, time.monotonic() + 120
            while recording.frames < shown + HOLD:
                assert time.monotonic() < deadline, f"only {recording.frames - shown} frames in 120 s"
                time.sleep(0.05)
            moments.append((recording.frames - 1, shot))
        recorded_for = recording.elapsed()
    ended = recording.elapsed()
    frames = decode(path)
    assert len(frames) == recording.frames and frames[0].size == SIZE
    # The video's clock is the wall clock: every frame slot up to the end holds a frame, and no
    # more (a late tick fills the slots it missed).
    assert int(recorded_for * FPS) + 1 <= len(frames) <= int(ended * FPS) + 2, (recorded_for, ended, len(frames))
    for index, (at, shot) in enumerate(moments):
        assert difference(frames[at], shot) < 6, f"frame {at} differs from the screenshot taken just before"
        other = moments[(index + 1) % len(moments)][1]
        assert difference(frames[at], other) > 40  # the comparison tells colours apart


def test_recording_refuses_a_bad_path_or_rate(desktop, tmp_path):
    with pytest.raises(InvalidArgument, match="must end in .mp4"):
        desktop.screen.record(tmp_path / "session.gif").__enter__()
    with pytest.raises(InvalidArgument, match="fps must be"):
        desktop.screen.record(tmp_path / "session.mp4", fps=0).__enter__()
    with pytest.raises(InvalidArgument, match="does not exist"):
        desktop.screen.record(tmp_path / "missing" / "session.mp4").__enter__()


def test_vdesk_record_until_ctrl_c_finishes_a_playable_file(desktop, tmp_path):
    path = tmp_path / "cli.mp4"
    paint(desktop, COLOURS[0])
    command = [sys.executable, "-c", "from vdesk.cli import main; main()", "record", desktop.name, "-o", str(path)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)  # Ctrl-C goes to its whole group, as in a terminal
    try:
        deadline = time.monotonic() + 30
        while not path.exists():  # ffmpeg creates it as the recording starts
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "no recording started within 30 s"
            time.sleep(0.1)
        time.sleep(1.5)
        os.killpg(process.pid, signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, stderr
    assert f"saved {path}" in stdout
    frames = decode(path)
    assert len(frames) >= 5
    assert difference(frames[-1], Image.new("RGB", SIZE, COLOURS[0])) < 6


@pytest.mark.parametrize("seconds, fps", [(2, 10), (1.5, 4)])
def test_vdesk_record_for_seconds_writes_exactly_that_much_video(desktop, tmp_path, seconds, fps):
    path = tmp_path / "timed.mp4"
    done = subprocess.run([sys.executable, "-c", "from vdesk.cli import main; main()", "record", desktop.name,
                           "-o", str(path), "--seconds", str(seconds), "--fps", str(fps)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    frames, duration = imageio_ffmpeg.count_frames_and_secs(str(path))  # what the file says, decoded
    assert frames == round(seconds * fps) and len(decode(path)) == frames
    assert abs(duration - seconds) <= 1 / fps
    assert done.stdout == f"saved {path} ({frames} frames, {seconds:.1f} s)\n"

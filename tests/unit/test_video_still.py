"""A recording of a still screen: the grab hands back the very same image, and the video still
shows it at every moment (its pixels are converted once, sent again)."""

from __future__ import annotations

import time
from pathlib import Path

import imageio_ffmpeg
from PIL import Image, ImageChops, ImageStat

from vdesk import video

SIZE = (320, 200)
RED, BLUE = Image.new("RGB", SIZE, (200, 30, 30)), Image.new("RGB", SIZE, (30, 30, 200))


def test_a_still_screen_is_converted_once_and_shown_throughout(tmp_path: Path, monkeypatch):
    converted: list[Image.Image] = []
    pixels = video._pixels
    monkeypatch.setattr(video, "_pixels", lambda image, size: converted.append(image) or pixels(image, size))
    grabs = [0]

    def grab() -> Image.Image:  # red for the first three grabs, blue after: the same object each time
        grabs[0] += 1
        return RED if grabs[0] <= 3 else BLUE

    with video.record(grab, tmp_path / "still.mp4", size=SIZE, fps=10) as recording:
        deadline = time.monotonic() + 60  # counted in grabs, not seconds: ffmpeg may start late
        while grabs[0] < 6:
            assert time.monotonic() < deadline, f"only {grabs[0]} grabs in 60 s"
            time.sleep(0.05)
    assert converted == [RED, BLUE]
    reader = imageio_ffmpeg.read_frames(str(tmp_path / "still.mp4"))
    size = next(reader)["size"]
    frames = [Image.frombytes("RGB", size, bytes(data)) for data in reader]
    assert len(frames) == recording.frames
    colours = [tuple(round(c) for c in ImageStat.Stat(frame).mean) for frame in frames]
    # Red first and blue last, in that order (frames go to ffmpeg as BGR: no channel swapped).
    assert colours[1][0] > 150 > colours[1][2] and colours[-1][2] > 150 > colours[-1][0], colours
    assert sum(ImageStat.Stat(ImageChops.difference(frames[-1], BLUE)).mean) / 3 < 6

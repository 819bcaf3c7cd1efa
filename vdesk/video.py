"""Video of a desktop: frames pulled from the held VNC connection, encoded to MP4 by ffmpeg.

    with desktop.screen.record("session.mp4", fps=10) as recording:
        desktop.input.execute(actions)
    print(recording.frames, "frames")

A thread takes a fresh frame at every tick (one round trip for the change since the last
one) and pipes it to an ffmpeg process (the one the imageio-ffmpeg wheel ships) encoding
H.264. The video's clock is the wall clock: a tick that comes late (a busy machine) repeats
the last frame for the slots it missed, so the frame at time *t* of the video is the screen
at *t* seconds after the recording started. A recording given ``seconds`` stops itself at
``round(seconds * fps)`` frames, so the video is as long as asked whenever the caller notices.
Nothing runs inside the desktop.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import imageio_ffmpeg
from PIL import Image

from vdesk.errors import InvalidArgument, RecordingError, VdeskError

DEFAULT_FPS = 10.0
MAX_FPS = 60.0
SUFFIXES = (".mp4",)
# ultrafast: a busy 1280x800 screen at 10 fps costs ffmpeg about 5 % of a core (veryfast: 8-13 %);
# crf 23 keeps text legible. One thread: a frame takes ffmpeg 4 ms, and on a machine shared by
# many desktops x264's extra threads only add their hand-offs (20 % less CPU together with BGR).
ENCODER = ["-preset", "ultrafast", "-crf", "23", "-threads", "1"]
# Frames go to ffmpeg as BGR: its converter has a direct path from BGR to the video's YUV 4:2:0
# (from RGB it takes the general one), and Pillow writes BGR bytes as fast as RGB ones.
PIXEL_FORMAT = "bgr24"
# Named, not left to imageio-ffmpeg: to choose, it lists ffmpeg's encoders and test-encodes
# 8 s of video with each candidate, 0.1 s of CPU and over a second before a process's first recording.
CODEC = "libx264"
FINISH_TIMEOUT = 60.0  # seconds ffmpeg may take to write out what it holds once the input ends

Grab = Callable[[], Image.Image]


@dataclass
class Recording:
    """A recording under way (then done): where it goes, and how far it got."""

    path: Path
    fps: float
    size: tuple[int, int]
    started: float = 0.0   # time.monotonic() of frame 0
    frames: int = 0        # written so far
    error: VdeskError | None = None  # why grabbing stopped early (e.g. the desktop went away)
    limit: int | None = None  # frames at which it stops itself (``seconds`` asked), or None: when told
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _ended: threading.Event = field(default_factory=threading.Event, repr=False)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds for grabbing to end (its length reached, or an error);
        True once it has."""
        return self._ended.wait(timeout)

    def elapsed(self) -> float:
        """Seconds since the recording started: where in the video the screen now is."""
        return time.monotonic() - self.started

    @property
    def seconds(self) -> float:
        """The length of the video written so far."""
        return self.frames / self.fps


def check_options(path: str | Path, fps: float) -> Path:
    """The output path, once ``path`` and ``fps`` are known to be usable; else InvalidArgument."""
    path = Path(path)
    if path.suffix.lower() not in SUFFIXES:
        raise InvalidArgument(f"video path {str(path)!r} must end in {' or '.join(SUFFIXES)}")
    if not path.parent.is_dir():
        raise InvalidArgument(f"video path {str(path)!r}: folder {str(path.parent)!r} does not exist")
    if not 0 < fps <= MAX_FPS:  # also refuses nan
        raise InvalidArgument(f"fps must be more than 0 and at most {MAX_FPS:g}, got {fps}")
    return path


@contextmanager
def record(grab: Grab, path: str | Path, *, size: tuple[int, int], fps: float = DEFAULT_FPS,
           seconds: float | None = None) -> Iterator[Recording]:
    """Record ``grab()`` (a fresh frame of ``size``) at ``fps`` into ``path`` while inside, or
    for ``seconds`` of video at most (:meth:`Recording.wait` returns once they are written).
    A grab that returns the very image it returned before says the screen did not change: its
    pixels are sent again without being converted again.

    Leaving the block, however it is left (an exception, Ctrl-C), takes a last frame and
    finishes the file so that it plays; a grab that failed on the way is in ``error``.
    """
    recording = Recording(check_options(path, fps), float(fps), size, limit=frame_limit(seconds, fps))
    writer = imageio_ffmpeg.write_frames(str(recording.path), size, fps=recording.fps, codec=CODEC,
                                         pix_fmt_in=PIXEL_FORMAT, quality=None,
                                         macro_block_size=2, ffmpeg_log_level="error",
                                         ffmpeg_timeout=FINISH_TIMEOUT, output_params=ENCODER)
    writer.send(None)  # starts ffmpeg
    recording.started = time.monotonic()
    thread = threading.Thread(target=_run, args=(recording, grab, writer), name=f"vdesk-record-{recording.path.name}",
                              daemon=True)
    thread.start()
    try:
        yield recording
    finally:
        recording._stop.set()
        thread.join()
        writer.close()  # ffmpeg writes out the rest and the file's index


def frame_limit(seconds: float | None, fps: float) -> int | None:
    """The frames of ``seconds`` of video at ``fps`` (at least one); None: no limit."""
    if seconds is None:
        return None
    if not 0 < seconds <= 10**7:  # also refuses nan
        raise InvalidArgument(f"seconds must be more than 0 (and at most 10^7), got {seconds}")
    return max(1, round(seconds * fps))


def _run(recording: Recording, grab: Grab, writer) -> None:  # type: ignore[no-untyped-def]
    try:
        _grab_and_write(recording, grab, writer)
    finally:
        recording._ended.set()


def _grab_and_write(recording: Recording, grab: Grab, writer) -> None:  # type: ignore[no-untyped-def]
    """Grab and write a frame at every tick until told to stop (then once more), or until the
    recording's frame limit."""
    last: bytes | None = None
    last_image: Image.Image | None = None
    while True:
        stopping = recording._stop.wait(max(0.0, recording.started + recording.frames / recording.fps - time.monotonic()))
        if recording.error is None:
            try:
                image = grab()
                if image is not last_image:
                    last, last_image = _pixels(image, recording.size), image
            except VdeskError as error:  # the video ends at the last frame that came
                recording.error = error
        if last is None:
            return
        # Every slot up to now shows this frame (more than one when this tick came late).
        due = max(recording.frames + 1, int(recording.elapsed() * recording.fps) + 1)
        if recording.limit is not None:
            due = min(due, recording.limit)
        try:
            while recording.frames < due:
                writer.send(last)
                recording.frames += 1
        except OSError as error:  # ffmpeg went away (e.g. the disk is full)
            recording.error = RecordingError(f"writing {recording.path} failed: {error}")
            return
        if stopping or recording.error is not None or recording.frames == recording.limit:
            return


def _pixels(image: Image.Image, size: tuple[int, int]) -> bytes:
    """The frame as ffmpeg reads it (:data:`PIXEL_FORMAT`)."""
    if image.size != size:
        image = image.resize(size)
    if image.mode != "RGB":
        image = image.convert("RGB")
    return image.tobytes("raw", "BGR")

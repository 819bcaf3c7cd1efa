"""Replaying a run: the recorded actions again, on a fresh desktop, compared with the original.

A replay matches when it reaches the same check outcomes and the same final frame (a hash of
the pixels). That holds for the example suite because everything that could make two frames
differ is pinned: the image's fonts, locale (C.UTF-8) and time zone; no clock on the lean
screen (the apps one's, below); no pointer in frames (the VNC server leaves it out); xterm's
cursor does not blink; and the tasks set the shell prompt (``PS1='$ '``) instead of showing
the container's host name.

One thing is not pinned: Chromium's compositor paints its window from tiles rasterised at
different moments, and under load the anti-aliased corners of its tab strip can keep a tile
from a moment before the last one: a few pixels one or two levels apart in a frame that shows
the same thing. Two final frames are the same when their pixels are equal or no channel of any
pixel is more than :data:`FRAME_TOLERANCE` levels apart; anything a person or a model could
tell apart (a character, a cursor, a colour) is far more.

And the apps and osworld desktops show a clock (in the taskbar, in GNOME's top bar): a task's clock starts where it
says, but runs on, so a replay on a loaded machine (GIMP taking 70 s to start where it took 20)
ends in another minute. On those images the clock's box (:func:`vdesk.images.clock_box`)
is left out of the comparison; nothing of a task is drawn there.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageChops

from vdesk.harness.agents import ReplayAgent
from vdesk.harness.record import FINAL_FRAME, Outcome, episode_folders, load_run
from vdesk.harness.folders import Existing
from vdesk.harness.runner import run_suite
from vdesk.harness.suite import SuiteEvent, SuiteSummary
from vdesk.images import DEFAULT as DEFAULT_IMAGE, clock_box

FRAME_TOLERANCE = 2  # levels (of 255) a channel of a final frame's pixel may differ by


@dataclass(frozen=True)
class ReplayComparison:
    """One episode and its replay."""

    task_id: str
    original: Outcome | None        # None when the original never finished writing
    replayed: Outcome
    frame_difference: int | None = None  # the largest channel difference of the final frames; None: not comparable

    @property
    def same_checks(self) -> bool:
        if self.original is None:
            return False
        return ([c.passed for c in self.original.checks] == [c.passed for c in self.replayed.checks]
                and self.original.success == self.replayed.success)

    @property
    def same_final_frame(self) -> bool:
        return self.frame_difference is not None and self.frame_difference <= FRAME_TOLERANCE

    @property
    def matches(self) -> bool:
        return self.same_checks and self.same_final_frame

    @property
    def difference(self) -> str:
        """Why the replay does not match, in words ("" when it does): each side's verdict and
        what it failed on, and how far apart the final frames are. A run's report is all a
        mismatch leaves behind (a CI log, a table), so it says what each episode saw."""
        if self.matches:
            return ""
        sides = [f"original: {_ending(self.original)}", f"replay: {_ending(self.replayed)}"]
        if not self.same_final_frame:
            apart = ("not comparable" if self.frame_difference is None
                     else f"{self.frame_difference} levels apart (at most {FRAME_TOLERANCE} match)")
            sides.append(f"final frames {apart}")
        return "; ".join(sides)


def _ending(outcome: Outcome | None) -> str:
    """An episode's end and, when it failed, why: its error and the details of its failed checks."""
    if outcome is None:
        return "unfinished"  # as the table says
    if outcome.success:
        return f"{outcome.status}, passed"
    why = ([outcome.error] if outcome.error else []) + outcome.failed_checks
    return f"{outcome.status}, failed ({' | '.join(why) or 'no check failed'})"


@dataclass(frozen=True)
class ReplayReport:
    comparisons: list[ReplayComparison]
    summary: SuiteSummary
    out: Path

    @property
    def matches(self) -> bool:
        return bool(self.comparisons) and all(c.matches for c in self.comparisons)

    @property
    def differences(self) -> dict[str, str]:
        """Each episode whose replay does not match, and why (:attr:`ReplayComparison.difference`)."""
        return {c.task_id: c.difference for c in self.comparisons if not c.matches}


def default_replay_dir(run: Path) -> Path:
    """Where a replay of ``run`` goes unless told: beside it, as ``RUN.replay``."""
    return run.parent / f"{run.name}.replay"


def replay(run: str | Path, *, out: Path | None = None, parallel: int = 1, image: str = DEFAULT_IMAGE,
           cancel: threading.Event | None = None,
           on_event: Callable[[SuiteEvent], None] | None = None, replace: bool = False) -> ReplayReport:
    """Re-execute the trajectories of ``run`` (an episode folder or a suite run) on fresh
    desktops, writing new run folders to ``out``, and compare each with its original.

    ``out`` holding a run already is refused unless ``replace``; the default folder
    (``RUN.replay``) is the replay's own, and a new replay replaces it."""
    run = Path(run)
    originals = [load_run(folder) for folder in episode_folders(run)]
    existing: Existing = "replace" if replace or out is None else "refuse"
    out = out or default_replay_dir(run)
    tasks = [original.task for original in originals]
    summary = run_suite(tasks, lambda: ReplayAgent(run), out=out, parallel=parallel, image=image,
                        cancel=cancel, on_event=on_event, existing=existing)
    replayed = {outcome.task_id: outcome for outcome in summary.episodes}
    comparisons = [ReplayComparison(o.task.id, o.outcome, replayed[o.task.id],
                                    frame_difference(o.folder, out / o.task.id, o.outcome, replayed[o.task.id],
                                                     image=o.task.desktop.image or image or DEFAULT_IMAGE))
                   for o in originals if o.task.id in replayed]
    return ReplayReport(comparisons, summary, out)


def frame_difference(original: Path, replay: Path, before: Outcome | None, after: Outcome, *,
                     image: str = DEFAULT_IMAGE) -> int | None:
    """How far apart two episodes' final frames are: 0 for equal pixels, else the largest
    difference of a channel of a pixel (outside the clock ``image``'s desktops show); None when
    either has no final frame or their sizes differ."""
    if before is None or before.final_hash is None or after.final_hash is None:
        return None
    if before.final_hash == after.final_hash:
        return 0
    try:
        with Image.open(original / FINAL_FRAME) as first, Image.open(replay / FINAL_FRAME) as second:
            if first.size != second.size:
                return None
            difference = ImageChops.difference(first.convert("RGB"), second.convert("RGB"))
    except OSError:  # a frame file missing or unreadable: nothing to compare
        return None
    clock = clock_box(image, difference.size)
    if clock is not None:
        difference.paste((0, 0, 0), clock)
    return max(high for _, high in difference.getextrema())

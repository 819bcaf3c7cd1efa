"""A desktop's clock: the time every program in it sees at the start, running on from there.

libfaketime is preloaded into what the desktop starts, shifted by a fixed offset from the real
time, so those programs share one clock that runs on (replays of a task then see the same dates
in a taskbar, a file dialog or a page's ``Date.now()``). It is not container-wide: the desktop's
own machinery (the X server, the supervisor and its time-to-live, the channel) keeps the real
time. The programs' monotonic clock moves by the same offset (see
:attr:`ClockSettings.environment`). The image names its libfaketime in the label
:data:`CLOCK_LABEL`; the apps image has one, the lean one does not.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timezone

from vdesk.errors import InvalidArgument

CLOCK_LABEL = "vdesk.clock-library"
CLOCK_RANGE = (2001, 2099)  # a year outside is more likely a typo than a wish


@dataclass(frozen=True)
class ClockSettings:
    """A desktop's clock, ``offset`` seconds from the real time, by the preloaded ``library``."""

    offset: int
    library: str
    start: str

    @property
    def faketime(self) -> str:
        return f"{self.offset:+d}"

    @property
    def environment(self) -> dict[str, str]:
        """What a program started in the desktop needs to see this clock. The monotonic clock is
        shifted too: with FAKETIME_DONT_FAKE_MONOTONIC, libfaketime 0.9.10 fails absolute
        monotonic sleeps with EINVAL (Python's time.sleep; Chromium's debugging port then
        never answers)."""
        return {"LD_PRELOAD": self.library, "FAKETIME": self.faketime}

    @property
    def labels(self) -> dict[str, str]:
        """Where the container remembers its clock (for :meth:`from_labels` on attach)."""
        return {"vdesk.clock": self.start, "vdesk.clock-offset": str(self.offset), CLOCK_LABEL: self.library}

    @classmethod
    def from_labels(cls, labels: dict[str, str]) -> ClockSettings | None:
        if "vdesk.clock-offset" not in labels:
            return None
        return cls(int(labels["vdesk.clock-offset"]), labels[CLOCK_LABEL], labels.get("vdesk.clock", ""))

    @classmethod
    def starting(cls, start: datetime, image_name: str, image_labels: dict[str, str]) -> ClockSettings:
        """The clock that reads ``start`` now, in a desktop of ``image_name``."""
        library = image_labels.get(CLOCK_LABEL)
        if not library:
            raise InvalidArgument(f"clock: image {image_name} has no libfaketime to set a desktop's clock with: "
                                  "use the apps or osworld image (vdesk up --apps, image='apps')")
        return cls(round(start.timestamp() - time.time()), library, start.strftime("%Y-%m-%d %H:%M:%S"))


def parse_clock(value: str | datetime) -> datetime:
    """``"2026-01-01 00:00:00"`` (UTC; a ``datetime`` without a zone is UTC too) → an aware
    datetime; raises :class:`InvalidArgument` naming the bad value."""
    if isinstance(value, datetime):
        moment = value
    else:
        try:
            moment = datetime.fromisoformat(str(value).strip())
        except ValueError:
            raise InvalidArgument(f"invalid clock {value!r}: write YYYY-MM-DD HH:MM:SS (UTC)") from None
    moment = moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)
    if not CLOCK_RANGE[0] <= moment.year <= CLOCK_RANGE[1]:
        raise InvalidArgument(f"clock {value!s} is outside the years {CLOCK_RANGE[0]}..{CLOCK_RANGE[1]}")
    return moment

"""vdesk's vlc_playing_info getter and is_vlc_playing metric on a real VLC in an osworld desktop:
the status.xml the getter brings out of the desktop (VLC's web interface, through a tunnel) is
scored by vdesk and by OSWorld's own is_vlc_playing, playing and paused, and both must agree."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.osworld.reference import Case, assert_same_verdicts, vdesk_scores
from vdesk.desktop import Desktop
from vdesk.osworld import inside

pytestmark = pytest.mark.desktop
TONE = ("import math, os, wave\n"
        "os.makedirs(os.path.expanduser('~/Music'), exist_ok=True)\n"
        "with wave.open(os.path.expanduser('~/Music/chime.wav'), 'wb') as out:\n"
        "    out.setnchannels(1); out.setsampwidth(1); out.setframerate(8000)\n"
        "    out.writeframes(bytes(int(128 + 40 * math.sin(i / 3)) for i in range(8000 * 20)))\n")


@pytest.fixture(scope="module")
def desktop() -> Iterator[Desktop]:
    with Desktop.up(size=(1280, 720), image="osworld", timeout=180) as desktop:
        yield desktop


def _status(desktop: Desktop, state: str, timeout: float = 90.0) -> bytes:
    """VLC's status.xml once it says ``state`` (VLC starts slowly on a loaded machine)."""
    deadline = time.monotonic() + timeout
    while True:
        status = inside.vlc_status(desktop)
        if status is not None and f"<state>{state}</state>".encode() in status:
            return status
        assert time.monotonic() < deadline, f"VLC never said {state}: {status!r}"
        time.sleep(0.5)


def test_real_vlc_playing_then_paused(desktop: Desktop, tmp_path: Path) -> None:
    assert inside.vlc_status(desktop) is None  # no VLC yet: the getter's None, scored 0
    done = desktop.programs.run(["python", "-c", TONE], wait=True, timeout=60)
    assert done.returncode == 0, done.stderr
    desktop.programs.run(["bash", "-c", "VLC_VERBOSE=-1 vlc --no-audio --loop ~/Music/chime.wav >/dev/null 2>&1"])
    playing = tmp_path / "playing.xml"
    playing.write_bytes(_status(desktop, "playing"))
    desktop.programs.run(["curl", "-sf", "-u", ":password", "http://127.0.0.1:8080/requests/status.xml?command=pl_pause"],
                wait=True, timeout=30)
    paused = tmp_path / "paused.xml"
    paused.write_bytes(_status(desktop, "paused"))
    rules = {"the file": {"type": "file_name", "file_name": "chime.wav"},
             "another file": {"type": "file_name", "file_name": "buzz.wav"},
             "its path": {"type": "file_name", "file_name": "Music/chime.wav"},
             "a URL": {"type": "url", "url": "https://example.org/chime.wav"}}
    cases = [Case("is_vlc_playing", str(path), rule, label=f"{state}, {label}")
             for state, path in (("playing", playing), ("paused", paused)) for label, rule in rules.items()]
    assert vdesk_scores(cases[:1]) == [1.0]  # what the task asks, VLC doing it
    assert_same_verdicts(cases)
    desktop.programs.run(["pkill", "vlc"], wait=True)

"""`make demo`: bring up a desktop, drive it like an agent would, save what it saw, tear it down."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from vdesk.desktop import Desktop

# (what, actions); the frame after the step marked PICTURE is the README's picture.
PICTURE = "wait for it to appear"
SCRIPT: list[tuple[str, list[dict]]] = [
    ("focus the terminal", [{"type": "click", "inputs": {"point": {"normalized": {"x": 0.3, "y": 0.3}}}}]),
    ("type a greeting in Latin, Chinese and emoji", [{"type": "type", "inputs": {"content": "echo 'héllo 你好 😀 — typed exactly by vdesk'\n"}}]),
    ("run a command", [{"type": "type", "inputs": {"content": "uname -sm; id -un; date -u +%F\n"}}]),
    ("select the greeting by dragging", [{"type": "drag", "inputs": {"start": {"raw": {"x": 48, "y": 70}}, "end": {"raw": {"x": 420, "y": 70}}}}]),
    # LC_ALL=C: an Xaw program in a UTF-8 locale warns on the terminal that the X server's core
    # fonts lack some of the locale's charsets; the dialog's text is ASCII.
    ("open a dialog", [{"type": "type", "inputs": {"content": "LC_ALL=C xmessage -geometry +640+470 -buttons Yes,No 'Exactly typed?' &\n"}}]),
    ("wait for it to appear", [{"type": "wait", "inputs": {"time": 0.5}}]),
    ("press its Yes button", [{"type": "click", "inputs": {"point": {"raw": {"x": 664, "y": 540}}}}]),
]


def run_demo(out_dir: Path, picture: Path | None = None, say: Callable[[str], None] = print) -> None:
    """Run the demo script on a fresh desktop; frames and ``actions.jsonl`` go to ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with Desktop.up() as desktop, (out_dir / "actions.jsonl").open("w") as log:
        say(f"desktop {desktop.name} up in {time.perf_counter() - started:.2f} s")
        desktop.run(["xterm", "-geometry", "110x32+40+40", "-fa", "Monospace", "-fs", "12"])  # an Xft face: CJK and emoji by fallback
        desktop.wait_for_change(timeout=10)
        desktop.wait_until_settled(quiet=0.2)
        for index, (what, actions) in enumerate(SCRIPT, start=1):
            result = desktop.execute(actions, settle=True)
            frame = desktop.screenshot()
            frame_path = out_dir / f"step-{index:02d}.png"
            frame.save(frame_path)
            log.write(json.dumps({"step": index, "what": what, "actions": actions,
                                  "result": result.model_dump(exclude_none=True), "frame": frame_path.name}) + "\n")
            say(f"step {index}: {what} -> {result.status} in {result.elapsed_ms:.0f} ms")
            if picture is not None and what == PICTURE:
                picture.parent.mkdir(parents=True, exist_ok=True)
                frame.save(picture)
        final = desktop.wait_until_settled(quiet=0.2)
        final.save(out_dir / "final.png")
    say(f"saved {len(SCRIPT)} steps to {out_dir}/ (actions.jsonl, step-*.png, final.png); desktop removed")

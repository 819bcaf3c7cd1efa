"""`make demo`: bring up an apps desktop, drive a page in its browser and a document in its office
suite like an agent would, save what it saw, tear it down."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vdesk.desktop import Desktop

SITE = Path(__file__).resolve().parent.parent / "examples" / "apps" / "site"
ORDER_PAGE = "http://127.0.0.1:8000/order.html"
MEMO = "notes.odt"
CLOCK = "2026-03-02 09:00:00"  # a fixed clock: the taskbar shows the same time on every run


def _point(x: int, y: int) -> dict[str, Any]:
    return {"raw": {"x": x, "y": y}}


# (what, actions); the frame after the step marked PICTURE is the README's picture.
PICTURE = "save the memo"
BROWSER_SCRIPT: list[tuple[str, list[dict]]] = [
    ("click the name field", [{"type": "click", "inputs": {"point": _point(204, 214)}}]),
    ("type a name in two scripts", [{"type": "type", "inputs": {"content": "Ada Lovelace — 愛達"}}]),
    ("open the item list", [{"type": "click", "inputs": {"point": _point(204, 300)}},
                            {"type": "wait", "inputs": {"time": 0.5}}]),
    ("pick Ink", [{"type": "hotkey", "inputs": {"key": "down"}}, {"type": "hotkey", "inputs": {"key": "down"}},
                  {"type": "hotkey", "inputs": {"key": "enter"}}]),
    ("send the form", [{"type": "click", "inputs": {"point": _point(104, 368)}}]),
]


def office_script(line: str) -> list[tuple[str, list[dict]]]:
    return [
        ("go to the end of the notes", [{"type": "hotkey", "inputs": {"key": "ctrl+end"}}]),
        ("write what the page said", [{"type": "hotkey", "inputs": {"key": "enter"}},
                                      {"type": "type", "inputs": {"content": line}}]),
        ("make it bold", [{"type": "hotkey", "inputs": {"key": "shift+home"}},
                          {"type": "hotkey", "inputs": {"key": "ctrl+b"}},
                          {"type": "hotkey", "inputs": {"key": "end"}}]),
        (PICTURE, [{"type": "hotkey", "inputs": {"key": "ctrl+s"}}, {"type": "wait", "inputs": {"time": 2}}]),
    ]


def run_demo(out_dir: Path, picture: Path | None = None, say: Callable[[str], None] = print) -> None:
    """Run the demo on a fresh apps desktop; frames and ``actions.jsonl`` go to ``out_dir``."""
    from vdesk.harness.desktop_files import pack, unpack_into
    from vdesk.harness.env import run_setup
    from vdesk.harness.tasks import parse_task

    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with Desktop.up(image="apps", clock=CLOCK, timeout=120) as desktop, \
            (out_dir / "actions.jsonl").open("w") as log:
        say(f"apps desktop {desktop.name} up in {time.perf_counter() - started:.2f} s")
        desktop.programs.wait_for_window_manager()
        site = parse_task({"id": "demo-site", "instruction": "-", "setup": [{"serve": "site"}],
                           "checks": [{"command": "true"}]}, base_dir=SITE.parent)
        run_setup(desktop, site)
        desktop.browser.open(ORDER_PAGE)
        desktop.windows.wait_for("Order form - Chromium", timeout=30)
        steps = _play(desktop, BROWSER_SCRIPT, out_dir, log, picture, say, first=1)
        desktop.browser.wait_for_load()
        line = desktop.browser.text("#result") or "no answer from the page"
        say(f"the page answered: {line}")
        unpack_into(desktop, pack(SITE.parent / "files" / MEMO), ".")
        desktop.programs.run(["soffice", "--writer", "--norestore", f"/home/desk/{MEMO}"])
        loaded = parse_task({"id": "demo-office", "instruction": "-", "checks": [{"command": "true"}], "setup": [
            {"wait_window": f"{MEMO} - LibreOffice Writer", "timeout": 60}, {"wait_idle": "soffice.bin"}]})
        run_setup(desktop, loaded)  # the window shows before the document has loaded
        steps = _play(desktop, office_script(line), out_dir, log, picture, say, first=steps + 1)
        final = desktop.screen.settle(quiet=0.3)
        final.save(out_dir / "final.png")
    say(f"saved {steps} steps to {out_dir}/ (actions.jsonl, step-*.png, final.png); desktop removed")


def _play(desktop: Desktop, script: list[tuple[str, list[dict]]], out_dir: Path, log: Any,
          picture: Path | None, say: Callable[[str], None], first: int) -> int:
    """Run each step, save its frame and log line; returns the number of the last step."""
    index = first - 1
    for index, (what, actions) in enumerate(script, start=first):
        result = desktop.input.execute(actions, settle=True)
        frame = desktop.screen.settle(quiet=0.3, timeout=10)
        frame_path = out_dir / f"step-{index:02d}.png"
        frame.save(frame_path)
        log.write(json.dumps({"step": index, "what": what, "actions": actions,
                              "result": result.model_dump(exclude_none=True), "frame": frame_path.name}) + "\n")
        say(f"step {index}: {what} -> {result.status} in {result.elapsed_ms:.0f} ms")
        if picture is not None and what == PICTURE:
            picture.parent.mkdir(parents=True, exist_ok=True)
            frame.save(picture)
    return index

"""A task's first frame is the one OSWorld's machine shows its agent after the runner's 60 s wait:
the programs the setup launched are up and at rest, with no fixed sleep (see vdesk.started).
One ``vdesk eval`` of two OSWorld-format tasks on two osworld desktops:

- ``late-terminal``: the setup launches a shell that sleeps 2 s, then starts a magenta terminal;
  the written solution types into it at once. Its postconfig launches another terminal the same
  way, which the evaluator looks for straight after.
- ``late-writer``: the setup launches Writer on a document (as the reference's tasks launch
  ``libreoffice --writer <file>``) and the agent says DONE at once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from vdesk.accessibility.text import find, read
from vdesk.cli.app import invoke

pytestmark = pytest.mark.desktop

MAGENTA = (255, 0, 255)
TERMINAL_AREA = 80 * 20 * 30  # pixels an 80x20 terminal's background covers at the least
WORDS = "QUARTZ LEMON"   # the document's one line, big


def _task(task_id: str, config: list[dict[str, Any]], evaluator: dict[str, Any], solution: list[str]) -> dict[str, Any]:
    return {"id": task_id, "snapshot": "os", "source": "vdesk tests", "related_apps": ["os"],
            "instruction": "Run the line in the terminal that is open.", "config": config, "evaluator": evaluator,
            "proxy": False, "fixed_ip": False, "possibility_of_env_change": "low", "trajectory": "trajectories/",
            "solution": {"pyautogui": solution}}


def _late(title: str, colour: str) -> dict[str, Any]:
    command = f"sleep 2; exec xterm -bg {colour} -fg black -geometry 80x20 -title {title} -e env 'PS1=$ ' bash --norc"
    return {"type": "launch", "parameters": {"command": ["sh", "-c", command]}}


def _includes(command: list[str], text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    return ({"type": "vm_command_line", "command": command},
            {"type": "rule", "rules": {"include": [text], "exclude": []}})


LATE_TERMINAL = _task(
    "late-terminal", [_late("Late", "magenta")],
    {"func": ["check_include_exclude", "check_include_exclude"],
     # The postconfig's window first: an evaluator that ran before it showed scores 0 there.
     "result": [_includes(["wmctrl", "-l"], "Judged")[0], _includes(["cat", "~/landed.txt"], "landed")[0]],
     "expected": [_includes(["wmctrl", "-l"], "Judged")[1], _includes(["cat", "~/landed.txt"], "landed")[1]],
     "postconfig": [_late("Judged", "white")]},
    ["pyautogui.write('echo landed > ~/landed.txt\\n')"])


def _writer_task() -> dict[str, Any]:
    result, expected = _includes(["wmctrl", "-l"], "memo.docx")
    return _task("late-writer",
                 [{"type": "upload_file", "parameters": {"files": [{"local_path": "memo.docx", "path": "~/memo.docx"}]}},
                  {"type": "launch", "parameters": {"command": ["libreoffice", "--writer", "~/memo.docx"]}}],
                 {"func": "check_include_exclude", "result": result, "expected": expected}, [])


def _memo(path: Path) -> None:
    import docx
    from docx.shared import Pt

    document = docx.Document()
    document.add_paragraph().add_run(WORDS).font.size = Pt(40)
    document.save(str(path))


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, Any]]]:
    root = tmp_path_factory.mktemp("first-frame")
    tasks = root / "tasks"
    for task in (LATE_TERMINAL, _writer_task()):
        path = tasks / "examples" / "os" / f"{task['id']}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(task))
    _memo(tasks / "examples" / "os" / "memo.docx")
    (tasks / "test_all.json").write_text(json.dumps({"os": ["late-terminal", "late-writer"]}))
    out = root / "run"
    invoke(["eval", str(tasks), "--parallel", "2", "--action-space", "pyautogui", "--out", str(out)])
    episodes = {e["task_id"]: e for e in json.loads((out / "results.json").read_text())["episodes"]}
    return out, episodes


def _first_frame(out: Path, task_id: str) -> Image.Image:
    return Image.open(out / task_id / "frames" / "step-0001.png").convert("RGB")


def test_a_window_mapped_late_is_in_the_first_frame_and_takes_the_first_typing(run) -> None:
    out, episodes = run
    frame = _first_frame(out, "late-terminal")
    assert sum(1 for pixel in frame.getdata() if pixel == MAGENTA) >= TERMINAL_AREA
    episode = episodes["late-terminal"]
    assert episode["success"] and episode.get("setup_note") is None, episode


def test_what_the_postconfig_launched_is_up_before_the_judging(run) -> None:
    _, episodes = run
    (check,) = episodes["late-terminal"]["checks"]
    assert check["detail"].startswith("score 1: check_include_exclude=1"), check  # the Judged window, first


def test_a_document_launched_in_writer_is_in_the_first_frame_not_the_splash(run) -> None:
    out, episodes = run
    frame = _first_frame(out, "late-writer")
    assert find(read(frame), WORDS), [line.text for line in read(frame)]
    assert episodes["late-writer"]["success"], episodes["late-writer"]

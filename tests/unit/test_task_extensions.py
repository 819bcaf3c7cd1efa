"""Task extensions (vdesk.harness.extension): a task of another benchmark's kind is saved with its
kind and reads back through the registry or the package's entry point; an unknown kind is named;
each kind writes its own results of a suite run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vdesk.errors import TaskError
from vdesk.harness.extension import ResultsTable, TaskExtension, extension_kind
from vdesk.harness.runner import extension_results
from vdesk.harness.tasks import parse_task
from vdesk.osworld.extension import OSWorldExtension, spec_of
from vdesk.osworld.loader import load_tasks

ROOT = Path(__file__).resolve().parents[2]
TASK = {"id": "t1", "instruction": "Make a folder", "config": [],
        "evaluator": {"func": "exact_match", "result": {"type": "vm_command_line", "command": "ls"},
                      "expected": {"type": "rule", "rules": {"expected": "x"}}},
        "solution": {"pyautogui": ["import pyautogui; pyautogui.press('enter')"]}}


def osworld_task(tmp_path: Path):  # type: ignore[no-untyped-def]
    folder = tmp_path / "os"
    folder.mkdir()
    (folder / "t1.json").write_text(json.dumps(TASK))
    (tmp_path / "cache").mkdir()
    (task,) = load_tasks(folder, task_files=tmp_path / "cache")
    return task


def test_an_osworld_task_is_saved_with_its_kind_and_reads_back_whole(tmp_path: Path) -> None:
    task = osworld_task(tmp_path)
    saved = json.loads(task.model_dump_json(exclude_none=True))
    assert saved["extension"]["kind"] == "osworld" and saved["extension"]["spec"]["domain"] == "os"
    again = parse_task(saved)
    assert isinstance(again.extension, OSWorldExtension) and spec_of(again) == spec_of(task)


def test_the_written_solution_is_played_in_its_space_and_ends_done(tmp_path: Path) -> None:
    extension = osworld_task(tmp_path).extension
    assert extension is not None
    steps = extension.solution("pyautogui")
    assert steps is not None and [raw for raw, _ in steps] == [*TASK["solution"]["pyautogui"], "DONE"]
    assert steps[0][1][0].type.value == "hotkey" and steps[-1][1][0].type.value == "finished"
    assert extension.solution("computer_13") is None and extension.solution(None) is None


def test_an_unknown_kind_is_a_task_error_naming_the_kinds_there_are() -> None:
    with pytest.raises(TaskError, match="no task extension of kind 'elsewhere'.*osworld"):
        parse_task({"id": "x", "instruction": "i", "extension": {"kind": "elsewhere"}})
    with pytest.raises(ValueError, match="names its kind"):
        extension_kind(None)


def test_a_kind_is_found_through_the_entry_point_before_its_module_is_imported() -> None:
    code = ("import sys; from vdesk.harness.extension import extension_kind; "
            "assert 'vdesk.osworld.extension' not in sys.modules; print(extension_kind('osworld').__name__)")
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "OSWorldExtension", done.stderr[-2000:]


def test_a_plain_extension_asks_nothing_and_opens_no_session() -> None:
    class Nothing(TaskExtension):
        kind: str = "nothing-here"

    plain = Nothing()
    assert plain.skip is None and plain.solution("pyautogui") is None and extension_kind("nothing-here") is Nothing
    with pytest.raises(NotImplementedError):
        plain.open(None, None)  # type: ignore[arg-type]


class Counted(TaskExtension):
    """A kind whose results are a count of its episodes, written beside them."""

    kind: str = "counted"

    @classmethod
    def write_results(cls, run):  # type: ignore[no-untyped-def, override]
        (run.folder / "counted.txt").write_text(str(len(run.episodes)))
        return ResultsTable(kind="counted", file="counted.txt", columns=["EPISODES"], rows=[[str(len(run.episodes))]])


def test_each_kind_writes_its_results_once_for_its_own_episodes(tmp_path: Path) -> None:
    plain = parse_task({"id": "plain", "instruction": "i", "checks": [{"command": "true"}]})
    counted = [parse_task({"id": f"c{n}", "instruction": "i", "extension": {"kind": "counted"}}) for n in (1, 2)]
    tables = extension_results(tmp_path, [plain, *counted], "scripted", None, "screenshot")
    assert tables == [ResultsTable(kind="counted", file="counted.txt", columns=["EPISODES"], rows=[["2"]])]
    assert (tmp_path / "counted.txt").read_text() == "2"
    assert extension_results(tmp_path, [plain], "scripted", None, "screenshot") == []

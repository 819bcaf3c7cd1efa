"""Task files: the example suite validates, and every mistake is reported with its file and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vdesk.harness.tasks import (CommandCheck, FileCheck, RegionCheck, StartStep, TaskError, WaitWindowStep,
                                 WindowCheck, WriteStep, in_home, load_suite, load_task, parse_task)

SUITE = Path(__file__).resolve().parents[2] / "examples" / "suite"
MINIMAL = {"id": "t", "instruction": "do it", "checks": [{"file": "~/x", "equals": "y"}]}


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_example_suite_has_at_least_ten_valid_tasks_each_with_a_solution():
    tasks = load_suite(SUITE)
    assert len(tasks) >= 10
    assert all(task.solution for task in tasks)
    kinds = {type(check) for task in tasks for check in task.checks}
    assert kinds == {CommandCheck, FileCheck, WindowCheck, RegionCheck}


def test_every_setup_step_and_check_kind_is_read_from_yaml(tmp_path):
    path = write(tmp_path, "t.yaml", """
id: all-kinds
instruction: Do everything.
desktop: {size: 1024x768, scale: 2, network: bridge}
setup:
  - run: "true"
  - start: [xterm]
  - write: ~/notes.txt
    content: "hi\\n"
  - wait_window: xterm
checks:
  - command: ["true"]
  - file: notes.txt
    contains: hi
  - window: xterm
    present: false
  - region: [0, 0, 10, 10]
    reference: ref.png
max_steps: 3
time_limit: 9
""")
    task = load_task(path)
    assert task.desktop.size == (1024, 768) and task.desktop.scale == 2
    assert [type(step) for step in task.setup[1:]] == [StartStep, WriteStep, WaitWindowStep]
    assert task.base_dir == tmp_path.resolve() and task.reference_files() == ["ref.png"]
    assert task.max_steps == 3 and task.time_limit == 9


def test_json_tasks_are_read_too(tmp_path):
    path = write(tmp_path, "t.json", json.dumps(MINIMAL))
    assert load_task(path).id == "t"


@pytest.mark.parametrize(("change", "message"), [
    ({"checks": []}, "a task needs at least one check"),
    ({"checks": [{"files": "x"}]}, "checks.0: a check needs one of the keys command, file, window, region"),
    ({"checks": [{"file": "x", "window": "y"}]}, "checks.0: a check needs one of the keys"),
    ({"setup": [{"launch": "xterm"}]}, "setup.0: a setup step needs one of the keys run, start, write, wait_window"),
    ({"checks": [{"file": "x", "matches": "("}]}, "invalid regular expression '('"),
    ({"checks": [{"region": [10, 10, 5, 20], "reference": "r.png"}]}, "must be [left, top, right, bottom]"),
    ({"desktop": {"size": "big"}}, "desktop.size: invalid size 'big'"),
    ({"desktop": {"network": "host"}}, "desktop.network: Input should be 'none' or 'bridge'"),
    ({"solution": [[{"type": "navigate"}]]}, "solution: step 0: action 0: type: action 'navigate' is unsupported on a desktop"),
    ({"wrong_solution": [[{"type": "click"}]]}, "wrong_solution: step 0: action 0:"),
    ({"max_steps": 0}, "max_steps: Input should be greater than or equal to 1"),
    ({"id": "has space"}, "id: String should match pattern"),
    ({"instructions": "typo"}, "unknown key 'instructions' in the task (did you mean 'instruction'?)"),
    ({"desktop": {"sise": "1x1"}}, "desktop: unknown key 'sise' in the desktop settings (did you mean 'size'?)"),
    ({"setup": [{"start": "xterm", "zzz": 1}]}, "setup.0: unknown key 'zzz' in a start step (known: start)"),
])
def test_a_mistake_is_one_error_naming_the_file_and_the_field(change, message):
    with pytest.raises(TaskError) as caught:
        parse_task({**MINIMAL, **change}, source="tasks/t.yaml")
    assert str(caught.value).startswith("tasks/t.yaml: ")
    assert message in str(caught.value)


def test_a_typo_in_a_check_is_named_once_with_the_key_it_meant():
    with pytest.raises(TaskError) as caught:
        parse_task({**MINIMAL, "checks": [{"command": "echo hi", "stdot": "hi\n"}]}, source="tasks/t.yaml")
    assert str(caught.value) == "tasks/t.yaml: checks.0: unknown key 'stdot' in a command check (did you mean 'stdout'?)"


def test_a_missing_field_is_named():
    with pytest.raises(TaskError, match="instruction: Field required"):
        parse_task({"id": "t", "checks": [{"file": "x"}]})


def test_broken_yaml_names_the_file(tmp_path):
    path = write(tmp_path, "t.yaml", "id: [unclosed\n")
    with pytest.raises(TaskError, match=r"t\.yaml: not valid YAML"):
        load_task(path)


def test_a_task_that_is_not_a_mapping_is_refused(tmp_path):
    with pytest.raises(TaskError, match="a task must be a mapping, got list"):
        load_task(write(tmp_path, "t.yaml", "- a\n- b\n"))


def test_a_suite_refuses_repeated_ids_and_empty_folders(tmp_path):
    with pytest.raises(TaskError, match="no task files"):
        load_suite(tmp_path)
    write(tmp_path, "a.yaml", json.dumps(MINIMAL))
    write(tmp_path, "b.json", json.dumps(MINIMAL))
    with pytest.raises(TaskError, match="repeated: t"):
        load_suite(tmp_path)
    with pytest.raises(TaskError, match="no such suite"):
        load_suite(tmp_path / "missing")


def test_home_relative_paths():
    assert in_home("~/a/b") == "a/b" and in_home("a") == "a" and in_home("/etc/x") == "/etc/x" and in_home("~") == "."


def test_solutions_become_validated_actions():
    task = load_task(SUITE / "terminal-echo.yaml")
    steps = task.solution_actions()
    assert [action.type.value for step in steps for action in step] == ["click", "type", "finished"]
    wrong = task.solution_actions(wrong=True)
    assert wrong[1][0].inputs.content == "printf 'hello vdesk' > ~/hello.txt\n" != steps[1][0].inputs.content

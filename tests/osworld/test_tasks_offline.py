"""OSWorld task files without a desktop: loading trees and filters, skip reasons, the
evaluator's scoring rules on getters that need no desktop, the results layout."""

from __future__ import annotations

import json
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from vdesk.coords import Screen
from vdesk.errors import TaskError
from vdesk.harness.agents import ScriptedAgent
from vdesk.harness.record import CheckRecord, Outcome
from vdesk.harness.report import write_report
from vdesk.harness.runner import run_suite
from vdesk.osworld.extension import spec_of
from vdesk.osworld.evaluator import evaluate, unsupported_all
from vdesk.osworld.format import EvaluatorSpec
from vdesk.osworld.loader import load_tasks, osworld_task
from vdesk.harness.runner import extension_results
from vdesk.harness.suite import SuiteSummary
from vdesk.osworld.results import OSWorldSummary
from vdesk.osworld.steps import Context
from vdesk.osworld.task_files import TaskFiles

RULE_OK = {"func": "exact_match", "result": {"type": "rule", "rules": "a"},
           "expected": {"type": "rule", "rules": {"expected": "a"}}}
RULE_BAD = {**RULE_OK, "result": {"type": "rule", "rules": "b"}}


def task_data(task_id: str = "t1", **extra: Any) -> dict[str, Any]:
    return {"id": task_id, "instruction": "do it", "config": [], "evaluator": dict(RULE_OK), **extra}


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """An evaluation_examples-shaped tree: two domains, a meta file listing three of four tasks."""
    for domain, task_id in (("os", "a"), ("os", "b"), ("chrome", "c"), ("chrome", "unlisted")):
        write(tmp_path / "examples" / domain / f"{task_id}.json", task_data(task_id))
    write(tmp_path / "test_all.json", {"os": ["a", "b"], "chrome": ["c"]})
    write(tmp_path / "test_small.json", {"os": ["a"]})
    return tmp_path


def test_a_tree_is_read_through_its_meta_file_with_domains(tree: Path) -> None:
    tasks = load_tasks(tree)
    assert [(t.id, spec_of(t).domain) for t in tasks] == [("a", "os"), ("b", "os"), ("c", "chrome")]
    assert [t.id for t in load_tasks(tree, meta="test_small.json")] == ["a"]


def test_domain_and_id_filters(tree: Path) -> None:
    assert [t.id for t in load_tasks(tree, domains=["chrome"])] == ["c"]
    assert [t.id for t in load_tasks(tree, ids=["b", "c"])] == ["b", "c"]
    with pytest.raises(TaskError, match="no task matches"):
        load_tasks(tree, domains=["gimp"])


def test_a_meta_file_naming_a_missing_task_is_refused(tree: Path) -> None:
    write(tree / "test_all.json", {"os": ["a", "ghost"]})
    with pytest.raises(TaskError, match="ghost"):
        load_tasks(tree)


def test_a_folder_mixes_osworld_and_vdesk_tasks(tmp_path: Path) -> None:
    write(tmp_path / "one.json", task_data("one"))
    (tmp_path / "two.yaml").write_text("id: two\ninstruction: x\nchecks: [{file: ~/x}]\n")
    tasks = load_tasks(tmp_path)
    assert [(t.id, spec_of(t) is not None) for t in tasks] == [("one", True), ("two", False)]


def test_a_bad_osworld_file_names_the_field_strictly_and_is_a_skip_otherwise(tmp_path: Path) -> None:
    bad = task_data()
    bad["evaluator"] = {"result": {}}
    file = write(tmp_path / "x" / "t1.json", bad)
    with pytest.raises(TaskError, match="evaluator"):
        load_tasks(file, strict=True)
    (task,) = load_tasks(file)
    assert task.id == "t1" and "not read: evaluator" in (task.skip or "")


def test_a_tree_with_odd_typed_files_is_read_to_the_end(tree: Path) -> None:
    write(tree / "examples" / "os" / "b.json", task_data("b", related_apps="chrome"))
    tasks = {task.id: task for task in load_tasks(tree)}
    assert set(tasks) == {"a", "b", "c"} and tasks["a"].skip is None
    assert [(s.kind, s.reason) for s in spec_of(tasks["b"]).skips] == [
        ("not read", "not read: related_apps: Input should be a valid list (got str)")]


def test_every_reason_a_task_is_skipped_is_listed(tmp_path: Path) -> None:
    url = "https://example.invalid/files/report.xlsx"
    data = task_data(proxy=True, config=[{"type": "download", "parameters": {"files": [{"url": url, "path": "~/r"}]}}],
                     evaluator={**RULE_OK, "func": "compare_answer"})
    task = osworld_task(data, source="t", base_dir=tmp_path, domain="os", task_files=tmp_path)
    assert [s.kind for s in spec_of(task).skips] == ["proxy", "missing file", "metric"]
    assert "proxy" in task.skip and url in task.skip and "compare_answer" in task.skip


def test_every_unsupported_metric_option_and_getter_is_a_reason() -> None:
    from vdesk.osworld.evaluator import unsupported, unsupported_all
    from vdesk.osworld.format import EvaluatorSpec

    spec = EvaluatorSpec.model_validate(lists({**RULE_OK, "func": "no_such_metric"}, {**RULE_OK, "result": {
        "type": "vscode_config"}}) | {"options": [{}, {"no_such_option": 1}]})
    assert [s.kind for s in unsupported_all(spec)] == ["metric", "option", "getter"]
    assert "no_such_metric" in (unsupported(spec) or "")


def test_per_domain_totals_count_runs_and_tasks_per_kind_of_reason(tree: Path, capsys: Any) -> None:
    from vdesk.cli.app import invoke
    from vdesk.osworld.needs import needs_of, totals

    write(tree / "examples" / "os" / "b.json", task_data("b", proxy=True, evaluator={**RULE_OK, "func": "compare_answer"}))
    write(tree / "examples" / "chrome" / "c.json", task_data("c", related_apps="chrome"))
    rows = {row.domain: row for row in totals([needs_of(task) for task in load_tasks(tree)])}
    assert list(rows) == ["chrome", "os", "all"]
    assert (rows["os"].tasks, rows["os"].runs, rows["os"].skipped) == (2, 1, 1)
    assert rows["os"].by_reason["proxy"] == rows["os"].by_reason["metric"] == 1
    assert (rows["chrome"].skipped, rows["chrome"].by_reason["not read"]) == (1, 1)
    assert (rows["all"].tasks, rows["all"].runs, rows["all"].skipped) == (3, 1, 2)
    assert invoke(["tasks", "check", str(tree), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert len(out["tasks"]) == 3 and out["totals"][-1]["by_reason"]["proxy"] == 1
    assert invoke(["tasks", "check", str(tree)]) == 1
    table = capsys.readouterr().out
    assert "DOMAIN" in table and "NOT READ" in table and "PROXY" in table and "GETTER" not in table


def test_an_osworld_task_runs_on_an_osworld_image_unless_one_is_picked(tmp_path: Path) -> None:
    write(tmp_path / "vlc" / "v.json", task_data("v"))
    write(tmp_path / "os" / "o.json", task_data("o"))
    (tmp_path / "os" / "y.yaml").write_text("id: y\ninstruction: x\ndesktop: {image: apps}\nchecks: [{file: ~/x}]\n")
    (tmp_path / "os" / "z.yaml").write_text("id: z\ninstruction: x\nchecks: [{file: ~/x}]\n")
    images = {task.id: task.desktop.image for task in load_tasks(tmp_path)}
    assert images == {"o": "osworld", "v": "osworld", "y": "apps", "z": None}
    picked = {task.id: task.desktop.image for task in load_tasks(tmp_path, image="apps")}
    assert picked["o"] == picked["v"] == "apps" and picked["z"] is None


def skip_of(data: dict[str, Any], files: Path | None = None) -> str | None:
    return osworld_task(data, source="t", base_dir=Path("."), domain="os", task_files=files).skip


@pytest.mark.parametrize(("change", "reason"), [
    ({"config": [{"type": "googledrive", "parameters": {}}]}, "Google Drive"),
    ({"config": [{"type": "login", "parameters": {}}]}, "login"),
    ({"proxy": True}, "proxy"),
    ({"config": [{"type": "launch", "parameters": {"command": ["code", "/home/user/project"]}}]}, "needs VS Code"),
    ({"config": [{"type": "execute", "parameters": {"command": "DISPLAY=:0 /usr/bin/code --install-extension x",
                                                     "shell": True}}]}, "needs VS Code"),
    ({"config": [{"type": "tidy_desktop", "parameters": {}}]}, "tidy_desktop step is not supported"),
    # OSWorld's own metrics, getters and options that vdesk does not implement (a typo is an error:
    # test_a_typo_in_a_task_file_fails_the_run_before_anything_runs).
    ({"evaluator": {**RULE_OK, "func": "compare_answer"}}, "metric 'compare_answer' is not supported"),
    ({"evaluator": {**RULE_OK, "result": {"type": "vscode_config"}}}, "vscode_config getter is not supported"),
    ({"evaluator": {**RULE_OK, "func": "check_accessibility_tree", "options": {"osname": "ubuntu"}}},
     "option 'osname'"),
    ({"evaluator": {**RULE_OK, "expected": {"type": "info_from_website", "url": "https://scholar.example/"}}},
     "needs the live web"),
    ({"evaluator": {**RULE_OK, "expected": {"type": "gotoRecreationPage_and_get_html_content"}}}, "needs the live web"),
    ({"evaluator": {**RULE_OK, "expected": {"type": "rule_relativeTime", "rules": {
        "relativeTime": {"from": "10th of never"}, "expected": {"time": "{DayD}"}}}}},
     "the phrase '10th of never' is not supported"),
])
def test_what_vdesk_cannot_offer_offline_is_a_skip_reason(change: dict[str, Any], reason: str) -> None:
    assert reason in (skip_of(task_data(**change)) or "")


def test_a_task_naming_several_sources_or_a_browse_history_is_no_skip() -> None:
    assert skip_of(task_data(source=["https://a.example/one", "https://a.example/two"])) is None
    history = [{"url": "https://a.example/", "title": "A", "visit_time_from_now_in_seconds": 60}]
    assert skip_of(task_data(config=[{"type": "update_browse_history", "parameters": {"history": history}}])) is None


def test_a_download_missing_from_the_task_files_folder_is_a_skip_reason(tmp_path: Path) -> None:
    url = "https://example.invalid/files/report.xlsx"
    data = task_data(config=[{"type": "download", "parameters": {"files": [{"url": url, "path": "~/report.xlsx"}]}}])
    assert "task file missing: " + url in skip_of(data, tmp_path)
    assert "task file missing" in skip_of(data, None)
    cached = tmp_path / "t1" / f"{uuid.uuid5(uuid.NAMESPACE_URL, url)}_report.xlsx"  # OSWorld's cache name
    cached.parent.mkdir()
    cached.write_bytes(b"x")
    assert skip_of(data, tmp_path) is None


def test_an_expected_cloud_file_is_found_by_its_dest(tmp_path: Path) -> None:
    data = task_data(evaluator={"func": "compare_csv", "result": {"type": "vm_file", "path": "~/a.csv", "dest": "a.csv"},
                                "expected": {"type": "cloud_file", "path": "https://example.invalid/gold.csv",
                                             "dest": "gold.csv"}})
    assert "gold.csv" in skip_of(data, tmp_path)
    write(tmp_path / "t1" / "gold.csv", "x")
    assert skip_of(data, tmp_path) is None


def test_skipped_tasks_never_start_a_desktop_and_count_apart(tmp_path: Path) -> None:
    task = osworld_task(task_data(proxy=True), source="t", base_dir=tmp_path, domain="chrome")
    summary = run_suite([task], ScriptedAgent, out=tmp_path / "run", cancel=threading.Event())
    (outcome,) = summary.episodes
    assert (outcome.status, outcome.error) == ("skipped", "skipped: needs the reference's web proxy (proxy: true); "
                                               "--network grants its desktop the web")
    assert (summary.skipped, summary.success_rate) == (1, 0.0)
    report = write_report(tmp_path / "run").read_text()
    assert "needs the reference&#x27;s web proxy" in report or "needs the reference's web proxy" in report


# -- the evaluator's rules, on getters that need no desktop ----------------------------------
class NoDesktop:
    name = "none"
    screen = Screen(1920, 1080)

    def call(self, function: Any, *args: Any, timeout: float = 0.0) -> Any:
        raise AssertionError("these getters need no desktop")


def judge(evaluator: dict[str, Any], tmp_path: Path, agent_failed: bool = False) -> float:
    task = osworld_task(task_data(evaluator=evaluator), source="t", base_dir=tmp_path, domain="os")
    context = Context(NoDesktop(), spec_of(task), TaskFiles(tmp_path, "t1"), tmp_path)  # type: ignore[arg-type]
    return evaluate(context, agent_failed).score


def test_one_metric_scores_what_it_compares(tmp_path: Path) -> None:
    assert judge(RULE_OK, tmp_path) == 1.0
    assert judge(RULE_BAD, tmp_path) == 0.0


def lists(*entries: dict[str, Any], conj: str = "and") -> dict[str, Any]:
    return {"func": [e["func"] for e in entries], "result": [e["result"] for e in entries],
            "expected": [e["expected"] for e in entries], "conj": conj}


def test_and_needs_every_metric_and_or_needs_one(tmp_path: Path) -> None:
    assert judge(lists(RULE_OK, RULE_OK), tmp_path) == 1.0
    assert judge(lists(RULE_OK, RULE_BAD), tmp_path) == 0.0
    assert judge(lists(RULE_BAD, RULE_OK, conj="or"), tmp_path) == 1.0
    assert judge(lists(RULE_BAD, RULE_BAD, conj="or"), tmp_path) == 0.0


def fuzzy(got: str, want: str) -> dict[str, Any]:
    return {"func": "fuzzy_match", "result": {"type": "rule", "rules": got},
            "expected": {"type": "rule", "rules": {"expected": want}}}


def test_and_scores_the_mean_of_fractional_scores_and_or_their_best(tmp_path: Path) -> None:
    kitten, abcd = fuzzy("kitten", "sitting"), fuzzy("abcd", "abce")  # 8/13 and 3/4
    assert judge(lists(kitten, abcd), tmp_path) == pytest.approx((8 / 13 + 3 / 4) / 2)
    assert judge(lists(kitten, RULE_OK, abcd), tmp_path) == pytest.approx((8 / 13 + 1 + 3 / 4) / 3)
    assert judge(lists(kitten, abcd, conj="or"), tmp_path) == pytest.approx(3 / 4)
    assert judge(lists(kitten, RULE_BAD, abcd), tmp_path) == 0.0  # a zero ends "and" whatever came before


def test_infeasible_scores_one_only_after_fail_and_fail_on_a_feasible_task_scores_zero(tmp_path: Path) -> None:
    assert judge({"func": "infeasible"}, tmp_path, agent_failed=True) == 1.0
    assert judge({"func": "infeasible"}, tmp_path, agent_failed=False) == 0.0
    assert judge(RULE_OK, tmp_path, agent_failed=True) == 0.0
    listed = {"func": ["infeasible", "exact_match"], "result": [None, {"type": "rule", "rules": "a"}],
              "expected": [None, {"type": "rule", "rules": "a"}]}
    skip = unsupported_all(EvaluatorSpec.model_validate(listed))
    assert [s.kind for s in skip] == ["metric"] and "whole func" in skip[0].reason


def test_a_cache_file_no_step_saved_fails_the_evaluation_naming_it(tmp_path: Path) -> None:
    # The reference's getter asserts the file is there: its harness records an error, not a score.
    from vdesk.errors import DocumentError
    from vdesk.osworld.evaluator import safe_evaluate

    missing = {"func": "diff_text_file", "result": {"type": "cache_file", "path": "never-written.txt"},
               "expected": {"type": "rule", "rules": "x"}}
    with pytest.raises(DocumentError, match="never-written.txt"):
        judge(missing, tmp_path)
    task = osworld_task(task_data(evaluator=missing), source="t", base_dir=tmp_path, domain="os")
    context = Context(NoDesktop(), spec_of(task), TaskFiles(tmp_path, "t1"), tmp_path)  # type: ignore[arg-type]
    evaluation = safe_evaluate(context, agent_failed=False)
    assert evaluation.score == 0.0 and "never-written.txt" in str(evaluation)


def test_the_results_layout_and_the_rates_per_domain(tmp_path: Path) -> None:
    tasks = [osworld_task(task_data(i), source="t", base_dir=tmp_path, domain=d)
             for i, d in (("a", "os"), ("b", "os"), ("c", "chrome"), ("d", "chrome"))]

    def outcome(task_id: str, status: str, score: float | None = None, error: str | None = None) -> Outcome:
        checks = [CheckRecord(kind="osworld", passed=score == 1, detail="", score=score)] if score is not None else []
        return Outcome(task_id=task_id, agent="scripted", status=status, success=score == 1, steps=1,
                       elapsed_s=1.0, checks=checks, error=error)

    outcomes = [outcome("a", "finished", 1.0), outcome("b", "max_steps", 0.0),
                outcome("c", "finished", 1.0), outcome("d", "skipped", error="needs Google Drive")]
    SuiteSummary(agent="scripted", parallel=1, episodes=outcomes).write(tmp_path)
    [table] = extension_results(tmp_path, tasks, "scripted", None, "screenshot")  # the suite's hook
    summary = OSWorldSummary.model_validate_json((tmp_path / "osworld.json").read_text())
    assert (tmp_path / "pyautogui/screenshot/scripted/os/a/result.txt").read_text().strip() == "1.0"
    assert (tmp_path / "pyautogui/screenshot/scripted/os/b/result.txt").read_text().strip() == "0.0"
    assert not (tmp_path / "pyautogui/screenshot/scripted/chrome/d").exists()
    assert summary.domains["os"].success_rate == 0.5 and summary.domains["chrome"].success_rate == 1.0
    assert summary.overall.tasks == 3 and summary.skipped == {"d": "needs Google Drive"}
    assert json.loads((tmp_path / "osworld.json").read_text())["categories"]["Daily"]["tasks"] == 1
    assert table.file == "osworld.json" and ["os", "2", "1", "50.0%"] in table.rows
    assert table.notes == ["skipped d: needs Google Drive"]


EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "osworld"


def test_tasks_check_lists_needs_and_fails_on_a_task_that_would_be_skipped(tmp_path: Path, capsys: Any) -> None:
    from vdesk.cli.app import invoke

    assert invoke(["tasks", "check", str(EXAMPLES), "--json"]) == 0
    needs = {item["task_id"]: item for item in json.loads(capsys.readouterr().out)["tasks"]}
    listed = sum(map(len, json.loads((EXAMPLES / "test_all.json").read_text()).values()))
    assert len(needs) == listed and {"chrome", "xterm"} <= set(needs["multi-browser-code"]["apps"])
    assert any("found" in f for f in needs["os-count-lines"]["files"])
    write(tmp_path / "os" / "gd.json", task_data("gd", config=[{"type": "googledrive", "parameters": {}}]))
    assert invoke(["tasks", "check", str(tmp_path)]) == 1
    assert "Google Drive" in capsys.readouterr().out


def test_tasks_convert_both_ways_says_what_it_cannot_carry(tmp_path: Path, capsys: Any) -> None:
    from vdesk.cli.app import invoke
    from vdesk.harness.tasks import load_task

    yaml_file = tmp_path / "echo.yaml"
    assert invoke(["tasks", "convert", str(EXAMPLES / "examples/os/os-echo-file.json"), "--out", str(yaml_file),
                   "--lossy"]) == 0
    assert ("not carried: activate_window step {'window_name': 'Terminal', 'strict': True} "
            "(changes the desktop the agent starts from)") in capsys.readouterr().err
    task = load_task(yaml_file)
    assert task.checks[0].stdout == "hello osworld\n" and task.solution
    back = tmp_path / "back.json"
    assert invoke(["tasks", "convert", str(yaml_file), "--out", str(back)]) == 0
    again = load_tasks(back)[0]
    assert spec_of(again) is not None and spec_of(again).file.evaluator.metrics()[0][0] == "exact_match"


def test_a_tasks_clock_is_its_desktops_and_converts_both_ways(tmp_path: Path) -> None:
    from vdesk.osworld.convert import to_osworld, to_vdesk

    task = osworld_task(task_data(clock="2026-03-04 10:00:00"), source="t", base_dir=tmp_path, domain="os")
    assert task.desktop.clock == "2026-03-04 10:00:00"
    assert to_vdesk(task).data["desktop"]["clock"] == "2026-03-04 10:00:00"
    assert to_osworld(task).data["clock"] == "2026-03-04 10:00:00"
    with pytest.raises(TaskError, match="clock"):
        osworld_task(task_data(clock="next Tuesday"), source="t", base_dir=tmp_path, domain="os", strict=True)
    unread = osworld_task(task_data(clock="next Tuesday"), source="t", base_dir=tmp_path, domain="os")
    assert "not read" in (unread.skip or "") and unread.desktop.clock is None


def test_an_id_no_task_has_fails_the_run_before_anything_runs(tmp_path: Path) -> None:
    import subprocess
    import sys

    out = tmp_path / "run"
    suite = EXAMPLES.parent / "suite"
    ran = subprocess.run([str(Path(sys.executable).parent / "vdesk"), "eval", str(suite), "--out", str(out),
                          "--ids", "terminal-echo,terminal-ecko,no-such-task"],
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 2 and ran.stdout == "" and len(ran.stderr.splitlines()) == 1, ran.stderr
    assert "'terminal-ecko' (did you mean 'terminal-echo'?)" in ran.stderr and "'no-such-task'" in ran.stderr
    assert not out.exists()


BAD_METRIC = {**RULE_OK, "func": "check_include_exlude"}


@pytest.mark.parametrize(("change", "named"), [
    ({"evaluator": BAD_METRIC}, "evaluator.func: unknown metric 'check_include_exlude' "
                                "(did you mean 'check_include_exclude'?)"),
    ({"evaluator": {**RULE_OK, "result": {"type": "vm_comand_line", "command": "ls"}}},
     "evaluator.result.type: unknown getter 'vm_comand_line' (did you mean 'vm_command_line'?)"),
    ({"evaluator": {"func": ["exact_match", "exact_match"], "result": [RULE_OK["result"], RULE_OK["result"]],
                    "expected": [RULE_OK["expected"], {"type": "rulle", "rules": {"expected": "a"}}]}},
     "evaluator.expected[1].type: unknown getter 'rulle' (did you mean 'rule'?)"),
    ({"evaluator": {**RULE_OK, "func": "compare_text_file", "options": {"ingore_case": True}}},
     "evaluator.options.ingore_case: unknown option of compare_text_file (did you mean 'ignore_case'?)"),
    ({"config": [{"type": "lauch", "parameters": {"command": ["xterm"]}}]},
     "config[0].type: unknown step 'lauch' (did you mean 'launch'?)"),
    ({"evaluator": {**RULE_OK, "postconfig": [{"type": "sleep", "parameters": {"seconds": 1}},
                                              {"type": "excute", "parameters": {"command": "true"}}]}},
     "evaluator.postconfig[1].type: unknown step 'excute' (did you mean 'execute'?)"),
    ({"evalutor": RULE_OK, "evaluator": None}, "evalutor: unknown key (did you mean 'evaluator'?)"),
    ({"evaluator": {**RULE_OK, "optoins": {"a": 1}}}, "evaluator.optoins: unknown key (did you mean 'options'?)"),
    (None, "not valid JSON"),
])
def test_a_typo_in_a_task_file_fails_the_run_before_anything_runs(tmp_path: Path, capsys: Any,
                                                                  change: dict[str, Any] | None, named: str) -> None:
    from vdesk.cli import run as run_cli

    file = tmp_path / "tree" / "os" / "typo.json"
    if change is None:
        file.parent.mkdir(parents=True)
        file.write_text(json.dumps(task_data("typo"))[:-1])
    else:
        write(file, {key: value for key, value in task_data("typo", **change).items() if value is not None})
    write(tmp_path / "tree" / "os" / "fine.json", task_data("fine"))
    out = tmp_path / "run"
    assert run_cli(["eval", str(tmp_path / "tree"), "--out", str(out), "--ids", "fine"]) == 2
    said = capsys.readouterr().err
    assert said.startswith(f"vdesk: {file}: ") and named in said and len(said.splitlines()) == 1, said
    assert not out.exists()
    # Every file still gets its verdict from `tasks check`: the wrong one is named, the fine one runs.
    assert run_cli(["tasks", "check", str(tmp_path / "tree"), "--json"]) == 1
    checked = json.loads(capsys.readouterr().out)
    assert [task["task_id"] for task in checked["tasks"]] == ["fine"] and checked["tasks"][0]["skip"] is None
    assert [error["file"] for error in checked["errors"]] == [str(file)] and named in checked["errors"][0]["error"]


def test_tasks_check_names_every_wrong_file_and_checks_the_rest(tmp_path: Path, capsys: Any) -> None:
    from vdesk.cli import run as run_cli

    write(tmp_path / "os" / "a.json", task_data("a", config=[{"type": "lauch", "parameters": {}}]))
    write(tmp_path / "os" / "b.json", {**task_data("b"), "evalutor": RULE_OK, "evaluator": None} | {"snapshot": "os"})
    write(tmp_path / "os" / "c.json", task_data("c"))
    (tmp_path / "os" / "d.yaml").write_text("id: d\ninstruction: x\nchecks: [{file: ~/x, equls: y}]\n")
    assert run_cli(["tasks", "check", str(tmp_path)]) == 1
    said = capsys.readouterr().out
    assert "3 wrong files, not read:" in said and "c  " in said.splitlines()[1] and "runs" in said
    assert "a.json: config[0].type: unknown step 'lauch'" in said
    assert "b.json: evalutor: unknown key (did you mean 'evaluator'?)" in said
    assert "d.yaml" in said and "'equls'" in said


def test_osworlds_own_names_are_vdesks_or_known_skips() -> None:
    """vdesk's lists of what OSWorld has and vdesk does not run hold every name the pinned
    reference exports that vdesk lacks, so none of them is taken for a typo."""
    from tests.osworld.reference import OSWORLD_PYTHON
    import subprocess

    from vdesk.osworld import getters, metrics
    from vdesk.osworld.steps import OSWORLD_ONLY, STEPS

    if not OSWORLD_PYTHON.exists():
        pytest.skip("no .venv-osworld (make osworld-venv)")
    listed = subprocess.run([str(OSWORLD_PYTHON), "-c", (
        "import json, logging, re, inspect; logging.disable(50)\n"
        "from desktop_env.evaluators import metrics, getters\n"
        "from desktop_env.controllers import setup\n"
        "print(json.dumps([[n for n, v in vars(metrics).items() if callable(v) and not n.startswith('_')],"
        " [n[4:] for n in vars(getters) if n.startswith('get_')],"
        " re.findall(r'def _(\\w+)_setup', inspect.getsource(setup))]))")],
        capture_output=True, text=True, timeout=300)
    assert listed.returncode == 0, listed.stderr[-2000:]
    reference_metrics, reference_getters, reference_steps = json.loads(listed.stdout.splitlines()[-1])
    assert set(reference_metrics) - metrics.known() == set()
    assert set(reference_getters) - getters.known() == set()
    assert set(reference_steps) - set(STEPS) - OSWORLD_ONLY == set()

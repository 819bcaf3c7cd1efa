"""Every example in the README does what the README says it does.

The README's code blocks are read from the file: each is run against a real desktop, or named
in NOT_RUN with the reason (and the test that covers it instead), so a new example cannot slip
in untried.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml


ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
# Commands (or code) the README shows that this test does not run, and why.
NOT_RUN = {
    "make demo": "the whole set-up; tests/desktop/test_demo.py runs the demo's own command",
    "make test": "this suite",
    "vdesk vnc NAME": "runs until Ctrl-C; tests/desktop/test_cli.py drives it",
    "vdesk down NAME… | --all": "a synopsis; `vdesk down NAME` ends this test, --all would touch others' desktops",
    "vdesk bench": "minutes of measurement; tests/desktop/test_bench.py",
    "vdesk eval": "the 14-task suite; tests/harness run it (eval, replay, report)",
    "vdesk replay": "tests/harness/test_suite.py",
    "vdesk tasks": "needs OSWorld's own tree; tests/osworld/test_tasks_offline.py runs check and convert",
    "vdesk report": "tests/harness/test_report.py",
    "vdesk view NAME": "runs until Ctrl-C; tests/desktop/test_cli_output.py and tests/protocols/test_viewer.py",
    "vdesk mcp --transport http": "runs until Ctrl-C; tests/protocols/test_mcp_http.py",
    '{"mcpServers"': "an MCP client's configuration; tests/protocols/test_mcp_stdio.py and test_mcp_http.py use both",
    "vdesk --engine ssh://": "needs a remote engine; tests/desktop/test_remote_engine.py",
    "VDESK_VNC_PASSWORD=$(openssl rand -hex 4) docker-compose up": "tests/desktop/test_compose.py runs compose.yaml",
    'with Desktop.up(engine="tcp://': "needs a remote engine; tests/desktop/test_remote_engine.py",
    "from vdesk.cluster import": "needs a Ray cluster; tests/desktop/test_ray.py",
    'with Desktop.up(image="apps") as desktop:\n    desktop.browser': "needs a page served in the desktop; "
                                                                   "tests/apps/test_browser_handle.py",
    "- document:": "a list of checks, not a task; tests/apps/test_checks_on_files.py and the apps suite",
    '"retried": true': "a sample of results.json, not code",
    "from agents import": "needs a model service; tests/protocols/test_openai_agents.py runs ComputerTool",
    "import anthropic": "needs a model service; tests/protocols/test_anthropic_toolset.py runs the replies",
    "tree = desktop.accessibility_tree()": "needs Calc and a form open; tests/apps/test_accessibility.py does each line",
}


def blocks(language: str) -> list[str]:
    return [body for lang, body in FENCE.findall((ROOT / "README.md").read_text()) if lang == language]


def not_run(text: str) -> bool:
    return any(text.startswith(prefix) or f"\n{prefix}" in text for prefix in NOT_RUN)


def commands(block: str) -> list[tuple[list[str], str]]:
    """The block's command lines (continuations joined) as argv, each with its comment."""
    joined = block.replace("\\\n", " ")
    out = []
    for line in joined.splitlines():
        if not line.strip() or not_run(line.strip()):
            continue
        argv = shlex.split(line, comments=True)
        comment = line.split("#", 1)[1].strip() if "  #" in line else ""
        out.append((argv, comment))
    return out


def test_every_block_is_run_or_named_with_a_reason():
    readme = (ROOT / "README.md").read_text()
    assert {lang for lang, _ in FENCE.findall(readme)} <= {"sh", "python", "yaml", "json", ""}
    assert all(not_run(block.strip()) for block in blocks("json"))
    others = [block for block in blocks("sh") if "vdesk up" not in block]
    for line in "".join(others).replace("\\\n", " ").splitlines():
        assert not line.strip() or not_run(line.strip()), f"a README example nothing runs: {line}"


def test_the_command_line_block_does_what_its_comments_say(tmp_path):
    (cli_block,) = [block for block in blocks("sh") if "vdesk up" in block]
    (tmp_path / "actions.json").write_text(json.dumps([{"type": "mouse_move", "inputs": {"point": [5, 5]}}]))
    (tmp_path / "report.xlsx").write_bytes(bytes(range(256)) * 64)  # any bytes: cp copies them as they are
    name = None
    try:
        for argv, comment in commands(cli_block):
            if name is not None:
                argv = [name + word[4:] if word == "NAME" or word.startswith("NAME:") else word for word in argv]
            if argv[:2] == ["vdesk", "prune"]:
                argv.append(name)  # only this test's desktop: others' run on this engine
            run = subprocess.run([str(BIN / argv[0]), *argv[1:]], cwd=tmp_path, capture_output=True,
                                 text=True, timeout=180)
            assert run.returncode == 0, (argv, run.stdout, run.stderr)
            if argv[:2] == ["vdesk", "up"]:
                name = run.stdout.split()[0]
            if argv[1:2] == ["exec"] and "--format" not in argv and "--help" not in argv:
                assert json.loads(run.stdout)["status"] == "success", run.stdout
            if argv[-2:] == ["cat", "hello.txt"]:
                assert run.stdout == comment + "\n"  # the comment shows the output
        assert (tmp_path / "shot.png").is_file() and (tmp_path / "session.mp4").stat().st_size > 0
        assert (tmp_path / "back.xlsx").read_bytes() == (tmp_path / "report.xlsx").read_bytes()
    finally:
        if name is not None:
            subprocess.run([str(BIN / "vdesk"), "down", name], capture_output=True, timeout=60)


def test_the_python_api_example_runs_as_written(tmp_path, monkeypatch):
    (api_block,) = [block for block in blocks("python") if "with Desktop.up(size=(1280, 800))" in block]
    monkeypatch.chdir(tmp_path)
    exec(compile(api_block, "README.md", "exec"), {})  # its own asserts check what it claims
    assert (tmp_path / "shot.png").is_file()


def test_the_model_formats_example_runs_on_a_desktop(shared_desktop):
    (block,) = [block for block in blocks("python") if "from vdesk.adapters import" in block]
    exec(compile(block, "README.md", "exec"), {"desktop": shared_desktop})


def test_the_gymnasium_example_runs_as_written(monkeypatch):
    (block,) = [block for block in blocks("python") if "import json, gymnasium" in block]
    monkeypatch.chdir(ROOT)  # its task path is the repository's
    exec(compile(block, "README.md", "exec"), {})  # its own asserts check what it claims


def test_the_pytest_example_passes_with_the_installed_plugin(tmp_path):
    (block,) = [block for block in blocks("python") if "def test_terminal_opens(desktop)" in block]
    (tmp_path / "test_example.py").write_text(block)
    run = subprocess.run([str(BIN / "pytest"), "-q", "-p", "no:cacheprovider", "test_example.py"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "2 passed" in run.stdout, run.stdout + run.stderr


def test_the_task_example_is_solved_by_its_own_solution(tmp_path):
    (block,) = [block for block in blocks("yaml") if not not_run(block.strip())]
    task = yaml.safe_load(block)
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / f"{task['id']}.yaml").write_text(block)
    run = subprocess.run([str(BIN / "vdesk"), "eval", str(tmp_path / "suite"), "--agent", "scripted",
                          "--out", str(tmp_path / "run")], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert [(e["task_id"], e["success"]) for e in results["episodes"]] == [(task["id"], True)], results


def test_all_python_blocks_are_run_or_named():
    runners = ("with Desktop.up(size=(1280, 800))", "from vdesk.adapters import", "def test_terminal_opens(desktop)",
               "import json, gymnasium")
    for block in blocks("python"):
        assert any(marker in block for marker in runners) or not_run(block.strip()), block

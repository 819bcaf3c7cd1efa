"""Every example in the README and the documentation pages (docs/) does what the page says it does.

The pages' code blocks are read from the files: each is run against a real desktop, or named in
NOT_RUN with the reason (and the test that covers it instead), so a new example cannot slip in
untried. A Python block that is not run still has its imports run and every name it uses bound
(by the block, a builtin, or the ``desktop`` its page says it drives), so an example cannot use a
name it never imports. A block shown on two pages is run once.
"""

from __future__ import annotations

import ast
import builtins
import json
import re
import shlex
import subprocess
import symtable
import sys
from pathlib import Path

import pytest
import yaml
from PIL import Image

from tests.desktop.probe import buttons


ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
# Commands (or code) the pages show that this test does not run, and why.
NOT_RUN = {
    "make demo": "the whole set-up; tests/desktop/test_demo.py runs the demo's own command",
    "make test": "this suite",
    "vdesk vnc NAME": "runs until Ctrl-C; tests/desktop/test_cli.py drives it",
    "vdesk down NAME… | --all": "a synopsis; `vdesk down NAME` ends this test, --all would touch others' desktops",
    "vdesk bench": "minutes of measurement; tests/desktop/test_bench.py",
    "vdesk eval": "the 14-task suite; tests/harness run it (eval, replay, report)",
    "vdesk replay": "tests/harness/test_suite.py",
    "vdesk tasks": "needs OSWorld's own tree; tests/osworld/test_tasks_offline.py runs check and convert",
    "mkdir -p empty && vdesk tasks": "needs OSWorld's own tree; tests/osworld/test_tasks_offline.py checks the totals",
    "vdesk report": "tests/harness/test_report.py",
    "vdesk view NAME": "runs until Ctrl-C; tests/desktop/test_cli_output.py and tests/protocols/test_viewer.py",
    "vdesk mcp --transport http": "runs until Ctrl-C; tests/protocols/test_mcp_http.py",
    "vdesk osworld-serve": "runs until its stdin closes; tests/osworld/test_server.py serves and calls every endpoint",
    "from vdesk.osworld.server import serve": "an osworld desktop at 1920x1080; tests/osworld/test_server.py",
    "VDESK_BIN=": "needs a model service and .venv-osworld; tests/osworld/test_desktop_env.py runs the script against a scripted one",
    '{"mcpServers"': "an MCP client's configuration; tests/protocols/test_mcp_stdio.py and test_mcp_http.py use both",
    '{"name": "run_command"': "an MCP call's arguments; tests/protocols/test_mcp_stdio.py starts a program so",
    "vdesk --engine ssh://": "needs a remote engine; tests/desktop/test_remote_engine.py",
    "VDESK_VNC_PASSWORD=$(openssl rand -hex 4) docker-compose up": "tests/desktop/test_compose.py runs compose.yaml",
    'with Desktop.up(engine="tcp://': "needs a remote engine; tests/desktop/test_remote_engine.py",
    "from vdesk.cluster import": "needs a Ray cluster; tests/desktop/test_ray.py",
    "from vdesk import Desktop, Limits, Operator": "the package's names, imported by the names check",
    "- document:": "a list of checks, not a task; tests/apps/test_checks_on_files.py and the apps suite",
    '"retried": true': "a sample of results.json, not code",
    "from agents import": "needs a model service; tests/protocols/test_openai_agents.py runs ComputerTool",
    "import anthropic": "needs a model service; tests/protocols/test_anthropic_toolset.py runs the replies",
    "tree = desktop.elements.tree()": "needs Calc and a form open; tests/apps/test_accessibility.py does each line",
    "checkpoint = desktop.checkpoint()": "tests/desktop/test_forks.py does each line, on a desktop with programs running",
    "vdesk checkpoint NAME": "tests/desktop/test_forks.py runs checkpoint, fork, ls and prune from a shell",
    "vdesk fork ": "tests/desktop/test_forks.py (the forks it starts are its own to remove)",
    "vdesk ls  # desktops, then checkpoints": "tests/desktop/test_forks.py",
    "vdesk prune  # also removes checkpoints": "tests/desktop/test_forks.py (a bare prune here would touch others' checkpoints)",
    "vdesk down ready": "tests/desktop/test_branching.py removes checkpoints by name from a shell",
    "vdesk prune ready": "tests/desktop/test_branching.py prunes a checkpoint by name, in use and unused",
    'summary = run_suite(load_suite("examples/suite"), ScriptedAgent, out=Path("runs/rollouts")': "eight episodes of each example task; tests/harness/test_forked_suite.py runs a suite so",
    "start = env.unwrapped.save_checkpoint()": "tests/protocols/test_gymnasium.py resets to a checkpoint and checks what is back",
}
# The Python blocks this test runs, by a line each contains.
API = "with Desktop.up(size=(1280, 800))"
FORMATS = "from vdesk.adapters import"
GYMNASIUM = "import json, gymnasium"
PYTEST = "def test_terminal_opens(desktop)"
BROWSER = 'desktop.browser.open("file://'
RUNNERS = (API, FORMATS, GYMNASIUM, PYTEST, BROWSER)
GIVEN = {"desktop"}  # what a page's block may use unbound: the desktop the page's text drives


def fences() -> list[tuple[str, str, str]]:
    """Every fenced block of every page: (page, language, body)."""
    return [(str(page.relative_to(ROOT)), lang, body)
            for page in PAGES for lang, body in FENCE.findall(page.read_text())]


def blocks(language: str) -> list[str]:
    return list(dict.fromkeys(body for _, lang, body in fences() if lang == language))


def the_block(language: str, marker: str) -> str:
    (block,) = [block for block in blocks(language) if marker in block]
    return block


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


def unbound_names(code: str) -> set[str]:
    """Names the code reads at any depth that nothing in it binds (nor builtins, nor GIVEN)."""
    top = symtable.symtable(code, "<block>", "exec")
    bound = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    used: set[str] = set()

    def walk(table: symtable.SymbolTable) -> None:
        for symbol in table.get_symbols():
            if symbol.is_referenced() and (table is top or symbol.is_global()):
                used.add(symbol.get_name())
        for child in table.get_children():
            walk(child)

    walk(top)
    return used - bound - set(dir(builtins)) - GIVEN


def imports_of(code: str) -> ast.Module:
    """The code's top-level import statements alone."""
    tree = ast.parse(code)
    return ast.Module([node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))], [])


# The shell blocks that start a desktop, each run as one session (the first page it is on names it).
SESSIONS: dict[str, str] = {}
for _page, _lang, _body in fences():
    if _lang == "sh" and "vdesk up" in _body:
        SESSIONS.setdefault(_body, _page)


def test_every_block_is_run_or_named_with_a_reason():
    assert {lang for _, lang, _ in fences()} <= {"sh", "python", "yaml", "json", ""}
    assert all(not_run(block.strip()) for block in blocks("json"))
    others = [block for block in blocks("sh") if "vdesk up" not in block]
    for line in "".join(others).replace("\\\n", " ").splitlines():
        assert not line.strip() or not_run(line.strip()), f"an example nothing runs: {line}"
    for block in blocks("python"):
        assert any(marker in block for marker in RUNNERS) or not_run(block.strip()), block
    assert len(SESSIONS) >= 2  # the first session and the command line's quick reference


@pytest.mark.parametrize("block", blocks("python"), ids=lambda block: block.strip().splitlines()[0][:40])
def test_python_blocks_import_what_they_use(block):
    assert not unbound_names(block), f"names the block never binds: {sorted(unbound_names(block))}"
    exec(compile(imports_of(block), "<imports>", "exec"), {})  # its imports exist


@pytest.mark.parametrize("block", list(SESSIONS), ids=list(SESSIONS.values()))
def test_each_command_line_session_does_what_its_comments_say(tmp_path, block):
    (tmp_path / "actions.json").write_text(json.dumps([{"type": "mouse_move", "inputs": {"point": [5, 5]}}]))
    (tmp_path / "report.xlsx").write_bytes(bytes(range(256)) * 64)  # any bytes: cp copies them as they are
    names: list[str] = []  # every desktop the block started; NAME is the latest
    outputs: list[str] = []
    try:
        for argv, comment in commands(block):
            if names:
                argv = [names[-1] + word[4:] if word == "NAME" or word.startswith("NAME:") else word for word in argv]
            if argv[:2] == ["vdesk", "prune"]:
                argv.extend(names)  # only this test's desktops: others' run on this engine
            run = subprocess.run([str(BIN / argv[0]), *argv[1:]], cwd=tmp_path, capture_output=True,
                                 text=True, timeout=180)
            assert run.returncode == 0, (argv, run.stdout, run.stderr)
            if argv[:2] == ["vdesk", "up"]:
                names.append(run.stdout.split()[0])
            if argv[1:2] == ["exec"] and "--format" not in argv and "--help" not in argv:
                assert json.loads(run.stdout)["status"] == "success", run.stdout
            if argv[-2:] == ["cat", "hello.txt"]:
                assert run.stdout == comment + "\n"  # the comment shows the output
            if "-o" in argv:
                outputs.append(argv[argv.index("-o") + 1])
        assert names, "the block starts no desktop"
        for output in outputs:
            assert (tmp_path / output).stat().st_size > 0, output
        if (tmp_path / "back.xlsx").exists() or "back.xlsx" in block:
            assert (tmp_path / "back.xlsx").read_bytes() == (tmp_path / "report.xlsx").read_bytes()
    finally:
        for name in names:
            subprocess.run([str(BIN / "vdesk"), "down", name], capture_output=True, timeout=60)


def test_the_python_api_example_runs_as_written_and_its_screenshot_shows_the_terminal(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(the_block("python", API), "the Python API example", "exec"), {})  # its asserts check what it claims
    shot = Image.open(tmp_path / "shot.png").convert("RGB")
    colours = shot.getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) > 2, "the screenshot is blank"
    assert shot.getextrema() != ((0, 0), (0, 0), (0, 0))


def test_the_model_formats_example_runs_on_a_desktop(shared_desktop, probe):
    exec(compile(the_block("python", FORMATS), "the model formats example", "exec"), {"desktop": shared_desktop})
    # its UI-TARS reply double-clicks (18, 58) of the 0..1000 grid: (23, 46) on 1280x800
    assert buttons(probe.events()) == [("button_press", 1, 23, 46), ("button_release", 1, 23, 46)] * 2


def test_the_gymnasium_example_runs_as_written(monkeypatch):
    monkeypatch.chdir(ROOT)  # its task path is the repository's
    exec(compile(the_block("python", GYMNASIUM), "the Gymnasium example", "exec"), {})  # its asserts check it


def test_the_browser_example_runs_as_written():
    exec(compile(the_block("python", BROWSER), "the browser example", "exec"), {})  # its asserts check it


def test_the_pytest_example_passes_with_the_installed_plugin(tmp_path):
    (tmp_path / "test_example.py").write_text(the_block("python", PYTEST))
    run = subprocess.run([str(BIN / "pytest"), "-q", "-p", "no:cacheprovider", "test_example.py"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "2 passed" in run.stdout, run.stdout + run.stderr


def test_the_task_example_passes_with_its_solution_and_fails_with_its_wrong_one(tmp_path):
    (block,) = [block for block in blocks("yaml") if not not_run(block.strip())]
    task = yaml.safe_load(block)
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / f"{task['id']}.yaml").write_text(block)
    for agent, code, success in (("scripted", 0, True), ("wrong-solution", 1, False)):
        run = subprocess.run([str(BIN / "vdesk"), "eval", str(tmp_path / "suite"), "--agent", agent,
                              "--out", str(tmp_path / agent)], capture_output=True, text=True, timeout=300)
        assert run.returncode == code, run.stdout + run.stderr
        results = json.loads((tmp_path / agent / "results.json").read_text())
        assert [(e["task_id"], e["status"], e["success"]) for e in results["episodes"]] == [
            (task["id"], "finished", success)], results

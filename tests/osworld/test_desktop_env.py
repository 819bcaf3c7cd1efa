"""OSWorld's own harness on vdesk desktops: desktop-env 1.0.2's DesktopEnv and mm_agents'
PromptAgent, in their own virtualenv (``make osworld-venv``), with ``provider_name="vdesk"``.

The run loop is examples/osworld_desktop_env.py (lib_run_single's loop, run_multienv's
processes) with PromptAgent asking a scripted model on 127.0.0.1 that answers each task with
the steps vdesk's scripted agent plays for it; its scores must be the scores ``vdesk eval``
gives the same tasks and steps. PromptAgent is given the screenshot observation: its
accessibility-tree observations trim the tree with tiktoken's gpt-4 encoding, a download this
machine cannot make, so the tree is checked with OSWorld's own linearize code instead.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from tests.osworld.scripted_model import ScriptedChatServer, reply_for
from tests.protocols.conftest import container_exists
from vdesk.cli.app import invoke
from vdesk.osworld.task_files import TaskFiles

REPO = Path(__file__).resolve().parents[2]
OSWORLD_PYTHON = REPO / ".venv-osworld" / "bin" / "python"
EXAMPLE = REPO / "examples" / "osworld_desktop_env.py"
EXAMPLES = REPO / "examples" / "osworld"
VDESK_BIN = Path(sys.executable).with_name("vdesk")
SERVED = re.compile(r"vdesk desktop (\S+) serves OSWorld's protocol")
MODEL = "gpt-4o"   # PromptAgent sends a "gpt…" model to $OPENAI_BASE_URL/v1/chat/completions

# task -> which of its step lists both harnesses play: right ones score 1, wrong ones 0.
PLAYS = {
    "os-rename-file": "solution",            # upload_file; vm_file, vm_command_line, cloud_file
    "os-make-folder": "solution",            # vm_command_line, list_directory
    "os-screen-size": "solution",            # command; vm_screen_size
    "multi-calc-terminal": "wrong_solution",  # download (the host's cache, uploaded), open in LibreOffice
    "os-infeasible": "wrong_solution",       # DONE on an infeasible task
}

pytestmark = pytest.mark.desktop


def osworld_python() -> Path:
    if not OSWORLD_PYTHON.is_file():
        pytest.fail(f"{OSWORLD_PYTHON} is missing: `make osworld-venv` builds it (`make test` does)")
    return OSWORLD_PYTHON


def osworld_env(**extra: str) -> dict[str, str]:
    """The osworld scripts' environment: vdesk's command from this virtualenv."""
    return {**os.environ, "VDESK_BIN": str(VDESK_BIN), **extra}


def find_task(task_id: str) -> tuple[str, dict[str, Any]]:
    path = next(EXAMPLES.glob(f"examples/*/{task_id}.json"))
    return path.parent.name, json.loads(path.read_text())


def write_tree(root: Path, plays: dict[str, str]) -> list[tuple[str, dict[str, Any]]]:
    """An evaluation_examples tree whose tasks' ``solution`` is the steps chosen for them."""
    tasks, meta = [], {}
    for task_id, play in plays.items():
        domain, task = find_task(task_id)
        task["solution"] = task[play]
        (root / "examples" / domain).mkdir(parents=True, exist_ok=True)
        (root / "examples" / domain / f"{task_id}.json").write_text(json.dumps(task, indent=2))
        meta.setdefault(domain, []).append(task_id)
        tasks.append((domain, task))
    (root / "test_all.json").write_text(json.dumps(meta))
    return tasks


def nodes(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            yield from nodes(item)


def osworld_cache(root: Path, tasks: list[tuple[str, dict[str, Any]]]) -> Path:
    """The examples' files where desktop-env looks for them: a download step's at
    ``cache/<id>/<uuid5(URL)>_<name>``, a cloud_file getter's at ``cache/<id>/<dest>``, an
    upload_file step's ``local_path`` under the working folder (``root``)."""
    for _, task in tasks:
        files, folder = TaskFiles(EXAMPLES / "cache", task["id"]), root / "cache" / task["id"]
        folder.mkdir(parents=True, exist_ok=True)
        for node in nodes({k: v for k, v in task.items() if k in ("config", "evaluator")}):
            if node.get("type") == "download":
                for f in node["parameters"]["files"]:
                    name = f"{uuid.uuid5(uuid.NAMESPACE_URL, f['url'])}_{PurePosixPath(f['path']).name}"
                    copy(files.download(f["url"], f["path"]), folder / name)
            elif node.get("type") == "upload_file":
                for f in node["parameters"]["files"]:
                    copy(files.local(f["local_path"]), root / f["local_path"])
            elif node.get("type") == "cloud_file":
                many = node.get("multi", False)
                for url, dest in zip(node["path"] if many else [node["path"]], node["dest"] if many else [node["dest"]]):
                    copy(files.cloud(url, dest), folder / dest)
    return root / "cache"


def copy(source: Path | None, target: Path) -> None:
    assert source is not None, f"the examples' cache has no file for {target}"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def vdesk_scores(tree: Path, out: Path) -> dict[str, float]:
    code = invoke(["eval", str(tree), "--task-files", str(EXAMPLES / "cache"),
                   "--action-space", "pyautogui", "--parallel", "2", "--out", str(out)])
    assert code in (0, 1)  # 1: some task failed, as the wrong ones must
    return {p.parent.name: float(p.read_text()) for p in (out / "pyautogui" / "screenshot" / "scripted").glob("*/*/result.txt")}


def test_osworlds_run_loop_with_its_prompt_agent_scores_as_vdesk_eval_does_and_leaves_nothing(tmp_path: Path) -> None:
    tasks = write_tree(tmp_path / "tasks", PLAYS)
    expected = vdesk_scores(tmp_path / "tasks", tmp_path / "vdesk-run")
    assert sorted(expected.values()) == [0.0, 0.0, 1.0, 1.0, 1.0], expected
    cache = osworld_cache(tmp_path / "work", tasks)
    scripts = {task["instruction"]: [reply_for(step) for step in task["solution"]["pyautogui"]] for _, task in tasks}
    with ScriptedChatServer(scripts) as model:
        run = subprocess.run(
            [str(osworld_python()), str(EXAMPLE), str(tmp_path / "tasks"), "--cache", str(cache), "--model", MODEL,
             "--results", str(tmp_path / "results"), "--envs", "2", "--sleep-after-execution", "1"],
            cwd=tmp_path / "work", env=osworld_env(OPENAI_BASE_URL=model.url, OPENAI_API_KEY="scripted-key"),
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stderr[-4000:]
    scores = json.loads(run.stdout.strip().splitlines()[-1])
    assert scores == expected, (scores, expected, run.stderr[-4000:])
    for domain, task in tasks:
        result = tmp_path / "results" / "pyautogui" / "screenshot" / MODEL / domain / task["id"] / "result.txt"
        assert float(result.read_text()) == expected[task["id"]]
    assert {a.instruction for a in model.asked} == set(scripts)
    assert all(a.authorization == "Bearer scripted-key" and a.model == MODEL and a.images == 1 for a in model.asked)
    desktops = set(SERVED.findall(run.stderr))
    assert len(desktops) == len(tasks)  # one fresh desktop per task: two at start, a revert for each next one
    assert not [name for name in desktops if container_exists(name)]


A11Y_SCRIPT = """
import json, sys
import vdesk_osworld_provider
from desktop_env.desktop_env import DesktopEnv
from mm_agents.agent import linearize_accessibility_tree
env = DesktopEnv(provider_name="vdesk", cache_dir="cache", require_a11y_tree=True, screen_size=(1280, 800))
try:
    obs = env.reset(task_config=json.loads(sys.argv[1]))
    print(json.dumps({"table": linearize_accessibility_tree(obs["accessibility_tree"], platform="ubuntu"),
                      "provider": env.provider_name, "size": env.vm_screen_size, "desktop": env.provider.desktop_name}))
finally:
    env.close()
"""


def test_the_accessibility_tree_observation_is_osworlds_xml_that_its_linearize_code_reads(tmp_path: Path) -> None:
    _, task = find_task("chrome-switch-tab")  # google-chrome, socat, then tabs opened over CDP
    osworld_cache(tmp_path, [("chrome", task)])
    run = subprocess.run([str(osworld_python()), "-c", A11Y_SCRIPT, json.dumps(task)], cwd=tmp_path, env=osworld_env(),
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-4000:]
    answer = json.loads(run.stdout.strip().splitlines()[-1])
    rows = [line.split("\t") for line in answer["table"].splitlines()]
    assert rows[0][:3] == ["tag", "name", "text"] and all(len(row) == 7 for row in rows)
    assert ["document-web", "Beta page"] in [row[:2] for row in rows]  # the last tab opened is shown: its page, from Chromium's tree
    assert "New Tab" in {row[1] for row in rows if row[0] == "push-button"}
    assert answer["provider"] == "vdesk" and answer["size"] == {"width": 1280, "height": 800}
    assert answer["desktop"].startswith("vdesk-") and not container_exists(answer["desktop"])


KILLED_SCRIPT = """
import sys, time
import vdesk_osworld_provider
from desktop_env.desktop_env import DesktopEnv
env = DesktopEnv(provider_name="vdesk", require_a11y_tree=False)
print(env.provider.desktop_name, flush=True)
time.sleep(600)
"""


def test_a_killed_script_leaves_no_desktop(tmp_path: Path) -> None:
    script = subprocess.Popen([str(osworld_python()), "-c", KILLED_SCRIPT], cwd=tmp_path, env=osworld_env(),
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert script.stdout is not None
        name = script.stdout.readline().strip()
        assert name.startswith("vdesk-") and container_exists(name)
    finally:
        script.send_signal(signal.SIGKILL)
        script.wait()
    deadline = time.monotonic() + 120
    while container_exists(name) and time.monotonic() < deadline:
        time.sleep(0.5)  # polling for the removal, which the closed pipe starts
    assert not container_exists(name)


BAD_INPUT = {
    "os_type": ("DesktopEnv(provider_name='vdesk', os_type='Windows')", {}, "os_type='Windows'"),
    "VDESK_BIN": ("DesktopEnv(provider_name='vdesk')", {"VDESK_BIN": "/nonexistent/vdesk"}, "VDESK_BIN=/nonexistent/vdesk is not"),
    "no vdesk": ("DesktopEnv(provider_name='vdesk')", {"VDESK_BIN": "", "PATH": "/usr/bin:/bin"}, "vdesk not found: set VDESK_BIN"),
}


@pytest.mark.parametrize("case", list(BAD_INPUT))
def test_bad_input_is_one_clear_error_and_starts_nothing(case: str, tmp_path: Path) -> None:
    call, extra, message = BAD_INPUT[case]
    code = ("import vdesk_osworld_provider\nfrom desktop_env.desktop_env import DesktopEnv\n"
            f"try:\n    {call}\nexcept vdesk_osworld_provider.VdeskServeError as error:\n    print(error)\n")
    run = subprocess.run([str(osworld_python()), "-c", code], cwd=tmp_path, env=osworld_env(**extra),
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and message in run.stdout, (run.stdout, run.stderr[-2000:])
    assert not SERVED.findall(run.stderr) and "starting a vdesk desktop" not in run.stderr


REGISTRY_SCRIPT = """
import json
import desktop_env.providers as providers
before = providers.create_vm_manager_and_provider
import vdesk_osworld_provider, importlib
importlib.reload(vdesk_osworld_provider)  # a second import wraps nothing twice
from desktop_env.desktop_env import DesktopEnv
from desktop_env.providers import create_vm_manager_and_provider
manager, provider = create_vm_manager_and_provider(" VDesk ", None)
try:
    create_vm_manager_and_provider("nonesuch", None)
except NotImplementedError as error:
    other = str(error)
print(json.dumps({"types": [type(manager).__name__, type(provider).__name__], "other": other,
                  "wrapped_once": create_vm_manager_and_provider.__wrapped__ is before,
                  "registered": vdesk_osworld_provider.is_registered(), "size": list(provider.screen_size),
                  "path": manager.get_vm_path(os_type="Ubuntu", region=None)}))
"""


def test_the_import_registers_vdesk_beside_desktop_envs_own_names(tmp_path: Path) -> None:
    run = subprocess.run([str(osworld_python()), "-c", REGISTRY_SCRIPT], cwd=tmp_path, env=osworld_env(),
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    answer = json.loads(run.stdout.strip().splitlines()[-1])
    assert answer == {"types": ["VdeskVMManager", "VdeskProvider"], "other": "nonesuch not implemented!",
                      "wrapped_once": True, "registered": True, "size": [1920, 1080], "path": "osworld"}


COMPUTER_13_SCRIPT = """
import json, sys
import vdesk_osworld_provider
from desktop_env.desktop_env import DesktopEnv
env = DesktopEnv(provider_name="vdesk", action_space="computer_13", require_a11y_tree=False)
try:
    env.reset(task_config=json.loads(sys.argv[1]))
    for action in json.loads(sys.argv[2]):
        obs, reward, done, info = env.step(action, 0.5)
    print(json.dumps({"score": env.evaluate(), "done": done, "png": obs["screenshot"][:8].hex()}))
finally:
    env.close()
"""


def test_computer_13_actions_reach_the_desktop_and_osworlds_evaluator_scores_them(tmp_path: Path) -> None:
    _, task = find_task("os-make-folder")  # a terminal at (100, 100); the folder is checked by OSWorld's getters
    actions = [{"action_type": "CLICK", "parameters": {"x": 400, "y": 300}},
               {"action_type": "TYPING", "parameters": {"text": "mkdir -p ~/Projects/alpha"}},
               {"action_type": "PRESS", "parameters": {"key": "enter"}}, "DONE"]
    run = subprocess.run([str(osworld_python()), "-c", COMPUTER_13_SCRIPT, json.dumps(task), json.dumps(actions)],
                         cwd=tmp_path, env=osworld_env(), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-4000:]
    assert json.loads(run.stdout.strip().splitlines()[-1]) == {"score": 1.0, "done": True, "png": "89504e470d0a1a0a"}


def test_a_stopped_run_closes_its_environments_and_leaves_no_desktop(tmp_path: Path) -> None:
    tasks = write_tree(tmp_path / "tasks", {"os-make-folder": "solution"})
    cache = osworld_cache(tmp_path / "work", tasks)
    with ScriptedChatServer({tasks[0][1]["instruction"]: ["WAIT"] * 50}) as model:
        run = subprocess.Popen(
            [str(osworld_python()), str(EXAMPLE), str(tmp_path / "tasks"), "--cache", str(cache), "--model", MODEL,
             "--results", str(tmp_path / "results"), "--max-steps", "50", "--sleep-after-execution", "1"],
            cwd=tmp_path / "work", env=osworld_env(OPENAI_BASE_URL=model.url, OPENAI_API_KEY="k"),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            assert run.stderr is not None
            name = next(m.group(1) for line in run.stderr if (m := SERVED.search(line)))
            threading.Thread(target=run.stderr.read, daemon=True).start()  # keep the pipe drained
            while not model.asked:
                time.sleep(0.2)  # polling until the episode runs: the agent has asked once
            run.send_signal(signal.SIGTERM)
            assert run.wait(timeout=180) != 0
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
    assert not container_exists(name)  # removed before the run exited, not later by the lease

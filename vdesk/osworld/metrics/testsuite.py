"""OSWorld's ``check_python_file_by_test_suite``: a task's own test file, run against the Python
files the agent left on the desktop.

The reference imports the test file (from the folder the getters filled: the test beside the
desktop's files, which it imports in turn) and calls its ``test`` function in the evaluating
process itself: the desktop's code runs on the host. Here it runs in a throwaway container of
the osworld image instead — no network, read-only root, no capabilities, no privilege gain,
bounded memory, processes and time, the folder mounted read-only and copied to a private /tmp —
so what the agent wrote cannot reach the host. That costs a container start (about a second)
per judged task; the verdict is the reference's: a boolean is 1 or 0, a number is clipped to
[0, 1], anything else counts by its truth, and a test file that is missing, does not load, lacks
the function or raises scores 0.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from vdesk.errors import OSWorldError
from vdesk.osworld.metrics.registry import metric

TIMEOUT = 120.0           # seconds for the whole test, the container's start included
MEMORY = "512m"
OUTPUT_LIMIT = 1 << 16    # bytes of the runner's answer read back

# Runs in the container as its user: copies the folder to /tmp (tests may write beside
# themselves), imports the test file as the reference does (its folder first on sys.path, the
# working directory), calls the function and prints one JSON line, the last of the output.
_RUNNER = r"""
import importlib.util, json, math, os, shutil, sys
name, function = sys.argv[1], sys.argv[2]
shutil.copytree("/task", "/tmp/task")
os.chdir("/tmp/task")
sys.path.insert(0, "/tmp/task")
def answer(score):
    sys.stdout.flush()
    os.write(1, ("\n" + json.dumps({"score": score}) + "\n").encode())
    os._exit(0)
try:
    spec = importlib.util.spec_from_file_location("vdesk_test_suite", os.path.join("/tmp/task", name))
    module = importlib.util.module_from_spec(spec)
    sys.modules["vdesk_test_suite"] = module
    spec.loader.exec_module(module)
    test = getattr(module, function, None)
    if test is None or not callable(test):
        answer(0.0)
    result = test()
except Exception:
    answer(0.0)
if isinstance(result, bool):
    answer(1.0 if result else 0.0)
try:
    if isinstance(result, (int, float)):
        score = max(0.0, min(1.0, float(result)))
        answer(None if math.isnan(score) else score)
    answer(1.0 if bool(result) else 0.0)
except Exception:
    answer(0.0)
"""


@metric("check_python_file_by_test_suite", options=("test_function_name",))
def check_python_file_by_test_suite(result: Any, expected: Any, test_function_name: str = "test") -> float:
    """1 when the task's test file (``expected``, a path) passes against the files beside it."""
    if not isinstance(expected, str) or not expected or not isinstance(test_function_name, str):
        return 0.0
    test_file = Path(expected).resolve()
    if not test_file.is_file():
        return 0.0
    return run_test_suite(test_file, test_function_name)


def run_test_suite(test_file: Path, function: str) -> float:
    """The score of ``function`` in ``test_file`` (its folder mounted read-only), run in a
    throwaway osworld container; :class:`OSWorldError` when no container could run it."""
    from vdesk import engine
    from vdesk.container import HARDENING

    client = engine.connect()
    options = {key: value for key, value in HARDENING.items() if key not in ("tmpfs", "stop_signal", "init")}
    with tempfile.TemporaryDirectory(prefix="vdesk-test-suite-") as shared:
        _readable_copy(test_file.parent, Path(shared))
        return _run(client, Path(shared), test_file.name, function, options)


def _readable_copy(folder: Path, into: Path) -> None:
    """The folder's regular files, readable by the container's user: the getters' folder is the
    evaluating user's alone (mode 0700), and the container does not run as that user."""
    into.chmod(0o755)
    for path in folder.iterdir():
        if path.is_file() and not path.is_symlink():
            shutil.copyfile(path, into / path.name)
            (into / path.name).chmod(0o644)


def _run(client: Any, folder: Path, name: str, function: str, options: dict[str, Any]) -> float:
    import docker.errors

    from vdesk import images

    try:
        container = client.containers.run(
            images.resolve("osworld"), ["python3", "-I", "-c", _RUNNER, name, function],
            entrypoint=[], user="user", network_mode="none", detach=True, working_dir="/tmp",
            volumes={str(folder): {"bind": "/task", "mode": "ro"}},
            tmpfs={"/tmp": "rw,nosuid,nodev,size=256m"}, mem_limit=MEMORY, pids_limit=64,
            labels={"vdesk.role": "test-suite"}, **options)
    except docker.errors.DockerException as error:
        raise OSWorldError(f"check_python_file_by_test_suite: no container to run the test in: {error}") from error
    try:
        try:
            container.wait(timeout=TIMEOUT)
        except Exception:  # the test hangs: it has failed, as a hung reference run would
            return 0.0
        output = container.logs(stdout=True, stderr=False)[-OUTPUT_LIMIT:].decode("utf-8", "replace")
    finally:
        container.remove(force=True)
    for line in reversed(output.splitlines()):
        if line.startswith('{"score"'):
            score = json.loads(line)["score"]
            return 0.0 if score is None else float(score)
    return 0.0  # killed (memory) or ended before answering

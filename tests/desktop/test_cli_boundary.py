"""Whatever a user types and whenever they press Ctrl-C, `vdesk` ends in one line: exit 2 for
an error, 130 for Ctrl-C, never a traceback or a box. Driven as a user does: the real command
in a subprocess, a real desktop, real signals."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

VDESK = str(Path(sys.executable).parent / "vdesk")
pytestmark = pytest.mark.desktop


def vdesk(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([VDESK, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "80", **(env or {})})


def commands() -> list[str]:
    """Every command `vdesk --help` lists, so a new command is covered without editing this test."""
    listing = vdesk("--help").stdout.split("Commands:", 1)[1]
    return [line.split()[0] for line in listing.splitlines() if line.startswith("  ") and line.split()]


def assert_one_line_error(result: subprocess.CompletedProcess[str], *, code: int = 2) -> str:
    lines = result.stderr.splitlines()
    assert result.returncode == code, (result.returncode, result.stderr)
    assert len(lines) == 1 and lines[0].startswith("vdesk: "), result.stderr
    assert "Traceback" not in result.stderr and "╭" not in result.stderr
    return lines[0]


def test_every_command_refuses_a_bad_option_in_one_line():
    names = commands()
    assert {"up", "ls", "exec", "eval", "view"} <= set(names)
    for name in names:
        line = assert_one_line_error(vdesk(name, "--no-such-option"))
        assert f"vdesk: {name}: " in line and "--no-such-option" in line and f"vdesk {name} --help" in line


def test_usage_errors_are_one_line_and_there_is_a_version():
    assert_one_line_error(vdesk("no-such-command"))
    assert "Missing argument" in assert_one_line_error(vdesk("exec"))
    assert "--size" in assert_one_line_error(vdesk("up", "--sizee", "1x1"))
    version = vdesk("--version")
    assert version.returncode == 0 and re.fullmatch(r"vdesk \d+\.\d+\.\d+\S*\n", version.stdout)


def test_the_bad_arguments_users_met_are_one_line_errors(shared_desktop, tmp_path):
    name = shared_desktop.name
    cases = {
        ("report", str(tmp_path / "missing")): "no run folder",
        ("shot", name, "-o", str(tmp_path / "nodir" / "x.png")): "no folder",
        ("shot", name, "-o", str(tmp_path / "x.txt")): ".png or .jpg",
        ("shot", name, "--size", "0x0", "-o", str(tmp_path / "x.png")): "at least 1",
        ("exec", name, "--format", "bogus", "{}"): "unknown format 'bogus'",
        ("up", "--size", "huge"): "invalid size 'huge'",
        ("up", "--clock", "2030-01-01 00:00:00"): "use the apps or osworld image (vdesk up --apps",
        ("up", "--image", "app"): "(did you mean 'apps'?): name one of vdesk's own (lean, apps, osworld",
        ("eval", "examples/suite", "--parallel", "0"): "--parallel must be at least 1",
        ("replay", str(tmp_path / "missing")): str(tmp_path / "missing"),
        ("down",): "name the desktops to remove",
        ("--engine", "tcp://127.0.0.1:1", "ls"): "(Connection refused)",
    }
    for args, expected in cases.items():
        line = assert_one_line_error(vdesk(*args))
        assert expected in line, (args, line)
    assert not (tmp_path / "x.txt").exists()


def test_a_task_file_with_a_syntax_error_names_line_and_column(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: x\ninstruction: [unclosed\n  foo: : bar\n")
    assert "line 3, column 6" in assert_one_line_error(vdesk("eval", str(bad)))


NO_ENGINE = ["--engine", "tcp://127.0.0.1:1"]


# Each command with arguments that keep it busy, or that fail without starting a desktop or a
# build (so an interrupt cannot leave one behind). `prune` is left out: run unscoped it would
# touch the desktops of others using this engine.
def busy_commands(name: str, tmp: Path) -> list[list[str]]:
    return [[*NO_ENGINE, "build"], ["up", "--size", "huge"], ["ls"], ["down", "no-such-desktop"],
            ["shot", name, "-o", str(tmp / "shot.png")],
            ["exec", name, '{"type": "wait", "inputs": {"duration": 3}}'],
            ["run", name, "--wait", "--", "sleep", "3"], ["vnc", name], ["view", name], ["mcp"],
            ["record", name, "-o", str(tmp / "session.mp4"), "--seconds", "3"],
            ["cp", f"{name}:/etc/os-release", str(tmp)],
            ["eval", str(tmp / "no-suite")], ["replay", str(tmp / "no-run")], ["report", str(tmp / "no-run")],
            ["bench", "--fleet", "--counts", "x"], ["demo", "--out", "/proc/no/such"],
            ["tree", name, "--format", "table"], ["tasks", "check", str(tmp / "no-tasks")],
            [*NO_ENGINE, "osworld-serve"], ["checkpoint", "no-such-desktop"], ["fork", "no-such-desktop"]]


def progress_notes(command: str) -> set[str]:
    """What a busy command of :func:`busy_commands` says on stderr while it works."""
    return {"view": {"the link works once, within 300 s; view-only (Ctrl-C to stop)"},
            "osworld-serve": {"vdesk osworld-serve: starting a 1920x1080 osworld desktop"}}.get(command, set())


DELAYS = (0.05, 0.1, 0.2, 0.3, 0.45, 0.8)
COMMAND_NAMES = [next(a for a in argv if a not in NO_ENGINE) for argv in busy_commands("NAME", Path("/tmp"))]


def test_the_ctrl_c_matrix_covers_every_command():
    assert set(COMMAND_NAMES) | {"prune"} == set(commands())


def interrupt(argv: list[str], delay: float) -> tuple[int, str]:
    process = subprocess.Popen([VDESK, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    return process.returncode, stderr


@pytest.mark.parametrize("command", COMMAND_NAMES)
def test_ctrl_c_at_any_moment_is_one_line_and_130(shared_desktop, tmp_path, command):
    argv = busy_commands(shared_desktop.name, tmp_path)[COMMAND_NAMES.index(command)]
    answered = []  # the delays at which vdesk itself answered the signal: the cases that prove something
    for delay in DELAYS:
        code, stderr = interrupt(argv, delay)
        if before_vdesk_ran(stderr):
            continue
        stderr = without_interpreter_notes(stderr)
        # The command's own progress notes may come first (`view`'s link, `record`'s start); the
        # outcome is one line after them.
        outcome = [line for line in stderr.splitlines() if line not in progress_notes(command)]
        assert "Traceback" not in stderr and len(outcome) <= 1, (argv, delay, stderr)
        if code == 130:
            assert outcome[0].startswith("vdesk: interrupted"), (argv, delay, stderr)
            answered.append(delay)
        elif code == -signal.SIGINT:
            # The signal came before the interpreter ran a line of vdesk: the process ends by
            # the signal, silently (a shell reports 130 too).
            assert stderr == "", (argv, delay, stderr)
        else:  # it finished before the signal: its own outcome, in at most one line
            assert code in (0, 1, 2), (argv, delay, code, stderr)
    assert answered, f"no delay of {DELAYS} s reached vdesk's own handling of Ctrl-C for {command!r}"


@pytest.mark.parametrize("command", ["vnc", "exec"])
def test_ctrl_c_in_a_long_command_is_the_interrupted_line(shared_desktop, command):
    argv = {"vnc": ["vnc", shared_desktop.name],
            "exec": ["exec", shared_desktop.name, '{"type": "wait", "inputs": {"duration": 3}}']}[command]
    answered = 0
    for delay in DELAYS:
        code, stderr = interrupt(argv, max(delay, 0.2))
        if before_vdesk_ran(stderr):
            continue
        stderr = without_interpreter_notes(stderr)
        assert (code, stderr) in ((130, "vdesk: interrupted\n"), (-signal.SIGINT, "")), (argv, stderr)
        answered += code == 130
    assert answered, f"no case reached vdesk's own handling of Ctrl-C for {command!r}"


# The console script's module (outside the package): its first lines take Ctrl-C over.
ENTRY = "vdesk_entry.py"

# What the interpreter prints when a signal lands in its own machinery, whose exception it then
# ignores and goes on (its start's search path, a weak reference callback of the import system):
# the first line of the block, and its frames are all frozen ones. The command then runs to its
# own outcome, which the matrix checks as any other.
IGNORED_BY_THE_INTERPRETER = ("Failed checking if argv[0] is an import path entry", "Exception ignored in: ")


def without_interpreter_notes(stderr: str) -> str:
    """``stderr`` without the blocks of :data:`IGNORED_BY_THE_INTERPRETER` (each ends with its
    ``KeyboardInterrupt`` line); a block with a frame of vdesk stays, so the matrix sees it."""
    lines, kept = stderr.splitlines(keepends=True), []
    while lines:
        if not lines[0].startswith(IGNORED_BY_THE_INTERPRETER):
            kept.append(lines.pop(0))
            continue
        end = next((i for i, line in enumerate(lines) if line.startswith("KeyboardInterrupt")), None)
        block = lines[:end + 1] if end is not None else lines
        frames = [line for line in block if line.strip().startswith("File ")]
        if end is None or not all('File "<frozen ' in frame for frame in frames):
            kept.extend(lines)
            break
        del lines[:end + 1]
    return "".join(kept)


def before_vdesk_ran(stderr: str) -> bool:
    """The one window no code of vdesk can close: the interpreter's own start (its site
    module, its standard streams) and its finding the console script's module, up to that
    module's first lines — microseconds, longer on a loaded machine. What it prints names no
    frame of vdesk but the console script's and that module's top level (the package's import
    comes after, and is vdesk's to answer)."""
    if stderr.startswith("Fatal Python error: init_") and "vdesk" not in stderr:
        return True
    frames = [line.strip() for line in stderr.splitlines() if line.strip().startswith("File ")]
    ours = [frame for frame in frames if "/vdesk/" in frame or ENTRY in frame or frame.startswith(f'File "{VDESK}"')]
    return (stderr.startswith("Traceback") and stderr.rstrip().endswith("KeyboardInterrupt") and bool(ours)
            and ours[0].startswith(f'File "{VDESK}"')
            and all(f'/{ENTRY}"' in frame and frame.endswith("in <module>") for frame in ours[1:]))


# Run by the interpreter at its start (a sitecustomize on PYTHONPATH), before the console script:
# a SIGINT to the process at the moment the module named in the environment is being imported.
INTERRUPT_IN_IMPORT = """
import os, signal, sys

class InterruptIn:
    def find_spec(self, name, path=None, target=None):
        if name == os.environ["INTERRUPT_IN_IMPORT"]:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)  # its handler runs here, inside that import
        return None

sys.meta_path.insert(0, InterruptIn())
"""


@pytest.mark.parametrize("module", ["vdesk", "vdesk.lazy", "typing", "vdesk.version", "vdesk.cli"])
def test_ctrl_c_while_python_imports_the_package_is_one_line_and_130(tmp_path, module):
    """Each import between the console script and the boundary, hit by a SIGINT (a loaded
    machine once took 0.05 s over them; a Ctrl-C there printed a traceback)."""
    (tmp_path / "sitecustomize.py").write_text(INTERRUPT_IN_IMPORT)
    ran = subprocess.run([VDESK, "up", "--size", "huge"], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(tmp_path), "INTERRUPT_IN_IMPORT": module})
    assert (ran.returncode, ran.stderr) == (130, "vdesk: interrupted\n")


def imported_modules(*args: str) -> set[str]:
    """The modules the real command imports (``-X importtime`` through its environment)."""
    result = subprocess.run([VDESK, *args], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"})
    return {line.rsplit("|", 1)[1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}


def test_a_command_imports_only_what_it_uses(shared_desktop):
    """Start-up time is import time: `--help` loads no Docker, image, validation or VNC
    library, and `exec` of a click loads no VNC client, YAML, harness or progress bars."""
    heavy = {"docker", "PIL.Image", "pydantic", "vncdotool", "twisted", "Xlib.display", "rich", "yaml", "vdesk.harness"}
    assert not heavy & imported_modules("--help")
    assert not heavy & imported_modules("--version")
    click = '{"type": "click", "inputs": {"point": {"raw": {"x": 5, "y": 5}}}}'
    loaded = imported_modules("exec", shared_desktop.name, click)
    assert "docker" in loaded and "vdesk.integrations.operator" in loaded  # it did the work
    assert not {"vncdotool", "twisted", "rich", "yaml", "vdesk.harness"} & loaded


def test_help_reads_as_typed():
    """Flags show no value (`--json`, not `--json <bool>`), arguments their metavar (`NAME`,
    not `{name}` or `<str>`); `exec --help` shows actions to copy and says which formats are JSON."""
    for name in ["", *commands()]:
        shown = vdesk(*([name] if name else []), "--help")
        assert shown.returncode == 0 and shown.stderr == ""
        assert not re.search(r"<(bool|str|int|float|list\[str\]|path)>|\{\w+\}", shown.stdout), (name, shown.stdout)
    assert "--json  " in vdesk("ls", "--help").stdout
    exec_help = vdesk("exec", "--help").stdout
    assert "Usage: vdesk exec [OPTIONS] NAME [ACTION]..." in exec_help
    assert """vdesk exec NAME '{"type": "click", "inputs": {"point": {"raw": {"x": 640, "y": 400}}}}'""" in exec_help
    assert "--format anthropic '{" in exec_help and "All but uitars are JSON" in " ".join(exec_help.split())


def test_a_program_option_without_the_double_dash_says_where_it_goes():
    line = assert_one_line_error(vdesk("run", "some-desktop", "xterm", "-geometry", "80x24+0+0"))
    assert line == ("vdesk: run: -geometry: options after the program need `--` before the program: "
                    "vdesk run some-desktop -- xterm -geometry 80x24+0+0 (see `vdesk run --help`)")
    line = assert_one_line_error(vdesk("run", "--wait", "--timeout", "5", "some-desktop", "ls", "-l", "/tmp"))
    assert "vdesk run --wait --timeout 5 some-desktop -- ls -l /tmp" in line
    assert "No such option: --bogus" in assert_one_line_error(vdesk("run", "--bogus", "some-desktop", "ls"))  # vdesk's own


def test_an_unknown_agent_lists_every_agent_eval_accepts(tmp_path):
    from vdesk.harness.agents import AGENT_NAMES

    line = assert_one_line_error(vdesk("eval", "examples/suite", "--agent", "nosuch", "--out", str(tmp_path / "run")))
    assert line == f"vdesk: unknown agent 'nosuch': use one of {', '.join(AGENT_NAMES)}"
    assert "osworld-chat" in AGENT_NAMES


def test_a_typo_in_a_task_file_is_one_line_with_the_key_it_meant(tmp_path):
    task = tmp_path / "typo.yaml"
    task.write_text("id: typo\ninstruction: x\nchecks:\n  - command: echo hi\n    stdot: \"hi\\n\"\n")
    said = f"{task}: checks.0: unknown key 'stdot' in a command check (did you mean 'stdout'?)"
    assert assert_one_line_error(vdesk("eval", str(task), "--out", str(tmp_path / "run"))) == f"vdesk: {said}"
    checked = vdesk("tasks", "check", str(task))  # a verdict for every file: the wrong ones listed last, exit 1
    assert checked.returncode == 1 and f"1 wrong file, not read:\n  {said}\n" in checked.stdout, checked


def test_the_tree_on_the_lean_image_is_refused_up_front_saying_why(shared_desktop, tmp_path):
    line = assert_one_line_error(vdesk("tree", shared_desktop.name))
    assert line == (f"vdesk: desktop {shared_desktop.name} runs the lean image, which has no accessibility bus: "
                    "the tree (and marks) needs the apps image (vdesk up --apps, image='apps')")
    line = assert_one_line_error(vdesk("eval", "examples/suite", "--ids", "terminal-echo", "--observation", "som",
                                       "--out", str(tmp_path / "run")))
    assert line == ("vdesk: --observation som reads the accessibility tree, which the lean image has no bus for: "
                    "task terminal-echo runs on it (give the task desktop: {image: apps}, or observe with screenshot)")


def test_the_interpreters_own_windows_are_told_apart_from_vdesks_output():
    """The shapes a signal in the interpreter's machinery prints, as seen on a loaded machine."""
    frozen = '  File "<frozen importlib._bootstrap>", line 198, in cb\n'
    ignored = f"Exception ignored in: <function _get_module_lock.<locals>.cb at 0x7f>\nTraceback (most recent call last):\n{frozen}KeyboardInterrupt: \n"
    outcome = "vdesk: /nonexistent: no such task file or folder\n"
    assert without_interpreter_notes(ignored + outcome) == outcome
    searched = ("Failed checking if argv[0] is an import path entry\nTraceback (most recent call last):\n"
                '  File "<frozen zipimport>", line 75, in __init__\nKeyboardInterrupt\n')
    assert without_interpreter_notes(searched + outcome) == outcome
    ours = ignored.replace(frozen, '  File "/x/vdesk/cli/app.py", line 9, in run\n')
    assert without_interpreter_notes(ours + outcome) == ours + outcome  # vdesk's frame: kept, seen
    assert before_vdesk_ran(f"Fatal Python error: init_sys_streams: can't initialize sys standard streams\n"
                            f"Traceback (most recent call last):\n{frozen}KeyboardInterrupt\n")
    imported = (f'Traceback (most recent call last):\n  File "{VDESK}", line 3, in <module>\n{frozen}'
                f'  File "/x/{ENTRY}", line 10, in <module>\n{frozen}KeyboardInterrupt\n')
    assert before_vdesk_ran(imported)
    assert not before_vdesk_ran(imported.replace(f"/x/{ENTRY}", "/x/vdesk/__init__.py"))

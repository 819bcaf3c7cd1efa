"""vdesk's ``check_python_file_by_test_suite`` gives OSWorld's own verdicts: each case — a test
file beside the Python files it imports, as the getters leave them — is scored by the reference
(in its process, as OSWorld runs it) and by vdesk (in a throwaway osworld container), and the
scores compared. Every case has its own folder and its own module names: the reference's process
keeps the modules a test imported, so two cases sharing a name would judge each other's files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.osworld.reference import Case, assert_same_verdicts, write_file

pytestmark = pytest.mark.desktop

METRIC = "check_python_file_by_test_suite"


def _case(tmp_path: Path, label: str, test: str | None, modules: dict[str, str] | None = None,
          **options: str) -> Case:
    """A folder holding ``modules`` (name → source) and, unless None, the test file ``test.py``."""
    folder = tmp_path / label.replace(" ", "_")
    folder.mkdir(mode=0o700)  # as the getters' folder is: the evaluating user's alone
    files = [write_file(folder / f"{name}.py", source) for name, source in (modules or {}).items()]
    test_path = folder / "test_suite.py"
    if test is not None:
        write_file(test_path, test)
    return Case(METRIC, files, str(test_path), options, label=label)


def _adder_test(module: str) -> str:
    return f"from {module} import add\n\ndef test():\n    return add(2, 3) == 5 and add(-1, 1) == 0\n"


def test_check_python_file_by_test_suite(tmp_path: Path) -> None:
    cases = [
        _case(tmp_path, "right", _adder_test("calc_right"), {"calc_right": "def add(a, b):\n    return a + b\n"}),
        _case(tmp_path, "wrong", _adder_test("calc_wrong"), {"calc_wrong": "def add(a, b):\n    return a - b\n"}),
        _case(tmp_path, "module missing", _adder_test("calc_absent")),
        _case(tmp_path, "raises", "def test():\n    raise AssertionError('no')\n"),
        _case(tmp_path, "half", "def test():\n    return 0.5\n"),
        _case(tmp_path, "above one", "def test():\n    return 3\n"),
        _case(tmp_path, "below zero", "def test():\n    return -2.5\n"),
        _case(tmp_path, "truthy text", "def test():\n    return 'passed'\n"),
        _case(tmp_path, "empty list", "def test():\n    return []\n"),
        _case(tmp_path, "none", "def test():\n    pass\n"),
        _case(tmp_path, "syntax error", "def test(:\n    return True\n"),
        _case(tmp_path, "no function", "def check():\n    return True\n"),
        _case(tmp_path, "not callable", "test = True\n"),
        _case(tmp_path, "named function", "def check():\n    return True\n", test_function_name="check"),
        _case(tmp_path, "writes beside itself",
              "import pathlib\n\ndef test():\n    pathlib.Path('out.txt').write_text('x')\n"
              "    return pathlib.Path('out.txt').read_text() == 'x'\n"),
        _case(tmp_path, "reads its folder",
              "import os\n\ndef test():\n    return os.path.isfile('data_file.py') and os.path.isfile('test_suite.py')\n",
              {"data_file": "VALUE = 1\n"}),
        _case(tmp_path, "no test file", None),
    ]
    cases.append(Case(METRIC, None, None, label="nothing"))
    assert_same_verdicts(cases)


def test_the_agents_code_never_runs_on_the_host(tmp_path: Path) -> None:
    """The desktop's module, imported by the test, finds no network and cannot write to the
    host's folder it came from."""
    from vdesk.osworld.metrics import lookup

    probe = ("import socket, pathlib\n\ndef test():\n"
             "    try:\n        pathlib.Path('/task/escaped.txt').write_text('x')\n        return 0.9\n"
             "    except OSError:\n        pass\n"
             "    try:\n        socket.create_connection(('1.1.1.1', 53), timeout=3)\n        return 0.8\n"
             "    except OSError:\n        return 0.25\n")
    case = _case(tmp_path, "confined", probe)
    assert lookup(METRIC)(case.result, case.expected) == 0.25
    assert not (tmp_path / "confined" / "escaped.txt").exists()

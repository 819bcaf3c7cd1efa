"""One task, two spellings: OSWorld's JSON ↔ vdesk's YAML, for what both can express.

What converts (anything else is listed in :attr:`Conversion.not_carried`, never dropped silently;
:attr:`Conversion.changed` is what of that changes the task's outcome — a setup step it starts
without, a postconfig step or metric it is judged without — and ``vdesk tasks convert`` then
writes nothing unless ``--lossy``: the converted ``os-close-window`` failed with its own solution):

============================================== ===============================================
OSWorld                                        vdesk
============================================== ===============================================
``launch``                                     ``start``
``execute`` / ``command`` (no until/stdout)    ``run``
``sleep``                                      ``run: [sleep, N]``
``open``                                       ``start: [xdg-open, path]`` + ``wait_window``
``chrome_open_tabs`` (its first address)       ``browser``
``upload_file`` / ``download``                 ``upload`` (the file beside the task)
exact_match(vm_command_line, rule)             ``command`` check with ``stdout``
check_include_exclude(vm_command_line, rule)   ``command`` check with ``stdout_contains``
file_contains(vm_file, rule)                   ``file`` check with ``contains``
exact_match(vm_file-less cat …)                —
solution (pyautogui / computer_13)             ``solution`` (BaseActions)
wrong_solution (vdesk's own key, as solution)  ``wrong_solution`` (BaseActions)
clock (vdesk's own key)                        ``desktop.clock``
============================================== ===============================================

Back from vdesk: ``start``/``run``/``upload``/``browser`` steps, ``command`` checks on
stdout and ``file`` checks with ``equals``/``contains`` (the evaluator's metrics joined by
``and``). The solutions, BaseActions, have no spelling in OSWorld's spaces that vdesk writes.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from vdesk.harness.tasks import (BrowserStep, CommandCheck, FileCheck, RunStep, StartStep, Task, UploadStep,
                                 WaitWindowStep)
from vdesk.osworld.extension import spec_of
from vdesk.osworld.format import GetterSpec, StepSpec


START, JUDGING = "the desktop the agent starts from", "how the task is judged"


@dataclass(frozen=True)
class Loss:
    """One thing the other spelling cannot carry; ``changes`` is what leaving it out changes
    of the task's outcome (:data:`START` or :data:`JUDGING`), None when it changes neither."""

    item: str
    changes: str | None = None

    def __str__(self) -> str:
        return self.item


@dataclass
class Conversion:
    """The converted task (as data to write) and what it could not carry."""

    data: dict[str, Any]
    not_carried: list[Loss] = field(default_factory=list)

    @property
    def changed(self) -> list[Loss]:
        """What was left out that changes the outcome: the converted task may pass where the
        original fails, or fail with its own solution (a dropped postconfig step, a focus)."""
        return [loss for loss in self.not_carried if loss.changes is not None]

    def lose(self, item: str, changes: str | None) -> None:
        self.not_carried.append(Loss(item, changes))


def to_vdesk(task: Task) -> Conversion:
    """An OSWorld task (loaded) as vdesk task data."""
    spec = spec_of(task)
    if spec is None:
        raise ValueError(f"task {task.id} is not an OSWorld task")
    file = spec.file
    out = Conversion({"id": task.id, "instruction": task.instruction,
                      "desktop": task.desktop.model_dump(mode="json", include={"size", "image", "clock"}, exclude_none=True),
                      "setup": [], "checks": []})
    for step in file.config:
        _step_to_vdesk(step, out)
    for step in file.evaluator.postconfig:
        # OSWorld runs it after the agent, before judging; a pause alone changes no state.
        out.lose(f"postconfig step {step.type} (vdesk checks run on the desktop as the agent left it)",
                 None if step.type == "sleep" else JUDGING)
    for name, result, expected, options in file.evaluator.metrics():
        _metric_to_vdesk(name, result, expected, options, out)
    if file.evaluator.conj == "or" and len(out.data["checks"]) > 1:
        out.lose("conj 'or' (vdesk's checks must all pass)", JUDGING)
    if task.solution:
        out.data["solution"] = task.solution
    if task.wrong_solution:
        out.data["wrong_solution"] = task.wrong_solution
    if not out.data["checks"]:
        out.lose("no metric has a vdesk check: the task has none and will not load until one is added", JUDGING)
    return out


def _step_to_vdesk(step: StepSpec, out: Conversion) -> None:
    p = step.parameters
    setup = out.data["setup"]
    if step.type == "launch":
        setup.append({"start": _vdesk_command(p["command"], bool(p.get("shell")))})
    elif step.type in ("execute", "command") and not (p.get("until") or p.get("stdout") or p.get("stderr")):
        setup.append({"run": _vdesk_command(p["command"], bool(p.get("shell")))})
    elif step.type == "sleep":
        setup.append({"run": ["sleep", str(p["seconds"])]})
    elif step.type == "open":
        setup += [{"start": ["xdg-open", p["path"]]}, {"wait_window": PurePosixPath(p["path"]).name, "timeout": 120}]
    elif step.type == "chrome_open_tabs" and p.get("urls_to_open"):
        setup.append({"browser": p["urls_to_open"][0]})
        for url in p["urls_to_open"][1:]:
            out.lose(f"chrome_open_tabs address {url}", START)
    elif step.type in ("download", "upload_file"):
        for item in p.get("files", []):
            target = PurePosixPath(item["path"])
            setup.append({"upload": target.name, "to": str(target.parent)})
            out.lose(f"{item.get('url') or item.get('local_path')}: copy it beside the YAML as {target.name}", None)
    else:
        out.lose(f"{step.type} step {p}"[:160], START)


def _metric_to_vdesk(name: str, result: GetterSpec | None, expected: GetterSpec | None, options: dict[str, Any],
                     out: Conversion) -> None:
    rules = expected.settings.get("rules") if expected is not None and expected.type == "rule" else None
    kind = result.type if result is not None else None
    settings = result.settings if result is not None else {}
    checks = out.data["checks"]
    if name == "exact_match" and kind == "vm_command_line" and isinstance(rules, dict) and "expected" in rules:
        checks.append({"command": _command(settings), "stdout": str(rules["expected"])})
    elif name == "check_include_exclude" and kind == "vm_command_line" and isinstance(rules, dict):
        checks += [{"command": _command(settings), "stdout_contains": text} for text in rules.get("include", [])]
        if rules.get("exclude"):
            out.lose(f"check_include_exclude's exclude {rules['exclude']}", JUDGING)
    elif name == "file_contains" and kind == "vm_file" and isinstance(rules, dict) and not isinstance(settings.get("path"), list):
        checks += [{"file": settings["path"], "contains": text} for text in rules.get("expected", [])]
    else:
        out.lose(f"metric {name} on {kind or 'no'} getter", JUDGING)


def _command(settings: dict[str, Any]) -> Any:
    return _vdesk_command(settings["command"], bool(settings.get("shell")))


def _vdesk_command(command: Any, shell: bool) -> Any:
    """OSWorld's command as vdesk's: a list whose words start with ``~/`` becomes a shell string
    (vdesk runs lists as they are; OSWorld expands a leading ``~``)."""
    if isinstance(command, str) or shell:
        return command if isinstance(command, str) else " ".join(command)
    if not any(part.startswith("~/") for part in command):
        return command
    return " ".join('"$HOME"/' + shlex.quote(part[2:]) if part.startswith("~/") else shlex.quote(part) for part in command)


def to_osworld(task: Task, domain: str = "os") -> Conversion:
    """A vdesk task as OSWorld task data."""
    out = Conversion({"id": task.id, "snapshot": domain, "instruction": task.instruction, "source": "vdesk",
                      "config": [], "related_apps": [domain], "proxy": False, "evaluator": {},
                      **({"clock": task.desktop.clock} if task.desktop.clock else {})})
    for step in task.setup:
        if isinstance(step, StartStep):
            out.data["config"].append(_step("launch", step.start))
        elif isinstance(step, RunStep):
            out.data["config"].append(_step("execute", step.run))
        elif isinstance(step, UploadStep):
            path = f"{step.to.rstrip('/')}/{PurePosixPath(step.upload).name}"
            out.data["config"].append({"type": "upload_file", "parameters": {"files": [{"local_path": step.upload, "path": path}]}})
        elif isinstance(step, BrowserStep):
            out.data["config"].append({"type": "chrome_open_tabs", "parameters": {"urls_to_open": [step.browser]}})
        elif isinstance(step, WaitWindowStep):
            # Only when the agent's first look comes: the window comes all the same.
            out.lose(f"wait_window {step.wait_window!r} (OSWorld's steps do not wait for a window)", None)
        else:
            out.lose(f"setup step {type(step).__name__}", START)
    metrics = [converted for check in task.checks if (converted := _check_to_osworld(check, out)) is not None]
    if not metrics:
        out.lose("no check has an OSWorld metric: the evaluator is empty", JUDGING)
    else:
        out.data["evaluator"] = {"func": [m[0] for m in metrics], "result": [m[1] for m in metrics],
                                 "expected": [m[2] for m in metrics], "conj": "and"}
    for key in ("solution", "wrong_solution"):
        if getattr(task, key):
            out.lose(f"the {key} (BaseActions have no pyautogui spelling written by vdesk)", None)
    if task.judge_when_idle:
        out.lose(f"judge_when_idle {', '.join(task.judge_when_idle)} (OSWorld judges without waiting)", JUDGING)
    return out


def _step(kind: str, command: Any) -> dict[str, Any]:
    shell = isinstance(command, str)
    return {"type": kind, "parameters": {"command": command, **({"shell": True} if shell else {})}}


def _check_to_osworld(check: Any, out: Conversion) -> tuple[str, dict[str, Any], dict[str, Any]] | None:
    if isinstance(check, CommandCheck) and check.exit_code == 0 and not check.stdout_matches:
        getter = {"type": "vm_command_line", "command": check.command, **({"shell": True} if isinstance(check.command, str) else {})}
        if check.stdout is not None:
            return "exact_match", getter, {"type": "rule", "rules": {"expected": check.stdout}}
        if check.stdout_contains is not None:
            return "check_include_exclude", getter, {"type": "rule", "rules": {"include": [check.stdout_contains], "exclude": []}}
    if isinstance(check, FileCheck) and not check.image and check.sha256 is None and check.size is None:
        if check.equals is not None:
            return ("exact_match", {"type": "vm_command_line", "command": ["cat", check.file]},
                    {"type": "rule", "rules": {"expected": check.equals}})
        if check.contains is not None:
            return ("file_contains", {"type": "vm_file", "path": check.file, "dest": PurePosixPath(check.file).name},
                    {"type": "rule", "rules": {"expected": [check.contains]}})
    out.lose(f"{type(check).__name__} {check.model_dump(exclude_defaults=True)}"[:160], JUDGING)
    return None

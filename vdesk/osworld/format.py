"""OSWorld's task file as read (``evaluation_examples/examples/<domain>/<id>.json``).

    {"id": "…", "instruction": "…", "config": [{"type": "launch", "parameters": {…}}, …],
     "evaluator": {"func": "compare_table", "result": {"type": "vm_file", …},
                   "expected": {"type": "cloud_file", …}, "options": {…}, "postconfig": […]},
     "related_apps": […], "proxy": false, "snapshot": "…", "source": "…", "trajectory": "…"}

Keys vdesk does not read are kept (``extra="allow"``), so a file converts back unchanged. Some
keys are vdesk's own, which OSWorld ignores: ``solution``, the scripted agent's steps in one of
OSWorld's action spaces, ``{"pyautogui": ["pyautogui.click(10, 20)", …]}`` or
``{"computer_13": [[{"action_type": "CLICK", …}], …]}`` (one entry per step);
``wrong_solution``, written alike, a deliberately wrong one the task must fail (the
``wrong-solution`` agent plays it; vdesk's examples each carry one); and ``clock``, the
desktop's time at the start (``"YYYY-MM-DD HH:MM:SS"``, UTC; see :mod:`vdesk.clock`), so a task
whose dates are relative to "now" is judged on a known day.

:class:`OSWorldSpec` is what a vdesk :class:`~vdesk.harness.tasks.Task` carries of such a file:
the file itself, its domain, the local task-files folder its downloads come from, how the
files missing there are fetched (:mod:`vdesk.osworld.fetch`; None: they are not), and every
reason it is skipped (:class:`Skip`).
"""

from __future__ import annotations

from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

ActionSpace = Literal["pyautogui", "computer_13"]
ACTION_SPACES: tuple[ActionSpace, ...] = ("pyautogui", "computer_13")


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class StepSpec(_Open):
    """One ``config`` or ``postconfig`` step: ``_<type>_setup(**parameters)`` in the reference."""

    type: str = Field(min_length=1)
    parameters: dict[str, Any] = Field(default_factory=dict)


class GetterSpec(_Open):
    """One ``result`` or ``expected`` entry: the getter ``type`` and its own keys."""

    type: str = Field(min_length=1)

    @property
    def settings(self) -> dict[str, Any]:
        """The getter's keys besides ``type`` (path, dest, command, rules, …)."""
        return dict(self.model_extra or {})


Getters = Union[GetterSpec, list[Union[GetterSpec, None]], None]
Options = Union[dict[str, Any], list[Union[dict[str, Any], None]], None]


class EvaluatorSpec(_Open):
    """``evaluator``: one metric, or parallel lists of metrics, getters and options."""

    func: Union[str, list[str]]
    result: Getters = None
    expected: Getters = None
    options: Options = None
    conj: Literal["and", "or"] = "and"
    postconfig: list[StepSpec] = Field(default_factory=list)

    def metrics(self) -> list[tuple[str, GetterSpec | None, GetterSpec | None, dict[str, Any]]]:
        """Each metric with its result getter, expected getter and options, in order."""
        names = self.func if isinstance(self.func, list) else [self.func]
        results, expected, options = (_spread(self.result, len(names)), _spread(self.expected, len(names)),
                                      _spread(self.options, len(names)))
        return [(name, results[i], expected[i], dict(options[i] or {})) for i, name in enumerate(names)]


def _spread(value: Any, count: int) -> list[Any]:
    """A per-metric list: a list as is (padded with None), one value for a single metric."""
    if isinstance(value, list):
        return list(value) + [None] * (count - len(value))
    return [value] + [None] * (count - 1)


class OSWorldTask(_Open):
    """An OSWorld task file."""

    id: str = Field(min_length=1)
    instruction: str = Field(min_length=1)
    snapshot: str = ""
    source: str | list[str] = ""   # where the task came from: one address or several (never read)
    config: list[StepSpec] = Field(default_factory=list)
    related_apps: list[str] = Field(default_factory=list)
    evaluator: EvaluatorSpec
    proxy: bool = False
    fixed_ip: bool = False
    solution: dict[ActionSpace, list[Any]] | None = None
    wrong_solution: dict[ActionSpace, list[Any]] | None = None  # vdesk's own: a near miss the task must fail
    clock: str | None = None        # vdesk's own: the desktop's time at the start (UTC)

    def steps(self) -> list[StepSpec]:
        """Every setup and postconfig step."""
        return list(self.config) + list(self.evaluator.postconfig)


SkipKind = Literal["not read", "offline step", "step", "program", "proxy", "missing file", "metric", "option", "getter"]
SKIP_KINDS: tuple[SkipKind, ...] = ("not read", "offline step", "step", "program", "proxy", "missing file", "metric", "option",
                                    "getter")


class Skip(BaseModel):
    """One reason vdesk cannot run a task offline: its ``kind`` (what totals count by) and the
    sentence that names it (the step, file, metric, option or getter)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: SkipKind
    reason: str = Field(min_length=1)


FETCH_MAX_BYTES = 1 << 30     # one file; OSWorld's largest task files are a few hundred MB
FETCH_TIMEOUT = 30.0          # seconds for the connection, and for each read
FETCH_TOTAL_TIME = 1800.0     # seconds for one file, start to end


class FetchSettings(BaseModel):
    """How a run fetches the files its tasks lack (:mod:`vdesk.osworld.fetch`): the bounds of
    one file. A task holding None fetches nothing."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_bytes: int = Field(default=FETCH_MAX_BYTES, gt=0)
    timeout: float = Field(default=FETCH_TIMEOUT, gt=0)
    total_time: float = Field(default=FETCH_TOTAL_TIME, gt=0)


class OSWorldSpec(BaseModel):
    """What a vdesk task holds of an OSWorld task file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: OSWorldTask
    domain: str = Field(min_length=1)
    task_files: str | None = None   # the local folder in OSWorld's cache layout (cache/<task id>/…)
    fetch: FetchSettings | None = None  # files missing from it are fetched on the host before the run
    skips: tuple[Skip, ...] = ()    # every reason vdesk cannot run it offline; none: it runs

    @property
    def skip(self) -> str | None:
        """Every skip reason in one line, or None when the task runs."""
        return "; ".join(skip.reason for skip in self.skips) or None

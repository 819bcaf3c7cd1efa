"""The evaluation harness: tasks, an environment over a desktop, agents, the episode loop,
run folders, replays, suite runs and reports.

    from vdesk.harness import ScriptedAgent, load_task, run_episode

    result = run_episode(ScriptedAgent(), load_task("examples/suite/terminal-echo.yaml"), out=Path("runs/one"))
    print(result.status, result.success)

Model agents (:mod:`vdesk.harness.agents.models`) and the live viewer (:mod:`vdesk.viewer`)
are imported from their modules.

The names are imported on first use (as the package face does): importing one submodule, such
as :mod:`vdesk.harness.hosts`, runs this file, and an eager import of everything here would
make every module under the harness depend on every other one.
"""

from __future__ import annotations

from vdesk.lazy import lazy_face

# Where each name lives: its module is imported when the name is first asked for.
_HOMES = {
    "Agent": "vdesk.harness.agents", "AgentReply": "vdesk.harness.agents", "ReplayAgent": "vdesk.harness.agents",
    "ScriptedAgent": "vdesk.harness.agents", "make_agent": "vdesk.harness.agents",
    "CheckResult": "vdesk.harness.checks", "run_checks": "vdesk.harness.checks",
    "DesktopEnv": "vdesk.harness.env", "Observation": "vdesk.harness.env", "SetupError": "vdesk.harness.env",
    "EpisodeResult": "vdesk.harness.loop", "PausedEpisode": "vdesk.harness.loop", "Status": "vdesk.harness.episode",
    "run_episode": "vdesk.harness.loop",
    "Outcome": "vdesk.harness.record", "Run": "vdesk.harness.record", "RunError": "vdesk.harness.record",
    "StepRecord": "vdesk.harness.record", "frame_hash": "vdesk.harness.record", "load_run": "vdesk.harness.record",
    "ReplayComparison": "vdesk.harness.replay", "ReplayReport": "vdesk.harness.replay", "replay": "vdesk.harness.replay",
    "write_report": "vdesk.harness.report",
    "LocalPlacement": "vdesk.harness.runner", "run_suite": "vdesk.harness.runner",
    "Placement": "vdesk.harness.suite", "SuiteEvent": "vdesk.harness.suite", "SuiteSummary": "vdesk.harness.suite",
    "Task": "vdesk.harness.tasks", "TaskError": "vdesk.harness.tasks", "load_suite": "vdesk.harness.tasks",
    "load_task": "vdesk.harness.tasks", "parse_task": "vdesk.harness.tasks",
}

__all__ = sorted(_HOMES)


__getattr__, __dir__ = lazy_face(globals(), _HOMES, __all__)

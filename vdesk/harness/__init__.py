"""The evaluation harness: tasks, an environment over a desktop, agents, the episode loop,
run folders, replays, suite runs and reports.

    from vdesk.harness import ScriptedAgent, load_task, run_episode

    result = run_episode(ScriptedAgent(), load_task("examples/suite/terminal-echo.yaml"), out=Path("runs/one"))
    print(result.status, result.success)

Model agents (:mod:`vdesk.harness.agents.models`) and the live viewer (:mod:`vdesk.viewer`)
are imported from their modules.
"""

from vdesk.harness.agents import Agent, AgentReply, ReplayAgent, ScriptedAgent, make_agent
from vdesk.harness.checks import CheckResult, run_checks
from vdesk.harness.env import DesktopEnv, Observation, SetupError
from vdesk.harness.loop import EpisodeResult, PausedEpisode, Status, run_episode
from vdesk.harness.record import Outcome, Run, RunError, StepRecord, frame_hash, load_run
from vdesk.harness.replay import ReplayComparison, ReplayReport, replay
from vdesk.harness.report import write_report
from vdesk.harness.runner import LocalPlacement, run_suite
from vdesk.harness.suite import Placement, SuiteEvent, SuiteSummary
from vdesk.harness.tasks import Task, TaskError, load_suite, load_task, parse_task

__all__ = [
    "Agent", "AgentReply", "CheckResult", "DesktopEnv", "EpisodeResult", "LocalPlacement", "Observation",
    "Outcome", "PausedEpisode", "Placement", "ReplayAgent", "ReplayComparison", "ReplayReport", "Run", "RunError",
    "ScriptedAgent", "SetupError", "Status", "StepRecord", "SuiteEvent", "SuiteSummary", "Task", "TaskError",
    "frame_hash", "load_run", "load_suite", "load_task", "make_agent", "parse_task", "replay", "run_checks",
    "run_episode", "run_suite", "write_report",
]

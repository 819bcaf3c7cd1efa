"""Commands that run things over desktops: eval, replay, report, bench, demo."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Annotated, Optional
from urllib.parse import urlsplit

import typer

from vdesk.cli.options import OPTIONS, UNBOUNDED, note, say, width
from vdesk.errors import InvalidArgument

RUN = typer.Argument(metavar="RUN", show_default=False, help="An episode's run folder, or a suite run from `vdesk eval`.")
# What a model agent reads its endpoint and key from (see vdesk.harness.http_agents).
AGENT_SETTINGS = {"openai-chat": ("VDESK_CHAT_BASE_URL", None), "osworld-chat": ("VDESK_CHAT_BASE_URL", None),
                  "anthropic": ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"),
                  "openai": ("OPENAI_BASE_URL", "OPENAI_API_KEY")}
REACH_TIMEOUT = 5.0


def eval_command(
    suite: Annotated[Path, typer.Argument(metavar="SUITE", show_default=False,
                                          help="A folder of task files (YAML/JSON), or one task file.")],
    agent: Annotated[str, typer.Option(metavar="AGENT", help=(
        "scripted (each task's solution), wrong-solution (its wrong_solution, which the task must "
        "fail), replay:RUN, openai-chat, anthropic, openai, or osworld-chat (a chat model speaking "
        "--action-space)."))] = "scripted",
    parallel: Annotated[int, typer.Option(metavar="N", help="Episodes at a time, each on a fresh desktop.")] = 1,
    out_dir: Annotated[Path, typer.Option("--out", metavar="FOLDER", help=(
        "Run folder: one episode folder per task and results.json."))] = Path("runs/eval"),
    ray_address: Annotated[Optional[str], typer.Option("--ray", metavar="HOST:PORT", help=(
        "Put the desktops on the Ray cluster at this address (HOST:PORT of its head); an episode "
        "whose node dies runs once more on another node."))] = None,
    per_node: Annotated[Optional[int], typer.Option(metavar="N", help=(
        "With --ray: desktops at a time on one node (default: --parallel, within each node's vdesk_desktop)."))] = None,
    video: Annotated[bool, typer.Option("--video", help=(
        "Record each episode into video.mp4 in its folder (shown by `vdesk report`)."))] = False,
    domain: Annotated[Optional[list[str]], typer.Option("--domain", metavar="DOMAIN", help=(
        "OSWorld tasks: only this domain (repeatable)."))] = None,
    ids: Annotated[Optional[str], typer.Option("--ids", metavar="ID,ID,…", help=(
        "Only these task ids; an id no task has fails the run."))] = None,
    task_files: Annotated[Optional[Path], typer.Option("--task-files", metavar="DIR", help=(
        "OSWorld tasks: the folder their downloads come from, in OSWorld's cache layout "
        "(DIR/<task id>/…; default: SUITE/cache, else $VDESK_CACHE/osworld-files). A file not "
        "there is fetched into it on this machine (not in the desktop) unless --offline."))] = None,
    offline: Annotated[bool, typer.Option("--offline", help=(
        "Fetch nothing: a task whose files are not in the task-files folder is skipped."))] = False,
    fetch_limit: Annotated[int, typer.Option("--fetch-limit", metavar="MIB", help=(
        "The largest file fetched, in MiB; a larger one fails its task."))] = 1024,
    network: Annotated[bool, typer.Option("--network", help=(
        "Grant OSWorld tasks' desktops Docker's bridge network (the web): tasks with proxy: true "
        "run (without the reference's proxy) and live pages load. Off by default: desktops have "
        "no network."))] = False,
    meta: Annotated[Optional[str], typer.Option("--meta", metavar="FILE", help=(
        "OSWorld tree: the meta file listing domain → ids (default test_all.json)."))] = None,
    action_space: Annotated[Optional[str], typer.Option("--action-space", metavar="SPACE", help=(
        "pyautogui or computer_13: the space the agent speaks (the scripted agents play a task's "
        "solution written in it); also names the OSWorld results folder."))] = None,
    observation: Annotated[str, typer.Option(metavar="MODE", help=(
        "What the agent sees: screenshot, a11y_tree, screenshot_a11y_tree or som (apps image for the last three)."))] = "screenshot",
    screen: Annotated[str, typer.Option("--screen", metavar="WxH", help=(
        "OSWorld tasks: the desktop's screen size (the reference's is 1920x1080)."))] = "1920x1080",
    image: Annotated[Optional[str], typer.Option("--image", metavar="IMAGE", help=(
        "OSWorld tasks: the desktop image (default: osworld, OSWorld's machine; vdesk's own "
        "tasks keep their desktop.image)."))] = None,
    replace: Annotated[bool, typer.Option("--replace", help=(
        "--out holds a run already: remove that run first (only what a run writes there)."))] = False,
    append: Annotated[bool, typer.Option("--append", help=(
        "--out holds a run already: keep its episodes and add these (a task run again replaces its own)."))] = False,
    repeats: Annotated[int, typer.Option("--repeats", metavar="N", help=(
        "Run each task N times (a group of rollouts), into TASK.r1 … TASK.rN."))] = 1,
    fork_after_setup: Annotated[bool, typer.Option("--fork-after-setup", help=(
        "Set each task up once, checkpoint that desktop, and start each of its episodes from a "
        "fork of it (the engine must checkpoint: see docs/forks.md); the setup's and each fork's "
        "times are in the results."))] = False,
) -> None:
    """Run a suite of tasks with an agent; exit 1 unless every task that ran passed
    (tasks skipped for what they need offline are listed with their reasons)."""
    from vdesk.harness.env import OBSERVATIONS

    if observation not in OBSERVATIONS:
        raise InvalidArgument(f"--observation {observation!r}: choose one of {', '.join(OBSERVATIONS)}")
    if parallel < 1:
        raise InvalidArgument(f"--parallel must be at least 1, got {parallel}")
    if per_node is not None and per_node < 1:
        raise InvalidArgument(f"--per-node must be at least 1, got {per_node}")
    if per_node is not None and ray_address is None:
        raise InvalidArgument("--per-node needs --ray")
    if replace and append:
        raise InvalidArgument("--replace and --append say two things: give one")
    if fetch_limit < 1:
        raise InvalidArgument(f"--fetch-limit must be at least 1 (MiB), got {fetch_limit}")
    if not 1 <= repeats <= 1000:
        raise InvalidArgument(f"--repeats must be from 1 to 1000, got {repeats}")
    from rich.console import Console

    from vdesk.cli.console import results_table, suite_progress, summary_table
    from vdesk.harness.folders import Existing, check_run_folder
    from vdesk.harness.runner import LocalPlacement, check_observation, run_suite
    from vdesk.osworld.fetch import FetchSettings
    from vdesk.osworld.format import ACTION_SPACES
    from vdesk.osworld.loader import load_tasks

    if action_space is not None and action_space not in ACTION_SPACES:
        raise InvalidArgument(f"--action-space must be one of {', '.join(ACTION_SPACES)}, got {action_space!r}")
    existing: Existing = "replace" if replace else "append" if append else "refuse"
    check_run_folder(out_dir, existing)  # before any desktop starts or the bar shows
    fetch = None if offline else FetchSettings(max_bytes=fetch_limit << 20)
    tasks = load_tasks(suite, domains=domain, ids=ids.split(",") if ids else None, task_files=task_files,
                       meta=meta, screen=screen, image=image, fetch=fetch, network=network)
    check_observation(tasks, observation)  # before any desktop, and before the progress bar
    agents = lambda: agent_of(agent, action_space)  # noqa: E731
    check_agent(agent, agents())  # a bad or unreachable agent fails here, before any desktop starts
    placement = LocalPlacement(observation)
    if ray_address is not None:
        if observation != "screenshot":
            raise InvalidArgument("--observation with --ray is not supported yet: cluster desktops are observed by screenshot")
        from vdesk.cluster.placement import ClusterPlacement

        # An unreachable cluster (or no Ray installed) fails here, before the progress bar.
        placement = ClusterPlacement.join(ray_address, per_node)
    if fork_after_setup:
        placement.check_forks()  # an engine that cannot checkpoint: one line, before the bar
    results = out_dir / "results.json"
    total = len(tasks) * repeats
    with suite_progress(Console(stderr=True), total) as (progress, on_event):
        try:
            summary = run_suite(tasks, agents, out=out_dir, parallel=parallel, on_event=on_event,
                                placement=placement, video=video, observation=observation,
                                existing=existing, progress=note, repeats=repeats,
                                fork_after_setup=fork_after_setup, action_space=action_space)
        except KeyboardInterrupt:
            raise KeyboardInterrupt(f"interrupted: {progress.done} of {total} done, results in {results}") from None
    say(summary_table(summary))
    for table in summary.results:
        say(results_table(table, out_dir))
    say(f"results: {results}")
    ran = {task.id for task in tasks}  # with --append the summary holds earlier episodes too
    mine = [o for o in summary.episodes if (o.repeat_of or o.task_id) in ran]
    if sum(o.success or o.status == "skipped" for o in mine) != len(ran) * repeats:
        raise typer.Exit(1)


def agent_of(name: str, action_space: str | None):  # type: ignore[no-untyped-def]
    """The agent called ``name``, speaking ``action_space`` when it is the scripted agent or
    ``osworld-chat`` (the other model agents speak their own formats)."""
    from vdesk.harness.agents import make_agent

    return make_agent(name, action_space)


def check_agent(name: str, agent: object) -> None:
    """A model agent's endpoint answers and its key is set, or one line says which setting to fix."""
    if name not in AGENT_SETTINGS:
        return
    url_variable, key_variable = AGENT_SETTINGS[name]
    settings = getattr(agent, "settings")
    if key_variable and not settings.api_key:
        raise InvalidArgument(f"agent {name}: no API key: set {key_variable}")
    where = urlsplit(settings.base_url)
    port = where.port or (443 if where.scheme == "https" else 80)
    try:
        socket.create_connection((where.hostname or "", port), timeout=REACH_TIMEOUT).close()
    except OSError as error:
        raise InvalidArgument(f"agent {name}: nothing answers at {settings.base_url} "
                              f"({error.strerror or error}): set {url_variable} to the model's endpoint") from None


def replay_command(
    run_dir: Annotated[Path, RUN],
    out_dir: Annotated[Optional[Path], typer.Option("--out", metavar="FOLDER", help=(
        "Where the replay's run folders go (default: RUN.replay)."))] = None,
    parallel: Annotated[int, typer.Option(metavar="N", help="Episodes at a time.")] = 1,
    replace: Annotated[bool, typer.Option("--replace", help=(
        "--out holds a run already: remove that run first (the default folder is always replaced)."))] = False,
) -> None:
    """Re-execute recorded runs on fresh desktops; exit 1 unless each matches its original."""
    if parallel < 1:
        raise InvalidArgument(f"--parallel must be at least 1, got {parallel}")
    from rich.console import Console

    from vdesk.cli.console import replay_table, suite_progress
    from vdesk.harness.folders import check_run_folder
    from vdesk.harness.record import episode_folders
    from vdesk.harness.replay import replay

    if out_dir is not None:
        check_run_folder(out_dir, "replace" if replace else "refuse")  # before the bar shows

    total = len(episode_folders(run_dir))
    with suite_progress(Console(stderr=True), total, label="replay") as (progress, on_event):
        try:
            report = replay(run_dir, out=out_dir, parallel=parallel, on_event=on_event, replace=replace)
        except KeyboardInterrupt:
            raise KeyboardInterrupt(f"interrupted: {progress.done} of {total} replayed") from None
    say(replay_table(report))
    if not report.matches:
        raise typer.Exit(1)


def report_command(run_dir: Annotated[Path, RUN]) -> None:
    """Write a static HTML report of a run: film strips with the actions drawn, and a GIF per episode."""
    from vdesk.harness.report import write_report

    if not run_dir.is_dir():
        raise InvalidArgument(f"no run folder {str(run_dir)!r}")
    say(f"report: {write_report(run_dir)}")


def bench(
    baseline: Annotated[bool, typer.Option("--baseline", help="Also time the naive ways, in the same run, and print ratios.")] = False,
    repeats: Annotated[int, typer.Option(metavar="N", help=(
        "Samples per measurement (the README's figures take 20)."))] = 5,
    desktops: Annotated[int, typer.Option(metavar="N", help="Desktops to bring up at once.")] = 2,
    fleet: Annotated[bool, typer.Option("--fleet", help=(
        "Measure capacity instead: desktops up per second and steps per second for 1, 2, 4, … "
        "desktops at once, memory per desktop, and what a node of a given size holds."))] = False,
    counts: Annotated[str, typer.Option(metavar="N,N,…", help="With --fleet: desktops at once, comma-separated.")] = "1,2,4,8,16",
    seconds: Annotated[float, typer.Option(metavar="SECONDS", help="With --fleet: seconds of steps for each count.")] = 5.0,
    ray_address: Annotated[Optional[str], typer.Option("--ray", metavar="HOST:PORT", help=(
        "With --fleet: also measure through the Ray cluster at this address (HOST:PORT of its head)."))] = None,
    local: Annotated[bool, typer.Option(help="With --fleet: measure desktops on this machine too.")] = True,
    plot: Annotated[Optional[Path], typer.Option(metavar="PNG", help=(
        "With --fleet: draw the curve into this PNG, e.g. images/fleet.png."))] = None,
    apps: Annotated[bool, typer.Option("--apps", help="Also measure the apps desktop (apps_* rows).")] = False,
    forks: Annotated[bool, typer.Option("--forks", help=(
        "Also measure checkpoints and forks (fork_* rows; with --apps, of Chromium too)."))] = False,
    osworld: Annotated[bool, typer.Option("--osworld", help=(
        "Also measure the osworld desktops, GNOME and openbox (osworld_* and osworld_openbox_* rows): up, "
        "idle memory and CPU, a step, the browser, Writer and Thunderbird open, a fork with Chrome open."))] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Measure speed and memory on real desktops (medians and p90); --fleet measures capacity."""
    from rich.console import Console

    out = Console(width=width() or UNBOUNDED)  # in a file or a pipe, nothing is wrapped
    if fleet:
        from vdesk.bench.fleet import parse_counts, plot as draw_fleet, render as render_fleet, run_fleet

        fleet_report = run_fleet(parse_counts(counts), seconds=seconds, address=ray_address, local=local, progress=note)
        if plot is not None:
            note(f"curve written to {draw_fleet(fleet_report, plot)}")
        say(fleet_report.to_json()) if as_json else out.print(render_fleet(fleet_report, out.width))
        return
    from vdesk.bench.speed import render, run_bench

    report = run_bench(baseline=baseline, repeats=repeats, desktops=desktops, progress=note)
    if apps or osworld or forks:
        from dataclasses import replace

        from vdesk import engine as engines

        client, extra, few = engines.connect(OPTIONS.engine), [], min(repeats, 10)
        if apps:
            from vdesk.bench.apps import apps_measurements

            extra += apps_measurements(client, few, desktops, note)
        if osworld:
            from vdesk.bench.osworld import osworld_measurements

            extra += osworld_measurements(client, few, note)
        if forks:
            from vdesk.bench.forks import fork_measurements

            extra += fork_measurements(client, few, note, apps=apps)
        report = replace(report, measurements=report.measurements + extra)
    say(report.to_json()) if as_json else out.print(render(report))


def demo(
    out_dir: Annotated[Path, typer.Option("--out", metavar="FOLDER", help="Folder for the frames and the action log.")] = Path("demo-output"),
    picture: Annotated[Optional[Path], typer.Option(metavar="PNG", help=(
        "Also save the final frame here (e.g. for the README)."))] = None,
) -> None:
    """Bring up a desktop, drive it, save what it saw, tear it down."""
    from vdesk.demo import run_demo

    run_demo(out_dir, picture, say=say)


COMMANDS = {"eval": eval_command, "replay": replay_command, "report": report_command, "bench": bench, "demo": demo}

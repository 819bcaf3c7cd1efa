"""The ``vdesk`` command line: parses arguments, calls the Python API, prints.

Errors are one line on stderr and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from vdesk import engine as engines, images as desktop_image
from vdesk.adapters import Format, to_actions
from vdesk.desktop import VNC_TARGET, Desktop, list_desktops, parse_size, prune_desktops, remove_desktops
from vdesk.errors import InvalidAction, VdeskError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Disposable, sandboxed Linux desktops for GUI agents.")
out = Console()
err = Console(stderr=True)
DEFAULT_TTL = 2 * 3600


@dataclass
class Options:
    """Options that apply to every command."""

    engine: str | None = None


_options = Options()


@app.callback()
def _global_options(
    engine: Annotated[Optional[str], typer.Option(envvar="VDESK_ENGINE", help=(
        "Docker engine: a DOCKER_HOST-style URL (unix://, tcp://, ssh://) or a Docker context name."))] = None,
) -> None:
    _options.engine = engine


def main() -> None:
    """Console entry point: run the app, turning vdesk's errors into one clear line."""
    try:
        app()
    except VdeskError as error:
        err.print(f"[bold red]vdesk:[/] {error}", highlight=False, markup=True, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        err.print("vdesk: interrupted")
        sys.exit(130)


@app.command()
def build(
    apps: Annotated[bool, typer.Option("--apps", help="Also build the apps image (browser, office suite, ...).")] = False,
) -> None:
    """Build the desktop image (reuses what an earlier build made)."""
    client = engines.connect(_options.engine)
    for image in ("lean", "apps") if apps else ("lean",):
        if desktop_image.is_current(client, image):
            out.print(f"{desktop_image.resolve(image)} is up to date")
            continue
        with err.status(f"building the {image} desktop image") as status:
            desktop_image.ensure(client, image, progress=lambda line: (status.update(line), err.print(line, highlight=False)))


@app.command()
def up(
    name: Annotated[Optional[str], typer.Option(help="Desktop name (default: vdesk-<random>).")] = None,
    size: Annotated[str, typer.Option(help="Logical screen size WIDTHxHEIGHT.")] = "1280x800",
    scale: Annotated[float, typer.Option(help="HiDPI scale of the framebuffer.")] = 1.0,
    ttl: Annotated[float, typer.Option(help="Seconds until the desktop stops itself (0: never).")] = DEFAULT_TTL,
    network: Annotated[str, typer.Option(help="'none' (default) or 'bridge'.")] = "none",
    apps: Annotated[bool, typer.Option("--apps", help="The apps image: a browser, an office suite, a taskbar, ...")] = False,
    clock: Annotated[Optional[str], typer.Option(help="The desktop's time at the start, 'YYYY-MM-DD HH:MM:SS' (UTC; apps image).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Start a desktop that outlives this command (until `vdesk down` or its TTL)."""
    desktop = Desktop.up(parse_size(size), scale=scale, name=name, ttl=ttl or None, lease=False, engine=_options.engine,
                         network=network, image="apps" if apps else "lean", clock=clock)  # type: ignore[arg-type]
    try:
        facts = {"name": desktop.name, "vnc": desktop.vnc_address if network == "bridge" else f"vdesk vnc {desktop.name}",
                 "password": desktop.vnc_password, "size": size, "ttl_seconds": ttl}
    finally:
        desktop.close()
    if as_json:
        print(json.dumps(facts))
    else:
        out.print(f"[bold]{facts['name']}[/]  VNC: {facts['vnc']}  password: {facts['password']}", highlight=False)


@app.command("ls")
def list_command(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """List vdesk desktops."""
    desktops = list_desktops(_options.engine)
    if as_json:
        print(json.dumps([{"name": d.name, "id": d.id, "status": d.status, "size": f"{d.size[0]}x{d.size[1]}",
                           "scale": d.scale, "created": d.created.isoformat(), "owner": d.owner,
                           "leased": d.leased, "ttl_left": d.ttl_left, "vnc": d.vnc_address} for d in desktops]))
        return
    table = Table("NAME", "STATUS", "SIZE", "CREATED", "TTL LEFT", "OWNER", "VNC")
    for d in desktops:
        ttl = "lease" if d.leased else ("-" if d.ttl_left is None else f"{d.ttl_left / 60:.0f} min")
        size = f"{d.size[0]}x{d.size[1]}" + (f"@{d.scale:g}" if d.scale != 1 else "")
        table.add_row(d.name, d.status, size, d.created.strftime("%Y-%m-%d %H:%M:%S"), ttl, d.owner, d.vnc_address or "")
    out.print(table)


@app.command()
def shot(
    name: str,
    output: Annotated[Path, typer.Option("-o", "--output", help="Image file (.png or .jpg).")] = Path("shot.png"),
    size: Annotated[Optional[str], typer.Option(help="Resize to WIDTHxHEIGHT.")] = None,
) -> None:
    """Save a screenshot of a desktop."""
    with Desktop.attach(name, engine=_options.engine) as desktop:
        frame = desktop.screenshot(parse_size(size) if size else None)
    frame.save(output)
    out.print(f"saved {output} ({frame.width}x{frame.height})")


@app.command("exec")
def exec_command(
    name: str,
    actions: Annotated[Optional[list[str]], typer.Argument(help="Actions as JSON (or model output with --format).")] = None,
    file: Annotated[Optional[str], typer.Option("-f", "--file", help="Read a JSON list of actions from FILE ('-': stdin).")] = None,
    format: Annotated[str, typer.Option(help="base (BaseAction JSON), uitars, anthropic or openai.")] = "base",
    settle: Annotated[bool, typer.Option(help="Return once the screen has stopped changing.")] = False,
) -> None:
    """Execute actions on a desktop and print the result as JSON (exit 1 when the batch failed)."""
    if format not in ("base", "uitars", "anthropic", "openai"):
        raise InvalidAction(f"--format must be base, uitars, anthropic or openai, got {format!r}")
    payloads = list(actions or [])
    if file is not None:
        payloads.append(_read_actions_file(file))
    if not payloads:
        raise InvalidAction("no actions given: pass ACTION arguments or -f FILE")
    with Desktop.attach(name, engine=_options.engine) as desktop:
        batch = [a for p in payloads for a in _parse_payload(format, p, desktop)]  # type: ignore[arg-type]
        result = desktop.execute(batch, settle=settle)
    print(result.model_dump_json(exclude_none=True))
    if result.status != "success":
        raise typer.Exit(1)


def _read_actions_file(file: str) -> str:
    try:
        return sys.stdin.read() if file == "-" else Path(file).read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidAction(f"cannot read actions from {file!r}: {getattr(error, 'strerror', None) or error}") from None


def _parse_payload(format: Format, payload: str, desktop: Desktop) -> list:
    try:
        return to_actions(format, payload, desktop.operator.image)
    except json.JSONDecodeError as error:
        raise InvalidAction(f"not valid JSON ({error.msg} at line {error.lineno} column {error.colno}): {payload[:80]!r}") from None
    except RecursionError:
        raise InvalidAction(f"actions nested too deeply to read: {payload[:80]!r}") from None


@app.command()
def run(
    name: str,
    command: Annotated[list[str], typer.Argument(help="The program and its arguments (after --).")],
    wait: Annotated[bool, typer.Option(help="Wait for it and print its output.")] = False,
    timeout: Annotated[float, typer.Option(help="Seconds to wait with --wait.")] = 60.0,
) -> None:
    """Start a program in a desktop (returns at once unless --wait)."""
    with Desktop.attach(name, engine=_options.engine) as desktop:
        result = desktop.run(command, wait=wait, timeout=timeout)
    if wait:
        sys.stdout.write(result.stdout)
        sys.stderr.write(result.stderr)
        raise typer.Exit(result.returncode)


@app.command()
def down(
    names: Annotated[Optional[list[str]], typer.Argument(help="Desktops to remove.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Remove every vdesk desktop.")] = False,
) -> None:
    """Remove desktops."""
    if all_:
        names = [d.name for d in list_desktops(_options.engine)]
    elif not names:
        raise InvalidAction("name the desktops to remove, or pass --all")
    for removed in remove_desktops(names or [], _options.engine):
        out.print(f"removed {removed}")


@app.command()
def prune() -> None:
    """Remove expired, stopped and orphaned desktops (and nothing else)."""
    removed = prune_desktops(_options.engine)
    for name in removed:
        out.print(f"removed {name}")
    if not removed:
        out.print("nothing to prune")


@app.command()
def vnc(name: str, port: Annotated[int, typer.Option(help="Local port on 127.0.0.1 (0: any free one).")] = 0) -> None:
    """Forward a local port on 127.0.0.1 to a desktop's VNC server until Ctrl-C."""
    from vdesk.tunnel import Tunnel

    with Desktop.attach(name, engine=_options.engine) as desktop:
        tunnel = Tunnel(desktop.client.api, desktop.id, VNC_TARGET, tcp_port=port)
        try:
            out.print(f"VNC of {name}: {tunnel.address}  password: {desktop.vnc_password}  (Ctrl-C to stop)", highlight=False)
            while desktop.is_alive():
                time.sleep(1)
        finally:
            tunnel.close()


@app.command()
def bench(
    baseline: Annotated[bool, typer.Option(help="Also time the naive ways, in the same run, and print ratios.")] = False,
    repeats: Annotated[int, typer.Option(help="Samples per measurement.")] = 30,
    desktops: Annotated[int, typer.Option(help="Desktops to bring up at once.")] = 10,
    fleet: Annotated[bool, typer.Option(help=(
        "Measure capacity instead: desktops up per second and steps per second for 1, 2, 4, … "
        "desktops at once, memory per desktop, and what a node of a given size holds."))] = False,
    counts: Annotated[str, typer.Option(help="With --fleet: desktops at once, comma-separated.")] = "1,2,4,8,16",
    seconds: Annotated[float, typer.Option(help="With --fleet: seconds of steps for each count.")] = 5.0,
    ray_address: Annotated[Optional[str], typer.Option("--ray", help=(
        "With --fleet: also measure through the Ray cluster at this address (HOST:PORT of its head)."))] = None,
    local: Annotated[bool, typer.Option(help="With --fleet: measure desktops on this machine too.")] = True,
    plot: Annotated[Optional[Path], typer.Option(help="With --fleet: draw the curve into this PNG, e.g. images/fleet.png.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Measure speed and memory on real desktops (medians and p90); --fleet measures capacity."""
    progress = lambda line: err.print(line, highlight=False)  # noqa: E731
    if fleet:
        from vdesk.fleet import parse_counts, plot as draw_fleet, render as render_fleet, run_fleet

        fleet_report = run_fleet(parse_counts(counts), seconds=seconds, address=ray_address, local=local,
                                 progress=progress)
        if plot is not None:
            err.print(f"curve written to {draw_fleet(fleet_report, plot)}")
        print(fleet_report.to_json()) if as_json else out.print(render_fleet(fleet_report))
        return
    from vdesk.bench import render, run_bench

    report = run_bench(baseline=baseline, repeats=repeats, desktops=desktops, progress=progress)
    print(report.to_json()) if as_json else out.print(render(report))


@app.command()
def demo(
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for the frames and the action log.")] = Path("demo-output"),
    picture: Annotated[Optional[Path], typer.Option(help="Also save the final frame here (e.g. for the README).")] = None,
) -> None:
    """Bring up a desktop, drive it, save what it saw, tear it down."""
    from vdesk.demo import run_demo

    run_demo(out_dir, picture, say=lambda line: out.print(line, highlight=False))


@app.command("eval")
def eval_command(
    suite: Annotated[Path, typer.Argument(help="A folder of task files (YAML/JSON), or one task file.")],
    agent: Annotated[str, typer.Option(help="scripted, replay:RUN, openai-chat, anthropic or openai.")] = "scripted",
    parallel: Annotated[int, typer.Option(help="Episodes at a time, each on a fresh desktop.")] = 1,
    out_dir: Annotated[Path, typer.Option("--out", help="Run folder: one episode folder per task and results.json.")] = Path("runs/eval"),
    ray_address: Annotated[Optional[str], typer.Option("--ray", help=(
        "Put the desktops on the Ray cluster at this address (HOST:PORT of its head); an episode "
        "whose node dies runs once more on another node."))] = None,
    per_node: Annotated[Optional[int], typer.Option(help=(
        "With --ray: desktops at a time on one node (default: --parallel, within each node's vdesk_desktop)."))] = None,
) -> None:
    """Run a suite of tasks with an agent; exit 1 unless every task passed."""
    from vdesk.harness.agents import make_agent
    from vdesk.harness.console import suite_progress, summary_table
    from vdesk.harness.runner import join_cluster, run_suite
    from vdesk.harness.tasks import load_suite

    tasks = load_suite(suite)
    make_agent(agent)  # a bad --agent fails here, before any desktop starts
    if per_node is not None and ray_address is None:
        raise InvalidAction("--per-node needs --ray")
    if ray_address is not None:
        join_cluster(ray_address)  # an unreachable cluster fails here, before the progress bar
    with suite_progress(err, len(tasks)) as on_event:
        summary = run_suite(tasks, lambda: make_agent(agent), out=out_dir, parallel=parallel, on_event=on_event,
                            ray_address=ray_address, per_node=per_node)
    out.print(summary_table(summary))
    out.print(f"results: {out_dir / 'results.json'}", highlight=False)
    if summary.successes != len(tasks):
        raise typer.Exit(1)


@app.command("replay")
def replay_command(
    run_dir: Annotated[Path, typer.Argument(help="An episode's run folder, or a suite run from `vdesk eval`.")],
    out_dir: Annotated[Optional[Path], typer.Option("--out", help="Where the replay's run folders go (default: RUN.replay).")] = None,
    parallel: Annotated[int, typer.Option(help="Episodes at a time.")] = 1,
) -> None:
    """Re-execute recorded runs on fresh desktops; exit 1 unless each matches its original."""
    from vdesk.harness.console import replay_table, suite_progress
    from vdesk.harness.record import episode_folders
    from vdesk.harness.replay import replay

    with suite_progress(err, len(episode_folders(run_dir))) as on_event:
        report = replay(run_dir, out=out_dir, parallel=parallel, on_event=on_event)
    out.print(replay_table(report))
    if not report.matches:
        raise typer.Exit(1)


@app.command("report")
def report_command(
    run_dir: Annotated[Path, typer.Argument(help="An episode's run folder, or a suite run from `vdesk eval`.")],
) -> None:
    """Write a static HTML report of a run: film strips with the actions drawn, and a GIF per episode."""
    from vdesk.harness.report import write_report

    path = write_report(run_dir)
    out.print(f"report: {path}", highlight=False)


@app.command("view")
def view_command(
    name: str,
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 for the page (0: any free one).")] = 0,
) -> None:
    """Watch a desktop live in the browser (noVNC on 127.0.0.1, the desktop's VNC password required) until Ctrl-C."""
    from vdesk.harness.view import start_viewer

    with Desktop.attach(name, engine=_options.engine) as desktop, start_viewer(desktop, port=port) as viewer:
        out.print(f"open {viewer.url}\npassword: {viewer.password}  (Ctrl-C to stop)", highlight=False)
        while desktop.is_alive() and viewer.running:
            time.sleep(1)


if __name__ == "__main__":
    main()

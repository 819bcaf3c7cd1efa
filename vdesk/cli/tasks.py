"""``vdesk tasks``: reading task files without running them — convert between OSWorld's JSON
and vdesk's YAML, and check what tasks need."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from vdesk.cli.options import columns, say
from vdesk.errors import InvalidArgument

if TYPE_CHECKING:
    from vdesk.osworld.needs import DomainTotals

app = typer.Typer(add_completion=False, rich_markup_mode=None, no_args_is_help=True,
                  help="Check task files and convert between OSWorld's JSON and vdesk's YAML.")

PATH = typer.Argument(metavar="PATH", show_default=False, help=(
    "A task file (OSWorld JSON or vdesk YAML/JSON), a folder of them, or an evaluation_examples tree."))


@app.command("check")
def check_command(
    path: Annotated[Path, PATH],
    task_files: Annotated[Optional[Path], typer.Option("--task-files", metavar="DIR", help=(
        "The task-files folder (OSWorld's cache layout) the downloads are looked up in (default: "
        "PATH/cache, else $VDESK_CACHE/osworld-files)."))] = None,
    offline: Annotated[bool, typer.Option("--offline", help=(
        "As `vdesk eval --offline`: a file not in the folder is a skip reason, not one to fetch."))] = False,
    network: Annotated[bool, typer.Option("--network", help=(
        "As `vdesk eval --network`: tasks with proxy: true would run."))] = False,
    as_json: Annotated[bool, typer.Option("--json", help=(
        'Print JSON instead of tables: {"tasks": [...], "totals": [...], '
        '"errors": [{"file": ..., "error": ...}, ...]}.'))] = False,
) -> None:
    """Validate tasks and list what each needs (apps, files, network) and every reason it would
    be skipped, without running them; then the totals per domain (runs, skipped, tasks per kind
    of reason). Every file gets its verdict: a file that is wrong (not valid JSON, a typo in a
    metric, getter, option, step or key) is listed with its errors, and the rest are still
    checked. A field vdesk cannot model is that task's skip reason. Exit 1 when a file is wrong
    or a task would be skipped. OSWorld tasks run on the osworld image unless `vdesk eval
    --image` picks another. Files `vdesk eval` would fetch are listed as such; nothing is
    fetched here."""
    from dataclasses import asdict

    from vdesk.osworld.extension import spec_of
    from vdesk.osworld.fetch import FetchSettings
    from vdesk.osworld.loader import read_tasks
    from vdesk.osworld.needs import WILL_FETCH, needs_of, totals

    read = read_tasks(path, task_files=task_files, fetch=None if offline else FetchSettings(), network=network)
    tasks = read.tasks
    found = [needs_of(task) for task in tasks]
    fetching = sorted({f for needs in found if not needs.skip for f in needs.files if f.endswith(WILL_FETCH)})
    counted = totals(found)
    if as_json:
        say(json.dumps({"tasks": [asdict(needs) for needs in found], "totals": [asdict(row) for row in counted],
                        "errors": [{"file": str(file), "error": error} for file, error in read.errors]}, indent=2))
    else:
        rows = [[n.task_id, n.kind, ", ".join(n.apps) or "-", "; ".join(n.files) or "-", ", ".join(n.network) or "none",
                 n.skip or "runs"] for n in found]
        say(columns(["TASK", "KIND", "APPS", "FILES", "NETWORK", "VERDICT"], rows))
        say("")
        say(totals_table(counted))
        if fetching:
            folders = sorted({spec.task_files or "" for spec in map(spec_of, tasks) if spec is not None})
            say(f"will fetch {len(fetching)} file{'' if len(fetching) == 1 else 's'} into {', '.join(folders)} "
                "(vdesk eval fetches them; --offline would skip their tasks)")
        if read.errors:  # each names its file and every problem in it
            say("")
            say(f"{len(read.errors)} wrong file{'' if len(read.errors) == 1 else 's'}, not read:")
            for _, error in read.errors:
                say(f"  {error}")
    if read.errors or any(needs.skip for needs in found):
        raise typer.Exit(1)


def totals_table(counted: list[DomainTotals]) -> str:
    """The per-domain totals as columns: a column per kind of reason some task has."""
    kinds = [kind for kind in (counted[-1].by_reason if counted else {}) if counted[-1].by_reason[kind]]
    return columns(["DOMAIN", "TASKS", "RUNS", "SKIPPED", *(kind.upper() for kind in kinds)],
                   [[row.domain, str(row.tasks), str(row.runs), str(row.skipped),
                     *(str(row.by_reason[kind]) for kind in kinds)] for row in counted])


@app.command("convert")
def convert_command(
    path: Annotated[Path, typer.Argument(metavar="FILE", show_default=False, help="One task file, either kind.")],
    out: Annotated[Optional[Path], typer.Option("--out", metavar="FILE", help=(
        "Where to write the other spelling (default: print it)."))] = None,
    domain: Annotated[str, typer.Option(metavar="DOMAIN", help="For a vdesk task: the OSWorld domain (snapshot).")] = "os",
    lossy: Annotated[bool, typer.Option("--lossy", help=(
        "Write it even when what the other spelling cannot carry changes the task's outcome."))] = False,
) -> None:
    """Turn an OSWorld task file into vdesk's YAML, or a vdesk task into OSWorld's JSON, and say
    what the other spelling cannot carry. When that changes the outcome (a setup step the task
    would start without, a postconfig step or metric it would be judged without), nothing is
    written and the exit code is 2, unless --lossy."""
    import yaml

    from vdesk.cli.options import note
    from vdesk.errors import TaskError
    from vdesk.osworld.convert import to_osworld, to_vdesk
    from vdesk.osworld.extension import spec_of
    from vdesk.osworld.loader import load_tasks

    if not path.is_file():
        raise InvalidArgument(f"{path}: convert takes one task file")
    (task,) = load_tasks(path, strict=True)
    conversion = to_vdesk(task) if spec_of(task) is not None else to_osworld(task, domain)
    for loss in conversion.not_carried:
        note(f"not carried: {loss.item}" + (f" (changes {loss.changes})" if loss.changes else ""))
    changed = conversion.changed
    if changed and not lossy:
        what = " and ".join(sorted({loss.changes for loss in changed if loss.changes}))
        parts = f"{len(changed)} part{'' if len(changed) == 1 else 's'}"
        raise TaskError(f"{path}: not converted: leaving out {parts} (above) changes {what}; --lossy writes it anyway")
    text = (yaml.safe_dump(conversion.data, sort_keys=False, allow_unicode=True) if spec_of(task) is not None
            else json.dumps(conversion.data, indent=2) + "\n")
    if out is not None:
        out.write_text(text, encoding="utf-8")
        say(f"written: {out}")
    else:
        say(text.rstrip("\n"))

"""The command tree: the ``vdesk`` app, its global options, and where each command lives.

Command modules import what they drive inside each command, so ``vdesk --help`` loads no
Docker, image or VNC library and a command loads only what it uses.
"""

from __future__ import annotations

import shlex
from typing import Annotated, Optional

import typer
import typer.core
from typer._click.exceptions import NoSuchOption, UsageError  # typer's own click

from vdesk.cli import desktops, drive, forks, observe, protocols, runs, tasks
from vdesk.cli.options import OPTIONS

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Disposable, sandboxed Linux desktops for GUI agents.")


class Command(typer.core.TyperCommand):
    """A command whose help names arguments by their metavar alone (``NAME``, ``[ACTION]...``),
    without type labels such as ``<str>`` or braces such as ``{NAME}``."""

    def collect_usage_pieces(self, ctx: typer.Context) -> list[str]:  # type: ignore[override]
        pieces = [self.options_metavar] if self.options_metavar else []
        return pieces + [_argument_name(p) for p in self.get_params(ctx) if p.param_type_name == "argument"]

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:  # type: ignore[override]
        given = list(args)  # the parser consumes ``args``
        try:
            return super().parse_args(ctx, args)
        except NoSuchOption:
            program = _program_words(self, ctx, given)
            if program is None:
                raise
            option = next(word for word in program[1] if word.startswith("-"))
            raise UsageError(  # `vdesk run NAME xterm -geometry 80x24`
                f"{option}: options after the program need `--` before the program: "
                f"vdesk {self.name} {shlex.join(program[0])} -- {shlex.join(program[1])}", ctx=ctx) from None

    def format_options(self, ctx: typer.Context, formatter: typer.core._click.HelpFormatter) -> None:  # type: ignore[override]
        arguments = [(_argument_name(p), p.help or "") for p in self.get_params(ctx)  # type: ignore[attr-defined]
                     if p.param_type_name == "argument"]
        options = [record for p in self.get_params(ctx) if p.param_type_name == "option"
                   and (record := p.get_help_record(ctx)) is not None]
        for title, rows in (("Arguments", arguments), ("Options", options)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


def _program_words(command: Command, ctx: typer.Context, args: list[str]) -> tuple[list[str], list[str]] | None:
    """For a command that takes a program after ``--`` (``vdesk run``) given none: its own words
    (options and NAME) and the program's, as the user meant them; None for any other command."""
    params = command.get_params(ctx)
    if "--" in args or not any((p.metavar or "").startswith("-- ") for p in params):
        return None
    options = [p for p in params if p.param_type_name == "option"]
    known = {name for p in options for name in p.opts}
    valued = {name for p in options if not getattr(p, "is_flag", False) for name in p.opts}
    index = 0
    while index < len(args) and args[index].split("=", 1)[0] in known:
        index += 2 if args[index] in valued else 1  # an option and, unless --opt=value, its value
    program = args[index + 1:]
    if index >= len(args) or args[index].startswith("-") or not program or program[0].startswith("-"):
        return None  # the unknown option is vdesk's own, not the program's
    return args[:index + 1], program


def _argument_name(parameter: typer.core._click.Parameter) -> str:
    return parameter.metavar or (parameter.name or "").upper()


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version  # the installed distribution's, as pip shows it

        print(f"vdesk {version('vdesk')}")
        raise typer.Exit()


@app.callback()
def _global_options(
    engine: Annotated[Optional[str], typer.Option(envvar="VDESK_ENGINE", metavar="URL|CONTEXT", help=(
        "Docker engine: a DOCKER_HOST-style URL (unix://, tcp://, ssh://) or a Docker context name."))] = None,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print vdesk's version and exit.")] = False,
) -> None:
    OPTIONS.engine = engine


for commands in (desktops.COMMANDS, forks.COMMANDS, drive.COMMANDS, observe.COMMANDS, runs.COMMANDS, protocols.COMMANDS):
    for name, function in commands.items():
        app.command(name, cls=Command)(function)
app.add_typer(tasks.app, name="tasks")


def invoke(argv: list[str]) -> int:
    """Run ``argv`` and return the exit code; errors are raised for :func:`vdesk.cli.run`."""
    command = typer.main.get_command(app)
    try:
        with command.make_context("vdesk", list(argv) or ["--help"]) as context:
            command.invoke(context)
    except typer.Exit as done:  # --help, --version, and commands that set their exit code
        return done.exit_code
    return 0

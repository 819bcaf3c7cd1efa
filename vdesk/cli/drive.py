"""Commands that drive one running desktop: shot, exec, run, vnc, view."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from vdesk.adapters.formats import FORMATS, model_format
from vdesk.cli.options import OPTIONS, note, say
from vdesk.errors import InvalidAction, InvalidArgument

if TYPE_CHECKING:
    from vdesk.channel import Completed

NAME = typer.Argument(metavar="NAME", help="The desktop's name (see `vdesk ls`).", show_default=False)
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")
# vdesk.channel's OUTPUT_LIMIT and MAX_OUTPUT_LIMIT, spelled here so that `--help` loads no Docker library
DEFAULT_OUTPUT, MAX_OUTPUT, MAX_OUTPUT_BYTES = "1MiB", "64MiB", 64 << 20


def shot(
    name: Annotated[str, NAME],
    output: Annotated[Path, typer.Option("-o", "--output", metavar="FILE", help=(
        "Image file (.png or .jpg); '-': a PNG on stdout."))] = Path("shot.png"),
    size: Annotated[Optional[str], typer.Option(metavar="WxH", help="Resize to WIDTHxHEIGHT.")] = None,
) -> None:
    """Save a screenshot of a desktop."""
    from vdesk.container import parse_size
    from vdesk.desktop import Desktop

    to_stdout = str(output) == "-"
    if not to_stdout and output.suffix.lower() not in IMAGE_SUFFIXES:
        raise InvalidArgument(f"--output {str(output)!r}: name a .png or .jpg file, or '-' for stdout")
    if not to_stdout and not output.parent.is_dir():
        raise InvalidArgument(f"--output {str(output)!r}: no folder {str(output.parent)!r}")
    resize = parse_size(size) if size else None
    if resize is not None and min(resize) < 1:
        raise InvalidArgument(f"--size {size!r}: width and height must be at least 1")
    with Desktop.attach(name, engine=OPTIONS.engine) as desktop:
        frame = desktop.screen.shot(resize)
    if to_stdout:  # the image is stdout's; what was saved is said on stderr
        frame.save(sys.stdout.buffer, format="PNG")
        sys.stdout.buffer.flush()
        note(f"wrote a PNG to stdout ({frame.width}x{frame.height})")
        return
    frame.save(output)
    say(f"saved {output} ({frame.width}x{frame.height})")


def _quote(example: str) -> str:
    """The example as a shell word (double quotes around text with single quotes)."""
    return f'"{example}"' if "'" in example and not set(example) & set('"$`\\') else shlex.quote(example)


_FORMAT_HELP = "; ".join(f"{f.name}: {f.help}" for f in FORMATS.values())
_EXAMPLES = "\n".join(f"  vdesk exec NAME{'' if f.name == 'base' else ' --format ' + f.name} {_quote(f.example)}"
                       for f in FORMATS.values())


def exec_command(
    name: Annotated[str, NAME],
    actions: Annotated[Optional[list[str]], typer.Argument(metavar="[ACTION]...", show_default=False, help=(
        "Actions: BaseAction JSON (one object or a list), or model output with --format."))] = None,
    file: Annotated[Optional[str], typer.Option("-f", "--file", metavar="FILE", help=(
        "Also read actions from FILE ('-': stdin), after the arguments."))] = None,
    format: Annotated[str, typer.Option(metavar="FORMAT", help=_FORMAT_HELP + ". All but uitars are JSON.")] = "base",
    settle: Annotated[bool, typer.Option("--settle", help="Return once the screen has stopped changing.")] = False,
    receipt: Annotated[bool, typer.Option("--receipt", help=(
        "Also say which screen regions the actions changed (connects to the desktop's screen: "
        "about half a second more for this one command); without --settle, what was drawn by the "
        "time the desktop had the actions (outcome 'unknown' when nothing was yet)."))] = False,
) -> None:
    payloads = list(actions or [])
    model_format(format)  # an unknown --format is a usage error, before any desktop is reached
    if file is not None:
        payloads.append(_read_actions_file(file))
    if not payloads:
        raise InvalidArgument("no actions given: pass ACTION arguments or -f FILE")
    from vdesk.adapters.formats import parse_payloads
    from vdesk.desktop import Desktop
    from vdesk.integrations.operator import ExecuteResult

    with Desktop.attach(name, engine=OPTIONS.engine) as desktop:
        try:
            batch = parse_payloads(format, payloads, desktop.screen.image())
        except InvalidAction as error:  # the same channel as an action the desktop cannot honour
            result = ExecuteResult(status="failed", error_message=str(error))
        else:
            result = desktop.input.execute(batch, settle=settle, receipt=receipt)
    say(result.model_dump_json(exclude_none=True))
    if result.status != "success":
        raise typer.Exit(1)


exec_command.__doc__ = f"""Execute actions on a desktop; print the result as JSON on stdout.

Actions are numbered from 0 across all arguments and the file, in order. Exit 0: every action
ran. Exit 1: the batch was refused (an invalid action: bad JSON, a bad field, a point off the
screen, a control character; nothing ran) or failed part-way; the JSON's error_message names
the action and why. Exit 2: no such desktop, a bad option, no engine.

\b
Examples:
{_EXAMPLES}
"""


def _read_actions_file(file: str) -> str:
    try:
        return sys.stdin.read() if file == "-" else Path(file).read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidArgument(f"cannot read actions from {file!r}: {getattr(error, 'strerror', None) or error}") from None


def run(
    name: Annotated[str, NAME],
    command: Annotated[list[str], typer.Argument(metavar="-- PROGRAM [ARG]...", show_default=False,
                                                 help="The program and its arguments (after --).")],
    wait: Annotated[bool, typer.Option("--wait", help="Wait for it and print its output.")] = False,
    timeout: Annotated[float, typer.Option(metavar="SECONDS", help="Seconds to wait with --wait.")] = 60.0,
    max_output: Annotated[str, typer.Option(metavar="SIZE", help=(
        f"With --wait: bytes of stdout (and of stderr) to keep, e.g. 10MiB (at most {MAX_OUTPUT}). "
        "More is an error: `vdesk cp` copies files of any size."))] = DEFAULT_OUTPUT,
) -> None:
    """Start a program in a desktop (returns at once unless --wait).

    With --wait it prints the program's output and exits with its exit code; output past
    --max-output is cut, and then vdesk says so on stderr and exits 2."""
    from vdesk.desktop import Desktop
    from vdesk.errors import TooLarge

    limit = _output_limit(max_output)  # a bad size fails before any desktop is reached
    with Desktop.attach(name, engine=OPTIONS.engine) as desktop:
        result = desktop.programs.run(command, wait=wait, timeout=timeout, output_limit=limit)
    if wait:
        sys.stdout.write(result.stdout)
        sys.stderr.write(result.stderr)
        if result.cut:  # what came is written, but a script must not take it for the whole
            ended = f" (it exited with {result.returncode})" if result.returncode else ""
            raise TooLarge(f"{command[0]}{ended}: {result.cut_note}: {_more_output(result, name)}")
        raise typer.Exit(result.returncode)


def _more_output(result: Completed, name: str) -> str:
    """How to get the rest of an output that was cut."""
    needed = max(result.stdout_bytes, result.stderr_bytes)
    copy = f"copy files out with `vdesk cp {name}:PATH .`"
    if needed > MAX_OUTPUT_BYTES:
        return f"--max-output goes up to {MAX_OUTPUT}: {copy}"
    return f"pass --max-output {-(-needed // (1 << 20))}MiB to keep it all, or {copy}"


def _output_limit(text: str) -> int:
    """``--max-output`` in bytes: ``1048576``, ``10MiB``, ``5MB``, up to :data:`MAX_OUTPUT`."""
    from pydantic import ByteSize, TypeAdapter, ValidationError

    try:
        size = int(TypeAdapter(ByteSize).validate_python(text.strip()))
    except ValidationError:
        raise InvalidArgument(f"--max-output {text!r}: give a size such as 4MiB or 1000000") from None
    if not 0 < size <= MAX_OUTPUT_BYTES:
        raise InvalidArgument(f"--max-output {text!r}: give 1 byte to {MAX_OUTPUT}")
    return size


def cp_command(
    source: Annotated[str, typer.Argument(metavar="SOURCE", show_default=False, help="A local path, or NAME:PATH in a desktop.")],
    destination: Annotated[str, typer.Argument(metavar="DESTINATION", show_default=False,
                                               help="A local path, or NAME:PATH in a desktop.")],
) -> None:
    """Copy files between this machine and a desktop, like docker cp:
    `vdesk cp report.xlsx NAME:~/` or `vdesk cp NAME:~/out.pdf .` (~ is the desktop's home)."""
    from vdesk.desktop import Desktop
    from vdesk.files import split_desktop_path

    remote_source, remote_destination = split_desktop_path(source), split_desktop_path(destination)
    if (remote_source is None) == (remote_destination is None):
        raise InvalidArgument("exactly one of SOURCE and DESTINATION must be NAME:PATH in a desktop")
    name, path = remote_source or remote_destination  # type: ignore[misc]
    with Desktop.attach(name, engine=OPTIONS.engine) as desktop:
        if remote_source is not None:
            say(str(desktop.files.download(path, destination)))
        else:
            say(f"{name}:{desktop.files.upload(source, path)}")


def vnc(
    name: Annotated[str, NAME],
    port: Annotated[int, typer.Option(metavar="PORT", help="Local port on 127.0.0.1 (0: any free one).")] = 0,
) -> None:
    """Forward a local port on 127.0.0.1 to a desktop's VNC server until Ctrl-C."""
    from vdesk.desktop import Desktop

    with Desktop.attach(name, engine=OPTIONS.engine) as desktop:
        tunnel = desktop.vnc.forward(port)
        try:
            say(f"VNC of {name}: {tunnel.address}  password: {desktop.vnc.password}  (Ctrl-C to stop)")
            while desktop.is_alive():
                time.sleep(1)
        finally:
            tunnel.close()


def view(
    name: Annotated[str, NAME],
    port: Annotated[int, typer.Option(metavar="PORT", help="Port on 127.0.0.1 for the page (0: any free one).")] = 0,
    control: Annotated[bool, typer.Option("--control", help=(
        "Send the viewer's keys and clicks to the desktop (default: view-only, to watch an agent)."))] = False,
    expires: Annotated[float, typer.Option(metavar="SECONDS", help="The link works once, within this long.")] = 300.0,
) -> None:
    """Watch a desktop live in the browser until Ctrl-C: a one-time link to noVNC on 127.0.0.1,
    view-only unless --control. The link carries no password and works once."""
    from vdesk.desktop import Desktop
    from vdesk.viewer import Viewer

    with Desktop.attach(name, engine=OPTIONS.engine) as desktop, Viewer.serve(port) as viewer:
        link = viewer.link(desktop, read_only=not control, expires_in=expires)
        note(f"the link works once, within {expires:g} s; "
             f"{'view-only' if link.read_only else 'keys and clicks reach the desktop'} (Ctrl-C to stop)")
        say(f"open {link.url}")
        while desktop.is_alive():
            time.sleep(1)


def record(
    name: Annotated[str, NAME],
    output: Annotated[Path, typer.Option("-o", "--output", metavar="MP4", help="The video file (.mp4).")] = Path("session.mp4"),
    fps: Annotated[float, typer.Option(metavar="N", help="Frames per second.")] = 10.0,
    seconds: Annotated[Optional[float], typer.Option(metavar="SECONDS", help=(
        "Stop after this many seconds (default: at Ctrl-C)."))] = None,
) -> None:
    """Record a desktop's screen into an MP4 until Ctrl-C (or for --seconds)."""
    from vdesk.desktop import Desktop
    from vdesk.video import check_options

    check_options(output, fps)  # a bad path or rate fails before anything starts
    if seconds is not None and not 0 < seconds <= 10**7:
        raise InvalidArgument(f"--seconds must be more than 0, got {seconds}")
    with Desktop.attach(name, engine=OPTIONS.engine) as desktop, \
            desktop.screen.record(output, fps=fps, seconds=seconds) as recording:
        note(f"recording {name} into {output} at {fps:g} fps" + ("" if seconds else " (Ctrl-C to stop)"))
        try:
            while not recording.wait(0.1):  # its length reached, or the desktop went away
                pass
        except KeyboardInterrupt:
            pass  # leaving the block finishes the file
    say(f"saved {output} ({recording.frames} frames, {recording.seconds:.1f} s)")
    if recording.error is not None:
        raise recording.error


COMMANDS = {"shot": shot, "exec": exec_command, "run": run, "vnc": vnc, "view": view, "record": record,
            "cp": cp_command}

"""Commands over desktops as things: build the image, up, ls, down, prune."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Annotated, Optional

import typer

from vdesk.cli.options import OPTIONS, columns, note, say, width
from vdesk.errors import InvalidArgument

DEFAULT_TTL = 2 * 3600


def build(
    apps: Annotated[bool, typer.Option("--apps", help="Also build the apps image (browser, office suite, ...).")] = False,
    osworld: Annotated[bool, typer.Option("--osworld", help=(
        "Also build the osworld images (the apps image plus what OSWorld's tasks assume, on openbox and on GNOME)."))] = False,
) -> None:
    """Build the desktop image (reuses what an earlier build made)."""
    from vdesk import engine as engines, images as desktop_image

    client = engines.connect(OPTIONS.engine)
    for image in ("lean", "apps", "osworld-openbox", "osworld")[:4 if osworld else 2 if apps else 1]:
        if desktop_image.is_current(client, image):
            say(f"{desktop_image.resolve(image)} is up to date")
            continue
        note(f"building the {image} desktop image")
        desktop_image.ensure(client, image, progress=note)


def up(
    name: Annotated[Optional[str], typer.Option(metavar="NAME", help="Desktop name (default: vdesk-<random>).")] = None,
    size: Annotated[Optional[str], typer.Option(metavar="WxH", help=(
        "Logical screen size WIDTHxHEIGHT (default 1280x800; 1920x1080 for the osworld image, like OSWorld's)."))] = None,
    scale: Annotated[float, typer.Option(metavar="FACTOR", help="HiDPI scale of the framebuffer.")] = 1.0,
    ttl: Annotated[float, typer.Option(metavar="SECONDS", help="Seconds until the desktop stops itself (0: never).")] = DEFAULT_TTL,
    network: Annotated[str, typer.Option(metavar="MODE", help="'none' (default) or 'bridge'.")] = "none",
    apps: Annotated[bool, typer.Option("--apps", help="The apps image: a browser, an office suite, a taskbar, ...")] = False,
    image: Annotated[Optional[str], typer.Option(metavar="IMAGE", help=(
        "'lean', 'apps', 'osworld' (OSWorld's machine as its agents see it: GNOME, user, google-chrome, sudo, ...), "
        "'osworld-openbox' (the same machine on openbox: faster, not as the agents see it) or a Docker image."))] = None,
    clock: Annotated[Optional[str], typer.Option(metavar="'YYYY-MM-DD HH:MM:SS'", help=(
        "The desktop's time at the start (UTC; apps image)."))] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Start a desktop that outlives this command (until `vdesk down` or its TTL)."""
    from vdesk.container import parse_size
    from vdesk.desktop import Desktop

    def announce(desktop: Desktop) -> None:  # Ctrl-C before this returns removes the desktop
        vnc = desktop.vnc.address if network == "bridge" else f"vdesk vnc {desktop.name}"
        if as_json:
            say(json.dumps({"name": desktop.name, "vnc": vnc, "password": desktop.vnc.password,
                            "size": size, "ttl_seconds": ttl}))
        else:
            say(f"{desktop.name}  VNC: {vnc}  password: {desktop.vnc.password}")

    chosen = _image_choice(image, apps)
    if size is None:
        size = "1920x1080" if chosen in ("osworld", "osworld-openbox") else "1280x800"
    Desktop.up(parse_size(size), scale=scale, name=name, ttl=ttl or None, lease=False, engine=OPTIONS.engine,
               network=network, image=chosen, clock=clock,  # type: ignore[arg-type]
               announce=announce).close()


def _image_choice(image: str | None, apps: bool) -> str:
    if image is not None and apps and image != "apps":
        raise InvalidArgument(f"--apps and --image {image} name two images: give one")
    return image or ("apps" if apps else "lean")


def list_command(as_json: Annotated[bool, typer.Option("--json", help=(
        "Print JSON: {\"desktops\": [DesktopInfo], \"checkpoints\": [Checkpoint]}."))] = False) -> None:
    """List vdesk desktops, then the checkpoints on the engine's host."""
    from vdesk import engine as engines, forks
    from vdesk.inventory import Listing, list_desktops

    desktops = list_desktops(OPTIONS.engine)
    if as_json:
        found = forks.list_checkpoints(engines.connect(OPTIONS.engine))
        say(Listing(desktops=desktops, checkpoints=found).model_dump_json())
        return
    headers, checkpoints = checkpoint_rows()
    if not desktops:
        say("no desktops (start one with `vdesk up`)")
    else:
        rows = []
        for d in desktops:
            ttl = "lease" if d.leased else ("-" if d.ttl_left is None else duration(d.ttl_left))
            size = f"{d.size[0]}x{d.size[1]}" + (f"@{d.scale:g}" if d.scale != 1 else "")
            rows.append([d.name, d.status, size, age(d.created), ttl, d.owner, d.vnc_address or "-"])
        say(columns(["NAME", "STATUS", "SIZE", "AGE", "TTL LEFT", "OWNER", "VNC"], rows, width()))
    if checkpoints:
        say("")
        say(columns(headers, checkpoints, width()))


def age(created: datetime) -> str:
    """How long ago ``created`` was, as :func:`duration` says it."""
    return duration((datetime.now(timezone.utc) - created).total_seconds())


def duration(seconds: float) -> str:
    """``12 min`` (under two hours), ``5 h`` (under two days) or ``3 d``: a table's short span."""
    minutes = max(0, round(seconds / 60))
    if minutes < 120:
        return f"{minutes} min"
    return f"{minutes // 60} h" if minutes < 48 * 60 else f"{minutes // (24 * 60)} d"


def checkpoint_rows() -> tuple[list[str], list[list[str]]]:
    """The checkpoints table of ``vdesk ls`` (no rows where the engine cannot checkpoint)."""
    from vdesk import engine as engines, forks as checkpoints

    found = checkpoints.list_checkpoints(engines.connect(OPTIONS.engine))
    rows = [[c.name, c.source, f"{c.size / 2**20:.0f} MiB", age(c.created)] for c in found]
    return ["CHECKPOINT", "OF", "SIZE", "AGE"], rows


def down(
    names: Annotated[Optional[list[str]], typer.Argument(metavar="[NAME]...", help="Desktops or checkpoints to remove.")] = None,
    all_: Annotated[bool, typer.Option("--all", help=(
        "Remove your desktops (owner user@host is yours), but not those a live process holds the lease of."))] = False,
    include_leased: Annotated[bool, typer.Option("--include-leased", help=(
        "With --all: also your desktops whose lease a live process holds (in the middle of its work)."))] = False,
    force: Annotated[bool, typer.Option("--force", help=(
        "With --all: every vdesk desktop on the engine, whoever owns or holds it."))] = False,
) -> None:
    """Remove desktops and checkpoints: the named ones, or with --all your own desktops (what is left is said, and why)."""
    from vdesk.inventory import remove_all, remove_named

    if all_ and names:
        raise InvalidArgument("name desktops or pass --all, not both")
    if (include_leased or force) and not all_:
        raise InvalidArgument(f"{'--force' if force else '--include-leased'} goes with --all")
    if not all_:
        if not names:
            raise InvalidArgument("name the desktops to remove, or pass --all")
        for removed in remove_named(names, OPTIONS.engine):
            say(f"removed {removed}")
        return
    removal = remove_all(OPTIONS.engine, include_leased=include_leased, everyone=force)
    for removed in removal.removed:
        say(f"removed {removed}")
    for kept in removal.kept:
        note(f"left {kept.name}: {kept.reason} ({kept.flag} removes it)")
    if not removal.removed:
        say("no desktops removed" if removal.kept else "no desktops to remove")


def prune(names: Annotated[Optional[list[str]], typer.Argument(metavar="[NAME]...", help=(
        "Only these desktops and checkpoints (default: all)."))] = None) -> None:
    """Remove expired, stopped and orphaned desktops, and the checkpoints nobody uses: their
    desktop is gone, no desktop forked from them exists and no run holds them."""
    from vdesk import engine as engines, forks
    from vdesk.inventory import prune_desktops, prune_named

    if names:
        removed, kept = prune_named(names, OPTIONS.engine)
    else:
        removed = prune_desktops(OPTIONS.engine)
        removed += [f"checkpoint {name}" for name in forks.prune(engines.connect(OPTIONS.engine))]
        kept = []
    for name in removed:
        say(f"removed {name}")
    for left in kept:
        note(f"left {left.name}: {left.reason} ({left.flag} removes it)")
    if not removed and not kept:
        say("nothing to prune")


COMMANDS = {"build": build, "up": up, "ls": list_command, "down": down, "prune": prune}

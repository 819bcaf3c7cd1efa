"""Branching and undo on real desktops: forks of forks and checkpoint-restore rounds, with and
without a time-to-live, on the lean and the apps image, from Python and the command line; a
restore that cannot start leaves the desktop as it was; checkpoints are removed by name, named
apart from desktops, and a fork that fails takes its checkpoint with it."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from vdesk import forks
from vdesk.desktop import Desktop
from vdesk.errors import CheckpointError, DesktopNotFound, InvalidArgument, VdeskError

VDESK = str(Path(sys.executable).parent / "vdesk")
RUN = secrets.token_hex(2)  # in the desktops' names: two runs of this file on one engine do not collide
# A program started in the background through the channel (as an agent's harness starts one), so
# that each generation has a process of its own that outlived the exec that started it.
COUNTER = ["sh", "-c", "i=0; while true; do i=$((i+1)); echo $i > /tmp/ticks-$0; sleep 0.2; done"]


def vdesk(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([VDESK, *args], capture_output=True, text=True, timeout=300)


def start_counter(desktop: Desktop, label: str) -> None:
    desktop.programs.run([*COUNTER, label])
    wait_for_file(desktop, f"/tmp/ticks-{label}")


def wait_for_file(desktop: Desktop, path: str) -> None:
    desktop.programs.run(["sh", "-c", 'until [ -s "$0" ]; do sleep 0.05; done', path], wait=True, timeout=30).check()


def counter_runs(desktop: Desktop, label: str) -> bool:
    """The counter ``label`` still counts in ``desktop`` (its process came along)."""
    script = 'a=$(cat "$0"); for _ in $(seq 100); do sleep 0.05; [ "$(cat "$0")" != "$a" ] && exit 0; done; exit 1'
    return desktop.programs.run(["sh", "-c", script, f"/tmp/ticks-{label}"], wait=True, timeout=30).returncode == 0


def own_checkpoints(desktop: Desktop) -> set[str]:
    return {c.name for c in forks.list_checkpoints(desktop.client) if c.source.startswith(desktop.name)}


@pytest.fixture(scope="module", params=["lean", "apps"])
def image(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.parametrize("ttl", [None, 600.0], ids=["no-ttl", "ttl"])
def test_forks_of_forks_carry_every_generations_programs(image: str, ttl: float | None) -> None:
    with Desktop.up(name=f"branch-{image}-{RUN}-{int(ttl or 0)}", image=image, ttl=ttl, timeout=120) as root:
        start_counter(root, "root")
        generations: list[Desktop] = [root]
        try:
            for depth in (1, 2, 3):
                (child,) = generations[-1].fork(1, ttl=ttl, timeout=120)
                generations.append(child)
                start_counter(child, f"gen{depth}")  # started in a fork: once the failing case
            last = generations[-1]
            assert all(counter_runs(last, label) for label in ("root", "gen1", "gen2", "gen3"))
            if ttl:
                assert 0 < forks.remaining_ttl(last.container) <= ttl  # type: ignore[operator]
        finally:
            for desktop in reversed(generations[1:]):
                desktop.down()
            for name in own_checkpoints(root):
                forks.remove(root.client, name, missing_ok=True)


def test_three_rounds_of_checkpoint_and_restore_on_one_desktop(image: str) -> None:
    with Desktop.up(name=f"undo-{image}-{RUN}", image=image, ttl=600, timeout=120) as desktop:
        name = desktop.name
        try:
            for round_ in range(3):
                start_counter(desktop, f"kept{round_}")
                checkpoint = desktop.checkpoint()
                start_counter(desktop, f"undone{round_}")  # a program started after the checkpoint
                desktop.programs.run(["touch", f"/tmp/after-{round_}"], wait=True).check()
                desktop.restore(checkpoint, timeout=120)
                assert desktop.name == name and desktop.is_alive()
                assert desktop.programs.run(["test", "-e", f"/tmp/after-{round_}"], wait=True).returncode == 1
                assert desktop.programs.run(["test", "-e", f"/tmp/ticks-undone{round_}"], wait=True).returncode == 1
                assert all(counter_runs(desktop, f"kept{done}") for done in range(round_ + 1))
                assert 0 < forks.remaining_ttl(desktop.container) <= 600  # type: ignore[operator]
        finally:
            for taken in own_checkpoints(desktop):
                forks.remove(desktop.client, taken, missing_ok=True)


def test_a_restore_that_cannot_start_leaves_the_desktop_as_it_was() -> None:
    with Desktop.up(name=f"undo-broken-{RUN}", ttl=600) as desktop:
        checkpoint = desktop.checkpoint()
        try:
            desktop.programs.run(["touch", "/tmp/made-after"], wait=True).check()
            start_counter(desktop, "after")
            container_id, password = desktop.id, desktop.vnc.password
            images = forks.docker_root(desktop.client) / forks.STORE / checkpoint.name / "images"
            (images / "pstree.img").unlink()  # CRIU cannot restore this one
            with pytest.raises(CheckpointError):
                desktop.restore(checkpoint)
            assert desktop.name == f"undo-broken-{RUN}" and desktop.id == container_id
            assert desktop.container.name == desktop.name and desktop.is_alive()
            assert desktop.programs.run(["test", "-e", "/tmp/made-after"], wait=True).returncode == 0
            assert counter_runs(desktop, "after")
            assert desktop.vnc.password == password and desktop.screen.shot().size == desktop.screen.size
            named = [c for c in desktop.client.containers.list(all=True) if c.name.startswith(desktop.name)]
            assert [c.id for c in named] == [container_id]  # no stray fork, no renamed leftover
        finally:
            forks.remove(desktop.client, checkpoint.name, missing_ok=True)


def test_the_command_line_forks_a_fork_of_a_desktop_with_its_default_ttl() -> None:
    source = f"branch-cli-{RUN}"
    up = vdesk("up", "--name", source, "--json")  # the CLI's default time-to-live
    assert up.returncode == 0, up.stderr
    made, taken = [source], []
    try:
        first = vdesk("fork", source, "--json")
        assert first.returncode == 0, first.stderr
        child = json.loads(first.stdout)
        made.append(child["name"])
        taken.append(child["checkpoint"])
        started = vdesk("run", child["name"], "--", "sh", "-c", "sleep 100000")  # lives on in the fork
        assert started.returncode == 0, started.stderr
        second = vdesk("fork", child["name"], "--json")
        assert second.returncode == 0, second.stderr
        grandchild = json.loads(second.stdout)
        made.append(grandchild["name"])
        taken.append(grandchild["checkpoint"])
        echoed = vdesk("run", grandchild["name"], "--wait", "--", "pgrep", "-x", "sleep")
        assert echoed.returncode == 0 and echoed.stdout.strip(), echoed.stderr
    finally:
        vdesk("down", *made)
        if taken:
            vdesk("down", *taken)


def test_checkpoints_are_removed_by_name_and_named_apart_from_desktops() -> None:
    source = f"cp-names-{RUN}"
    cp = f"{source}-cp"
    assert vdesk("up", "--name", source, "--ttl", "600").returncode == 0
    try:
        clash = vdesk("checkpoint", source, "--as", source)
        assert clash.returncode == 2 and "desktop's name" in clash.stderr, clash.stderr
        empty = vdesk("checkpoint", source, "--as", "")
        assert empty.returncode == 2 and "invalid checkpoint name ''" in empty.stderr, empty.stderr
        assert vdesk("checkpoint", source, "--as", cp).returncode == 0
        kept = vdesk("prune", cp)  # its desktop runs: in use
        assert kept.returncode == 0 and f"left checkpoint {cp}" in kept.stderr, kept.stderr
        assert f"vdesk down {cp}" in kept.stderr
        assert cp in {c["name"] for c in json.loads(vdesk("ls", "--json").stdout)["checkpoints"]}
        removed = vdesk("down", cp)
        assert removed.returncode == 0 and removed.stdout == f"removed checkpoint {cp}\n", removed.stderr
        assert cp not in {c["name"] for c in json.loads(vdesk("ls", "--json").stdout)["checkpoints"]}
        missing = vdesk("down", cp)
        assert missing.returncode == 2 and f"no desktop or checkpoint named '{cp}'" in missing.stderr
        unknown = vdesk("prune", "no-such-thing")
        assert unknown.returncode == 2 and "no desktop or checkpoint named 'no-such-thing'" in unknown.stderr
        assert vdesk("checkpoint", source, "--as", cp).returncode == 0
        assert vdesk("down", source).returncode == 0
        pruned = vdesk("prune", cp)  # its desktop gone, no fork of it: unused
        assert pruned.returncode == 0 and pruned.stdout == f"removed checkpoint {cp}\n", pruned.stderr
    finally:
        vdesk("down", source)
        vdesk("down", cp)


def test_a_checkpoint_is_removed_by_name_from_python() -> None:
    with Desktop.up(name=f"cp-python-{RUN}") as desktop:
        checkpoint = desktop.checkpoint(f"cp-python-{RUN}-cp")
        Desktop.remove_checkpoint(checkpoint.name)
        assert checkpoint.name not in {c.name for c in forks.list_checkpoints(desktop.client)}
        with pytest.raises(DesktopNotFound):
            Desktop.remove_checkpoint(checkpoint.name)
        with pytest.raises(InvalidArgument, match="desktop's name"):
            desktop.checkpoint(desktop.name)


def test_a_fork_that_fails_removes_the_checkpoint_it_made() -> None:
    with Desktop.up(name=f"fork-fails-{RUN}") as desktop, Desktop.up(name=f"fork-fails-{RUN}-taken") as other:
        before = own_checkpoints(desktop)
        with pytest.raises(InvalidArgument, match="already exists"):
            desktop.fork(1, names=[other.name])  # refused before anything is dumped
        with pytest.raises(VdeskError):
            desktop.fork(2, timeout=0.01)  # dumped, started, then never shows its first frame in time
        assert own_checkpoints(desktop) == before
        assert not [c for c in desktop.client.containers.list(all=True) if c.name.startswith(f"fork-fails-{RUN}-f")]
        assert desktop.is_alive()

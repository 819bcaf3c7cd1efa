"""`vdesk down --all` removes what is yours and nothing in another process's hands.

The engine is shared (other users', other tests' desktops are on it), so each command here runs
as a user of its own: vdesk reads the user from the environment (LOGNAME, as ``getpass`` does),
and a desktop's owner label is ``user@host:pid``. What `--all` leaves of the others' is only
reported, never touched; `--force` (everything on the engine) is proven on the pure rule.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.desktop.helpers import vdesk_containers
from vdesk.desktop import Desktop
from vdesk.inventory import DesktopInfo, _keep_reason

VDESK = str(Path(sys.executable).parent / "vdesk")
from tests.engine import CLIENT  # noqa: E402  (made on first use, not at import)


def as_user(user: str, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "LOGNAME": user, "USER": user}
    return subprocess.run([VDESK, *args], capture_output=True, text=True, timeout=120, env=environment)


def up(user: str) -> str:
    started = as_user(user, "up", "--json", "--ttl", "600")
    assert started.returncode == 0, started.stderr
    return json.loads(started.stdout)["name"]


def test_down_all_leaves_leased_desktops_and_other_users_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    me, someone = f"vdesk-me-{secrets.token_hex(3)}", f"vdesk-other-{secrets.token_hex(3)}"
    mine, theirs = up(me), up(someone)
    monkeypatch.setenv("LOGNAME", me)  # this test process holds a lease, as `me`
    held = Desktop.up(size=(640, 480))
    try:
        down = as_user(me, "down", "--all")
        assert down.returncode == 0, down.stderr
        assert f"removed {mine}\n" in down.stdout
        assert mine not in vdesk_containers(CLIENT)
        assert held.is_alive() and theirs in vdesk_containers(CLIENT)  # both in someone's hands
        assert (f"left {held.name}: its lease is held by process {os.getpid()}, which may be using it "
                "(--include-leased removes it)") in down.stderr.splitlines()
        assert f"left {theirs}: owned by {someone}@{socket.gethostname()}:" in down.stderr
        assert f"(--force removes it)" in down.stderr

        again = as_user(me, "down", "--all", "--include-leased")
        assert again.returncode == 0 and f"removed {held.name}\n" in again.stdout
        assert held.name not in vdesk_containers(CLIENT) and theirs in vdesk_containers(CLIENT)
        assert f"left {theirs}: owned by {someone}@" in again.stderr
    finally:
        held.close()
        for name in (mine, theirs):
            if name in vdesk_containers(CLIENT):
                as_user(someone, "down", name)
    assert theirs not in vdesk_containers(CLIENT)


def test_down_all_options_go_together():
    alone = as_user("anyone", "down", "--force", "x")
    assert alone.returncode == 2 and "--force goes with --all" in alone.stderr
    both = as_user("anyone", "down", "--all", "x")
    assert both.returncode == 2 and "not both" in both.stderr


def info(owner: str, leased: bool, status: str = "running") -> DesktopInfo:
    return DesktopInfo(name="d", id="0", status=status, size=(1, 1), scale=1.0, created=datetime.now(timezone.utc),
                       expires_at=None, owner=owner, leased=leased, vnc_address=None)


def test_the_rule_of_what_down_all_removes():
    me, live, dead = "u@h", str(os.getpid()), "999999999"
    keep = lambda desktop, **flags: _keep_reason(desktop, me, include_leased=flags.get("leased", False),  # noqa: E731
                                                 everyone=flags.get("force", False))
    assert keep(info(f"{me}:{dead}", leased=False)) is None                 # `vdesk up`'s: its starter is gone
    assert keep(info(f"{me}:{live}", leased=True)).flag == "--include-leased"  # held by a live process
    assert keep(info(f"{me}:{dead}", leased=True)) is None                  # its holder died: it is stopping
    assert keep(info(f"{me}:{live}", leased=True, status="exited")) is None
    assert keep(info(f"{me}:{live}", leased=True), leased=True) is None
    assert keep(info(f"other@h:{dead}", leased=False), leased=True).flag == "--force"
    assert keep(info(f"u@elsewhere:{dead}", leased=False)).reason == f"owned by u@elsewhere:{dead}"
    assert keep(info(f"other@h:{live}", leased=True), force=True) is None

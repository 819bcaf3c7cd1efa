"""Pruning removes the desktops nobody can use any more, and nothing else."""

from __future__ import annotations

import time


from tests.desktop.helpers import vdesk_containers
from vdesk.container import remove_container
from vdesk.desktop import Desktop
from vdesk.inventory import prune_desktops
from vdesk.images import IMAGE

from tests.engine import CLIENT  # noqa: E402  (made on first use, not at import)


def _wait_for_status(container, wanted: set[str], timeout: float = 20) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        container.reload()
        if container.status in wanted:
            return
        assert time.monotonic() < deadline, f"{container.name} is {container.status}, not {wanted}"
        time.sleep(0.1)


def test_prune_removes_expired_and_stopped_desktops_only():
    desktops: list[Desktop] = []
    others = []

    def up(**options) -> Desktop:  # type: ignore[no-untyped-def]
        desktops.append(Desktop.up(**options))
        return desktops[-1]

    try:
        # 20 s: a loaded machine may take longer than a few seconds to bring a desktop up, and
        # one whose time ran out while it started is an error of `up` (not this test's subject).
        paused_past_ttl = up(lease=False, ttl=20)
        paused_past_ttl.close()
        paused_past_ttl.container.pause()  # frozen before its time-to-live could stop it
        expired = up(lease=False, ttl=20)
        stopped = up(lease=False, ttl=600)
        healthy_leased = up()
        healthy_unleased = up(lease=False, ttl=600)
        forever = up(lease=False)  # no time-to-live at all
        # Plain containers of the same image: they exit at once (no VNC password) and carry
        # the image's labels and their own, but not vdesk=desktop.
        for labels in ({"other": "1"}, {"vdesk": "something-else"}):
            others.append(CLIENT.containers.run(IMAGE, detach=True, network_mode="none", labels=labels))
        stopped.close()
        stopped.container.stop(timeout=5)
        _wait_for_status(expired.container, {"exited"}, timeout=80)  # its time-to-live stopped it
        for container in others:
            _wait_for_status(container, {"exited"})
        assert others[0].labels.get("vdesk.context-hash") and "vdesk" not in others[0].labels
        time.sleep(max(0.0, int(paused_past_ttl.container.labels["vdesk.expires-at"]) + 1 - time.time()))
        _wait_for_status(paused_past_ttl.container, {"paused"})

        candidates = [d.name for d in desktops] + [c.name for c in others]
        removed = prune_desktops(only=candidates)

        assert sorted(removed) == sorted([expired.name, paused_past_ttl.name, stopped.name])
        left = vdesk_containers(CLIENT)
        assert not {expired.name, paused_past_ttl.name, stopped.name} & left
        assert {healthy_leased.name, healthy_unleased.name, forever.name} <= left
        for container in others:
            container.reload()  # still there, untouched
        # The desktops it kept still work.
        for desktop in (healthy_leased, healthy_unleased, forever):
            assert desktop.is_alive() and desktop.screen.shot().size == (1280, 800)
        assert prune_desktops(only=candidates) == []  # nothing more to do
    finally:
        for desktop in desktops:
            desktop.down()
        for container in others:
            remove_container(container)

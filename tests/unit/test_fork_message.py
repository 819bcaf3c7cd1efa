"""What an engine that cannot checkpoint is told: one line naming every missing piece."""

from __future__ import annotations

from vdesk.forks import unavailable_message


def test_a_capable_engine_gets_no_message() -> None:
    assert unavailable_message(runtime=True, writable_root="/var/lib/docker", root="/var/lib/docker",
                               criu=(4, 2, 1)) is None


def test_every_missing_piece_is_named_on_one_line() -> None:
    message = unavailable_message(runtime=False, writable_root=None, root="/srv/docker", criu=(3, 17, 1))
    assert message is not None and "\n" not in message
    assert message.startswith("this engine cannot checkpoint desktops: ")
    assert "no runtime named 'vdesk'" in message and "daemon.json" in message
    assert "CRIU 3.17.1 is too old" in message and ">= 4.1" in message
    assert "/srv/docker" in message and "root" in message


def test_no_criu_at_all_says_so_and_how_to_get_it() -> None:
    message = unavailable_message(runtime=True, writable_root="/var/lib/docker", root="/var/lib/docker", criu=None)
    assert message == ("this engine cannot checkpoint desktops: there is no CRIU on the engine's host "
                       "(scripts/criu/install-criu.sh builds one)")

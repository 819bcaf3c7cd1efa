"""How OSWorld's server turns a request's command and paths into what runs in the desktop
(pure logic: :mod:`vdesk.osworld.wire`), and the loopback address it picks."""

from __future__ import annotations

import ipaddress

import pytest

from vdesk.errors import InvalidArgument
from vdesk.osworld.server import random_loopback
from vdesk.osworld.wire import BashBody, CommandBody, argv_of, desktop_path

HOME = "/home/user"


def test_a_list_is_the_argument_vector_with_home_expanded():
    assert argv_of(["ls", "~/Documents", "a~/b", "~"], False, HOME) == ["ls", "/home/user/Documents", "a~/b", "/home/user"]


def test_a_string_is_split_like_a_shell_without_shell():
    assert argv_of("python -c 'print(1)' ~/x", False, HOME) == ["python", "-c", "print(1)", "/home/user/x"]


def test_shell_gives_the_string_to_sh_and_a_list_as_sh_does():
    assert argv_of("echo $HOME | wc -c", True, HOME) == ["sh", "-c", "echo $HOME | wc -c"]
    assert argv_of(['echo "$0"', "zero"], True, HOME) == ["sh", "-c", 'echo "$0"', "zero"]


@pytest.mark.parametrize("command, shell", [([], False), ("", False), ("", True), ([], True), (None, False),
                                            (5, False), (["ls", 3], False), ("echo 'open", False), (["a\0b"], False)])
def test_no_command_is_a_clear_error(command, shell):
    with pytest.raises(InvalidArgument, match="command"):
        argv_of(command, shell, HOME)


def test_paths_are_in_the_desktop_home_for_tilde_home_and_relative_ones():
    assert desktop_path("~/a.txt", HOME) == "/home/user/a.txt"
    assert desktop_path("$HOME/a.txt", HOME) == "/home/user/a.txt"
    assert desktop_path("${HOME}/a.txt", HOME) == "/home/user/a.txt"
    assert desktop_path("a.txt", HOME) == "/home/user/a.txt"
    assert desktop_path("/etc/hostname", HOME) == "/etc/hostname"
    for bad in ("", "/tmp/a\0b"):
        with pytest.raises(InvalidArgument):
            desktop_path(bad, HOME)


def test_bodies_take_the_references_defaults_and_ignore_unknown_keys():
    body = CommandBody.model_validate({"command": ["ls"], "extra": 1})
    assert body.shell is False and body.command == ["ls"]
    assert BashBody.model_validate({"script": "true"}).timeout == 100


def test_the_random_address_is_loopback_and_never_the_usual_one():
    seen = {random_loopback() for _ in range(200)}
    assert all(ipaddress.ip_address(address).is_loopback for address in seen)
    assert "127.0.0.1" not in seen and len(seen) > 190

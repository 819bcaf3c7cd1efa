"""`vdesk mcp`'s pure parts: its options are checked before anything starts, a screenshot scaled
by one side keeps the aspect ratio, the bearer token is compared whole."""

from __future__ import annotations

import anyio
import pytest

from vdesk.errors import InvalidArgument
from vdesk.mcp import ServerOptions, _scaled, _StaticToken


@pytest.mark.parametrize("fields, named", [({"max_desktops": 0}, "--max-desktops"),
                                           ({"idle_timeout": 0}, "--idle-timeout"),
                                           ({"idle_timeout": float("inf")}, "--idle-timeout")])
def test_bad_options_name_themselves(fields, named):
    with pytest.raises(InvalidArgument, match=named):
        ServerOptions(**fields)


def test_one_side_given_keeps_the_aspect_ratio():
    assert _scaled((1280, 800), None, None) is None
    assert _scaled((1280, 800), 640, None) == (640, 400)
    assert _scaled((1280, 800), None, 200) == (320, 200)
    assert _scaled((1280, 800), 100, 100) == (100, 100)


def test_only_the_whole_token_passes():
    verifier = _StaticToken("s" * 32)
    assert anyio.run(verifier.verify_token, "s" * 32) is not None
    for wrong in ("", "s" * 31, "s" * 33, "t" * 32):
        assert anyio.run(verifier.verify_token, wrong) is None

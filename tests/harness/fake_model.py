"""A local fake model server: answers each POST with the next recorded reply, and keeps the
requests it received so tests can check what an agent sent."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.json_http import LoopbackServer, QuietHandler, answer

RECORDED = Path(__file__).parent / "recorded"


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class FakeModelServer:
    """Serves ``replies`` in order on 127.0.0.1 (a free port); ``status`` overrides the HTTP
    status of every answer (to test failures)."""

    replies: list[Any]
    status: int = 200
    received: list[Received] = field(default_factory=list)

    def __post_init__(self) -> None:
        server = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                server.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                if server.replies:
                    reply, status = server.replies.pop(0), server.status
                else:
                    reply, status = {"error": "no more recorded replies"}, 500
                answer(self, status, reply)

        self._http = LoopbackServer(Handler)
        self.url = self._http.url

    @classmethod
    def recorded(cls, name: str) -> FakeModelServer:
        """A server replaying ``recorded/NAME.json`` (a list of replies)."""
        return cls(json.loads((RECORDED / f"{name}.json").read_text()))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> FakeModelServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

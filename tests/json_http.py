"""A JSON-over-HTTP server on 127.0.0.1 for the tests' scripted model endpoints: it serves a
handler class in a thread of its own until closed, and answers with :func:`answer`."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def answer(handler: BaseHTTPRequestHandler, status: int, payload: Any) -> None:
    data = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


class QuietHandler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass  # quiet tests


class LoopbackServer:
    """Serves ``handler`` on a free port of 127.0.0.1 (``url``) until :meth:`close`."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}"
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()

"""The persistent command channel: one long-lived ``docker exec`` per desktop.

A new ``docker exec`` costs 55–80 ms; a request over this channel costs a few. The in-container
end (``vdesk-channel``, shipped in the image) reads one JSON request per line — an argument
list, never a shell string — runs it and answers with its exit code and output. A command that
fails does not harm the channel; a channel that drops is reopened on the next request.
"""

from __future__ import annotations

import itertools
import json
import queue
import threading
from dataclasses import dataclass

import docker

from vdesk.errors import CommandFailed, DesktopGone, DesktopTimeout, InvalidArgument
from vdesk.execstream import ExecStream

CHANNEL_PROGRAM = "/usr/local/bin/vdesk-channel"
_CLOSED = object()


@dataclass(frozen=True)
class Completed:
    """The outcome of a command run through the channel."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    def check(self) -> Completed:
        """Return self, or raise :class:`CommandFailed` naming the command and its error."""
        if self.returncode != 0:
            detail = self.stderr.strip() or self.stdout.strip() or "no output"
            raise CommandFailed(f"{self.argv[0]} exited with {self.returncode}: {detail}")
        return self


class Channel:
    """Runs commands in a desktop through one held exec session. Thread-safe."""

    def __init__(self, api: docker.APIClient, container_id: str, name: str) -> None:
        self._api = api
        self._container_id = container_id
        self._name = name
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._stream: ExecStream | None = None
        self._replies: queue.Queue[object] = queue.Queue()
        self._buffer = b""
        self.reopened = 0
        self._opened = 0

    def run(self, argv: list[str], *, stdin: str | None = None, timeout: float = 30.0,
            detach: bool = False) -> Completed:
        """Run ``argv`` in the desktop as the desktop user and return how it ended.

        ``detach=True`` starts it in its own session and returns at once, leaving it running.
        Raises :class:`DesktopTimeout` when no answer comes within ``timeout`` (+ 5 s of
        grace) and :class:`DesktopGone` when the desktop cannot be reached.
        """
        if not argv or not all(isinstance(arg, str) for arg in argv):
            raise InvalidArgument("argv must be a non-empty list of strings")
        request = {"id": next(self._ids), "argv": list(argv), "stdin": stdin,
                   "timeout": timeout, "detach": detach}
        with self._lock:
            reply = self._exchange(request, timeout + 5)
        return Completed(tuple(argv), reply["rc"], reply["stdout"], reply["stderr"])

    def close(self) -> None:
        with self._lock:
            if self._stream is not None:
                self._stream.close()
                self._stream = None

    def _exchange(self, request: dict, timeout: float) -> dict:
        stream = self._open()
        line = (json.dumps(request) + "\n").encode()
        try:
            stream.send(line)
        except DesktopGone:
            stream = self._open(again=True)  # the channel dropped since the last request
            stream.send(line)
        try:
            reply = self._replies.get(timeout=timeout)
        except queue.Empty:
            self._drop()  # a late reply must not answer the next request
            raise DesktopTimeout(f"{self._name}: {request['argv'][0]} gave no answer within {timeout:g} s") from None
        if reply is _CLOSED:
            self._drop()
            raise DesktopGone(f"desktop {self._name} went away while running {request['argv'][0]}")
        assert isinstance(reply, dict)
        return reply

    def _open(self, again: bool = False) -> ExecStream:
        if again:
            self._drop()
        if self._stream is None or self._stream.closed:
            self._replies = queue.Queue()
            self._buffer = b""
            replies = self._replies
            self._stream = ExecStream(
                self._api, self._container_id, [CHANNEL_PROGRAM],
                on_data=lambda data: self._on_data(data, replies),
                on_close=lambda: replies.put(_CLOSED), label=self._name,
            )
            self.reopened += self._opened  # every stream after the first replaces a dropped one
            self._opened = 1
        return self._stream

    def _drop(self) -> None:
        if self._stream is not None:
            self._stream.close()
        self._stream = None

    def _on_data(self, data: bytes, replies: queue.Queue[object]) -> None:
        self._buffer += data
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            replies.put(json.loads(line))

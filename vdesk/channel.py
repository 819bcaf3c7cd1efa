"""The persistent command channel: one long-lived ``docker exec`` per desktop.

A new ``docker exec`` costs 55–80 ms; a request over this channel costs a few. The in-container
end (``vdesk-channel``, shipped in the image) reads one JSON request per line — an argument
list, never a shell string — runs it and answers with its exit code and output. A command that
fails does not harm the channel; a channel that drops is reopened on the next request.

Commands die with the channel: the in-container end kills every command still running when its
stdin closes, so whatever a controller started stops when the controller stops (exception,
Ctrl-C, SIGTERM, SIGKILL), and a call interrupted here (KeyboardInterrupt, a timeout) drops the
channel and so ends its command with all it started. What a command that ended by itself left
running in the background keeps running, as after a shell's command (``echo hi | xclip``
leaves xclip's server owning the clipboard), as do ``mode="detach"`` programs and the servers
``mode="outlive"`` programs fork.

The channel also guards the input a batch holds (:meth:`Channel.input_batch`): a controller
that dies in the middle of a batch, SIGKILL included, leaves no key or button down.

Bounds: each output keeps its first ``limit`` bytes (default :data:`OUTPUT_LIMIT`); the reply
says how many came (:attr:`Completed.stdout_bytes`). A reply longer than the bound allows is
not read into memory: the channel is dropped and :class:`ChannelLost` says why.
"""

from __future__ import annotations

import itertools
import json
import queue
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

import docker

from vdesk.errors import ChannelLost, CommandFailed, DesktopGone, DesktopTimeout, InvalidArgument, VdeskError
from vdesk.execstream import ExecStream

CHANNEL_PROGRAM = "/usr/local/bin/vdesk-channel"
OUTPUT_LIMIT = 1 << 20  # bytes of stdout (and of stderr) kept per command
MAX_OUTPUT_LIMIT = 64 << 20
JSON_GROWTH = 6  # a byte becomes at most 6 in the reply ("\u0000")
REPLY_SLACK = 64 << 10
RELEASE_TIMEOUT = 5.0  # seconds to let go of every key and button: a hung X server holds up a failed batch no longer
Mode = Literal["wait", "detach", "outlive"]
_CLOSED = object()


@dataclass(frozen=True)
class Completed:
    """The outcome of a command run through the channel.

    ``stdout``/``stderr`` hold at most the first ``limit`` bytes of each (decoded as UTF-8,
    bad bytes replaced); ``stdout_bytes``/``stderr_bytes`` are how many bytes came in all.
    """

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    limit: int = OUTPUT_LIMIT
    timed_out: bool = False

    @property
    def cut(self) -> bool:
        """True when some output was thrown away past ``limit``."""
        return self.stdout_bytes > self.limit or self.stderr_bytes > self.limit

    @property
    def cut_note(self) -> str:
        """``"output cut: kept the first 1048576 of 3000000 bytes of stdout"``, or ``""``."""
        parts = [f"{total} bytes of {name}" for name, total in (("stdout", self.stdout_bytes),
                                                               ("stderr", self.stderr_bytes))
                 if total > self.limit]
        return f"output cut: kept the first {self.limit} of {' and '.join(parts)}" if parts else ""

    def check(self) -> Completed:
        """Return self, or raise :class:`CommandFailed` naming the command and its error."""
        if self.returncode != 0:
            detail = self.stderr.strip()[-2000:] or self.stdout.strip()[-2000:] or "no output"
            raise CommandFailed(f"{self.argv[0]} exited with {self.returncode}: {detail}")
        return self


class Channel:
    """Runs commands in a desktop through one held exec session. Thread-safe."""

    def __init__(self, api: docker.APIClient, container_id: str, name: str) -> None:
        self._api = api
        self._container_id = container_id
        self._name = name
        self._lock = threading.Lock()  # one exchange at a time
        self._sending = threading.RLock()  # the stream: opened, written and dropped by one thread at a time
        self._ids = itertools.count(1)
        self._stream: ExecStream | None = None
        self._replies: queue.Queue[object] = queue.Queue()
        self._reader: ReplyLines | None = None
        self.reopened = 0
        self._opened = 0

    def run(self, argv: list[str], *, stdin: str | None = None, timeout: float = 30.0,
            detach: bool = False, mode: Mode | None = None, limit: int = OUTPUT_LIMIT) -> Completed:
        """Run ``argv`` in the desktop as the desktop user and return how it ended.

        ``mode="wait"`` (the default) waits for it; ``detach=True`` (``mode="detach"``) starts
        it in its own session and returns at once, leaving it running; ``mode="outlive"`` waits
        for it but lets what it forks outlive the channel. ``limit`` bounds each output.
        Raises :class:`DesktopTimeout` when no answer comes within ``timeout`` (+ 5 s of
        grace), :class:`ChannelLost` when the channel broke under the command and
        :class:`~vdesk.errors.DesktopGone` when the desktop cannot be reached.
        """
        if not argv or not all(isinstance(arg, str) for arg in argv):
            raise InvalidArgument("argv must be a non-empty list of strings")
        if not 0 < limit <= MAX_OUTPUT_LIMIT:
            raise InvalidArgument(f"output limit must be 1..{MAX_OUTPUT_LIMIT} bytes, got {limit}")
        mode = mode or ("detach" if detach else "wait")
        request = {"id": next(self._ids), "argv": list(argv), "stdin": stdin,
                   "timeout": timeout, "mode": mode, "limit": limit}
        with self._lock:
            reply = self._exchange(request, timeout + 5, 2 * JSON_GROWTH * limit + REPLY_SLACK)
        return Completed(tuple(argv), int(reply["rc"]), str(reply.get("stdout", "")),
                         str(reply.get("stderr", "")), int(reply.get("stdout_bytes", 0)),
                         int(reply.get("stderr_bytes", 0)), limit, bool(reply.get("timed_out")))

    @contextmanager
    def input_batch(self) -> Iterator[InputBatch]:
        """Bracket a batch of input sent over X, so that nothing it pressed stays down: the
        in-container end is told first that keys and buttons may be held from now on. A block
        left after :meth:`InputBatch.sent` ends the batch; one left any other way (an error, a
        cancel that stopped it short, Ctrl-C) asks the desktop to let go of every key and button
        held, and returns once it has. A controller that dies inside the block (SIGKILL included)
        closes the channel, and the in-container end then lets go of them itself. A batch that
        completed leaves what it pressed on purpose (``press``, ``mouse_down``) held."""
        self._note({"input": "begin"})
        batch = InputBatch()
        try:
            yield batch
        finally:
            if batch.complete:
                self._end_input()
            else:
                self._release_input()

    def _note(self, note: dict) -> None:
        """Write ``note`` to the in-container end, which answers none: not behind an exchange
        that waits for its reply (a long command in another thread)."""
        line = (json.dumps(note) + "\n").encode()
        with self._sending:
            try:
                self._open().send(line)
            except DesktopGone:
                self._open(again=True).send(line)  # the channel dropped since the last request

    def _end_input(self) -> None:
        try:
            self._note({"input": "end"})
        except VdeskError:
            pass  # the input all went; a channel that cannot be reached is not this batch's failure

    def _release_input(self) -> None:
        """Every key and button held in the desktop let go, by its channel; a desktop that cannot
        be reached has nobody left to type into it, and its channel's end lets go too."""
        request = {"id": next(self._ids), "input": "release"}
        try:
            with self._lock:
                self._exchange(request, RELEASE_TIMEOUT, REPLY_SLACK)
        except VdeskError:
            pass

    def start(self) -> None:
        """Start the channel's program without waiting for it, so that the first command
        finds it running instead of waiting for its interpreter to start."""
        with self._lock:
            self._open()

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _exchange(self, request: dict, timeout: float, reply_cap: int) -> dict:
        what = request["argv"][0] if "argv" in request else "the input's release"
        line = (json.dumps(request) + "\n").encode()
        with self._sending:
            stream = self._open()
            assert self._reader is not None
            self._reader.cap = reply_cap
            try:
                stream.send(line)
            except DesktopGone:
                self._open(again=True).send(line)  # the channel dropped since the last request
                assert self._reader is not None
                self._reader.cap = reply_cap
            replies = self._replies
        deadline = time.monotonic() + timeout
        try:
            reply = replies.get(timeout=timeout)
            # An older in-container end answers the input's notes, which it does not know, with
            # replies to no request: they answer nothing.
            while isinstance(reply, dict) and reply.get("id") != request["id"]:
                reply = replies.get(timeout=max(deadline - time.monotonic(), 0))
        except queue.Empty:
            self._drop()  # ends the command, and a late reply must not answer the next request
            raise DesktopTimeout(f"{self._name}: {what} gave no answer within {timeout:g} s") from None
        except BaseException:
            self._drop()  # interrupted (Ctrl-C): the command in the desktop ends with the channel
            raise
        if reply is _CLOSED or isinstance(reply, str):
            self._drop()
            why = reply if isinstance(reply, str) else "the channel closed"
            raise ChannelLost(f"desktop {self._name}: {why} while running {what}")
        assert isinstance(reply, dict)
        return reply

    def _open(self, again: bool = False) -> ExecStream:
        with self._sending:
            if again:
                self._drop()
            if self._stream is None or self._stream.closed:
                self._replies = queue.Queue()
                self._reader = reader = ReplyLines(self._replies, self._name)
                self._stream = ExecStream(
                    self._api, self._container_id, [CHANNEL_PROGRAM],
                    on_data=reader.feed, on_close=lambda: reader.replies.put(_CLOSED), label=self._name,
                )
                reader.stream = self._stream
                self.reopened += self._opened  # every stream after the first replaces a dropped one
                self._opened = 1
            return self._stream

    def _drop(self) -> None:
        with self._sending:
            if self._stream is not None:
                self._stream.close()
            self._stream = None


@dataclass
class InputBatch:
    """A batch of input under :meth:`Channel.input_batch`: :meth:`sent` once all of it went."""

    complete: bool = False

    def sent(self) -> None:
        self.complete = True


class ReplyLines:
    """Splits the channel's output into replies, holding at most ``cap`` bytes of one reply.

    Chunks are kept in a list and joined once per reply: appending to one bytes object and
    splitting it again on every chunk made 20 MB take 7 s (quadratic); this is linear.
    """

    def __init__(self, replies: queue.Queue[object], name: str) -> None:
        self.replies = replies
        self.cap = REPLY_SLACK
        self.stream: ExecStream | None = None
        self._name = name
        self._parts: list[bytes] = []
        self._size = 0
        self._over = False

    def feed(self, data: bytes) -> None:
        if self._over:
            return
        while (end := data.find(b"\n")) >= 0:
            self._parts.append(data[:end])
            line = b"".join(self._parts)
            self._parts, self._size = [], 0
            data = data[end + 1:]
            try:
                self.replies.put(json.loads(line))
            except ValueError:
                self._give_up(f"the channel sent a reply that is not JSON ({len(line)} bytes)")
                return
        self._parts.append(data)
        self._size += len(data)
        if self._size > self.cap:
            self._give_up(f"the channel sent a reply over {self.cap} bytes, past its output bound")

    def _give_up(self, why: str) -> None:
        self._over = True
        self._parts, self._size = [], 0
        self.replies.put(why)
        if self.stream is not None:
            self.stream.close()

"""The lease that ties a desktop's life to the process that started it.

The holder keeps the stdin of ``vdesk-channel lease`` open inside the container. However the
holder dies — exception, Ctrl-C, SIGTERM, SIGKILL — the engine closes that stdin, the program
sees end-of-file within milliseconds and stops the desktop; an auto-removed container then
disappears. A desktop started with a lease that nobody takes up stops by itself after a short
grace period, so even a crash between ``docker run`` and taking the lease leaks nothing.
"""

from __future__ import annotations

import threading

import docker

from vdesk.errors import DesktopGone, DesktopTimeout
from vdesk.execstream import ExecStream

LEASE_ARGV = ["/usr/local/bin/vdesk-channel", "lease"]
GRACE_SECONDS = 15  # how long a leased desktop waits for its holder (entrypoint side)


class Lease:
    """Holds a desktop's lease until :meth:`release` (or until this process dies)."""

    def __init__(self, api: docker.APIClient, container_id: str, timeout: float = 10.0) -> None:
        answered = threading.Event()  # the program said "leased", or its stream ended
        taken = threading.Event()

        def on_data(_: bytes) -> None:
            taken.set()
            answered.set()

        self._stream = ExecStream(api, container_id, LEASE_ARGV, on_data=on_data, on_close=answered.set)
        if not answered.wait(timeout):
            self._stream.close()
            raise DesktopTimeout(f"the lease program of {container_id[:12]} did not answer within {timeout:g} s")
        if not taken.is_set():
            raise DesktopGone(f"desktop {container_id[:12]} stopped before its lease was taken")

    @property
    def held(self) -> bool:
        return not self._stream.closed

    def release(self) -> None:
        """Let go: the desktop stops itself."""
        self._stream.close()

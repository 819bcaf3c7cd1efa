"""Small helpers shared by the tests that run against Docker."""

from __future__ import annotations

import time

import docker


def vdesk_containers(client: docker.DockerClient) -> set[str]:
    """Names of every container labelled as a vdesk desktop, running or not."""
    # sparse: one list call, no per-container inspect that races with removals
    listed = client.containers.list(all=True, sparse=True, filters={"label": "vdesk=desktop"})
    return {c.attrs["Names"][0].lstrip("/") for c in listed}


def wait_gone(client: docker.DockerClient, name: str, timeout: float) -> float:
    """Seconds until container ``name`` no longer exists; raises AssertionError after ``timeout``."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if name not in vdesk_containers(client):
            return time.monotonic() - started
        time.sleep(0.05)
    raise AssertionError(f"container {name} still exists after {timeout} s")

"""The Docker engine as the tests reach it: on first use, never at import.

docker-py's ``from_env()`` contacts the engine as it is made, so a test module that made its
client at import turned a run of the pure tests (``-m "not desktop"``) on a machine without an
engine into collection errors. :data:`CLIENT` is made when a test first uses it.
"""

from __future__ import annotations

import functools
from typing import Any

import docker


@functools.cache
def docker_client() -> docker.DockerClient:
    return docker.from_env()


class _LazyClient:
    """Stands for :func:`docker_client`'s client; every attribute is read from it."""

    def __getattr__(self, name: str) -> Any:
        return getattr(docker_client(), name)


CLIENT: Any = _LazyClient()

"""Reaching a Docker engine, with one clear error when there is none."""

from __future__ import annotations

import docker
import docker.errors
import requests.exceptions

from vdesk.errors import EngineUnavailable

API_TIMEOUT = 60  # seconds for one API call; image builds stream and are not bound by it


def connect(engine: str | None = None) -> docker.DockerClient:
    """A client for ``engine`` (a ``DOCKER_HOST``-style URL) or the environment's default.

    Raises :class:`EngineUnavailable` with what to do when no engine answers.
    """
    where = engine or "the default Docker engine (DOCKER_HOST or /var/run/docker.sock)"
    try:
        client = docker.DockerClient(base_url=engine, timeout=API_TIMEOUT) if engine else docker.from_env(timeout=API_TIMEOUT)
        client.ping()
    except (docker.errors.DockerException, requests.exceptions.RequestException, OSError) as error:
        raise EngineUnavailable(
            f"no Docker engine answers at {where}: start one (e.g. `make engine`, or `dockerd &` as root) "
            f"or point DOCKER_HOST at one ({_short(error)})"
        ) from None
    return client


def _short(error: Exception) -> str:
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text[:160]

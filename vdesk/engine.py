"""Reaching a Docker engine, with one clear error when there is none.

An engine is named the way Docker names it: a ``DOCKER_HOST``-style URL (``unix://``,
``tcp://`` — with TLS from ``DOCKER_TLS_VERIFY``/``DOCKER_CERT_PATH`` as usual — or ``ssh://``),
or the name of a Docker context. Nothing is named: the environment's default engine.
"""

from __future__ import annotations

import os

import docker
import docker.errors
import requests.exceptions
from docker.context import ContextAPI

from vdesk.errors import EngineUnavailable

API_TIMEOUT = 60  # seconds for one API call; image builds stream and are not bound by it
PING_TIMEOUT = 10  # an engine that accepts connections but never answers is reported sooner


def connect(engine: str | None = None) -> docker.DockerClient:
    """A client for ``engine`` (URL or context name) or the environment's default.

    Raises :class:`EngineUnavailable` with what to do when no engine answers.
    """
    where = engine or "the default Docker engine (DOCKER_HOST or /var/run/docker.sock)"
    try:
        client = _client(engine)
        client.api.timeout = PING_TIMEOUT
        client.ping()
        client.api.timeout = API_TIMEOUT
    except (docker.errors.DockerException, requests.exceptions.RequestException, OSError) as error:
        raise EngineUnavailable(
            f"no Docker engine answers at {where}: start one (e.g. `make engine`, or `dockerd &` as root) "
            f"or point DOCKER_HOST at one ({_root_cause(error)})"
        ) from None
    return client


def _client(engine: str | None) -> docker.DockerClient:
    if engine is None:
        return docker.from_env(timeout=API_TIMEOUT)
    if "://" in engine:
        environment = {**os.environ, "DOCKER_HOST": engine}
        # ssh:// goes through the system's ssh client, so ~/.ssh/config and agents apply.
        return docker.from_env(environment=environment, timeout=API_TIMEOUT,
                               use_ssh_client=engine.startswith("ssh://"))
    context = ContextAPI.get_context(engine)
    if context is None:
        raise EngineUnavailable(f"no Docker context named {engine!r} (see `docker context ls`)")
    return docker.DockerClient(base_url=context.Host, tls=context.TLSConfig, timeout=API_TIMEOUT,
                               use_ssh_client=str(context.Host).startswith("ssh://"))


def _root_cause(error: BaseException) -> str:
    """The root cause, whole: ``Connection refused`` rather than the first 160 characters of
    the five wrappers around it (docker → requests → urllib3 → the socket's error)."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror
        reason = getattr(cause, "reason", None)
        cause = cause.__cause__ or cause.__context__ or (reason if isinstance(reason, BaseException) else None)
    return " ".join(str(error).split()) or type(error).__name__

"""Fixtures for the protocol front doors on real desktops in real containers: `vdesk mcp` as a
subprocess, reached with the MCP SDK's own client over stdio and over streamable HTTP. The
Gymnasium environment's and the agent SDKs' tests drive tests/conftest.py's shared desktop."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator

import docker
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


VDESK = str(Path(sys.executable).with_name("vdesk"))
TOKEN = "test-token-" + "x" * 24
START = 120.0  # seconds a server (and a first desktop on a loaded machine) may take


def stdio(*args: str) -> StdioServerParameters:
    """`vdesk mcp ARGS` as an MCP client starts it."""
    return StdioServerParameters(command=VDESK, args=["mcp", *args], env=dict(os.environ))


@dataclass
class HttpServer:
    process: subprocess.Popen[str]
    url: str
    token: str

    @asynccontextmanager
    async def client(self, token: str | None = None) -> AsyncIterator[Client]:
        headers = {"Authorization": f"Bearer {token or self.token}"}
        timeout = httpx2.Timeout(30.0, read=START)  # a first call starts a desktop
        async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http, \
                Client(streamable_http_client(self.url, http_client=http), read_timeout_seconds=START) as client:
            yield client


@contextmanager
def http_server(*args: str) -> Iterator[HttpServer]:
    """`vdesk mcp --transport http` on a free port, stopped (and its desktops gone) at the end."""
    process = subprocess.Popen([VDESK, "mcp", "--transport", "http", "--port", "0", "--token", TOKEN, *args],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stderr.readline()  # type: ignore[union-attr]
        assert "serving MCP at " in line, line
        yield HttpServer(process, line.split("serving MCP at ")[1].strip(), TOKEN)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def container_exists(name: str) -> bool:
    try:
        docker.from_env().containers.get(name)
        return True
    except docker.errors.NotFound:
        return False


def wait_gone(name: str, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not container_exists(name):
            return True
        time.sleep(0.2)
    return False


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    return result.structured_content

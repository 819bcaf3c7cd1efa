"""Joining a Ray cluster, and the nodes in it that offer desktops.

Nodes offer desktops through the custom resource ``vdesk_desktop`` (its amount on a node is
how many desktops the node may hold), e.g. ``ray start --resources '{"vdesk_desktop": 8}'``.
Every node needs Docker, the desktop image and vdesk installed.
"""

from __future__ import annotations

import logging
import os
import socket
from dataclasses import dataclass

import ray

from vdesk.errors import ClusterError, first_line

RESOURCE = "vdesk_desktop"


def connect(address: str) -> bool:
    """Join the Ray cluster at ``address`` (``HOST:PORT`` of its head, or ``auto``) unless this
    process is in one already. Returns True when this call joined, so the caller leaves it."""
    if ray.is_initialized():
        return False
    _check_reachable(address)
    try:
        ray.init(address=address, namespace="vdesk", logging_level=logging.WARNING, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as error:  # ValueError: an address Ray cannot parse
        raise ClusterError(f"could not join the Ray cluster at {address}: {first_line(error)}{_auth_hint()}") from None
    return True


def leave() -> None:
    """Leave the cluster (what :func:`connect` joined); its actors, and so their desktops, end."""
    ray.shutdown()


def _auth_hint() -> str:
    # Ray turns token authentication on for a driver that joins by address only when told to.
    if os.environ.get("RAY_AUTH_MODE", "").lower() == "token":
        return ""
    return (" (if the cluster uses token authentication, set RAY_AUTH_MODE=token here, with the "
            "cluster's token in RAY_AUTH_TOKEN or ~/.ray/auth_token)")


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast when nothing listens at ``HOST:PORT``: ``ray.init`` would retry for many minutes."""
    host, _, port = address.rpartition(":")
    if "://" in address or not host or not port.isdigit():
        return  # "auto" or a ray:// client address: Ray resolves those itself
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as error:
        raise ClusterError(f"no Ray cluster answers at {address} ({error}): start one with "
                         f"`ray start --head --resources '{{\"{RESOURCE}\": N}}'`") from None


@dataclass(frozen=True)
class ClusterNode:
    """A live node that offers desktops."""

    id: str
    address: str
    slots: int  # its amount of vdesk_desktop: how many desktops it may hold


def desktop_nodes() -> list[ClusterNode]:
    """The live nodes with a ``vdesk_desktop`` resource."""
    nodes = []
    for entry in ray.nodes():
        slots = int(entry.get("Resources", {}).get(RESOURCE, 0))
        if entry.get("Alive") and slots > 0:
            nodes.append(ClusterNode(entry["NodeID"], entry.get("NodeManagerAddress", "?"), slots))
    return nodes

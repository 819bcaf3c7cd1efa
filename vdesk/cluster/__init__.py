"""What runs on a Ray cluster: desktops hosted in actors, joining the cluster, placing
episodes over its nodes, and a suite's episodes placed there.

    from vdesk.cluster import DesktopSpec, RemoteDesktop, connect, run_episodes

* :mod:`vdesk.cluster.actors`: :class:`RemoteDesktop`, a desktop in a Ray actor on a node;
* :mod:`vdesk.cluster.membership`: :func:`connect` and the nodes that offer desktops;
* :mod:`vdesk.cluster.scheduler`: :func:`run_episodes`, many items over the nodes, with retries;
* :mod:`vdesk.cluster.placement`: a suite run's episodes on the cluster (for the harness).

Ray is an optional dependency (``pip install 'vdesk[ray]'``): without it, importing this
package raises :class:`~vdesk.errors.MissingDependency`.
"""

from vdesk.errors import MissingDependency

try:
    import ray  # noqa: F401  (absolute: the Ray package, which every module here needs)
except ImportError as missing:
    raise MissingDependency("vdesk.cluster needs Ray: pip install 'vdesk[ray]'") from missing

from vdesk.cluster.actors import DesktopLost, NodeCheckpoint, RemoteDesktop, RemoteInfo, move_checkpoint, remove_checkpoint
from vdesk.cluster.membership import RESOURCE, ClusterNode, connect, desktop_nodes
from vdesk.cluster.scheduler import Attempt, EpisodeOutcome, Hooks, run_episodes
from vdesk.spec import DesktopSpec  # the one spec of a desktop, here too: what a remote one is started as

__all__ = ["RESOURCE", "Attempt", "DesktopLost", "DesktopSpec", "EpisodeOutcome", "Hooks", "ClusterNode", "NodeCheckpoint",
           "RemoteDesktop", "RemoteInfo", "connect", "desktop_nodes", "move_checkpoint", "remove_checkpoint",
           "run_episodes"]

"""Desktops on a real Ray cluster of two nodes on this machine, started (and stopped) by the tests.

Each node is a ``ray start --block`` process with its own temporary folder and ports, offering
two ``vdesk_desktop`` slots. Killing the second node's raylet is a node dying: its workers die
with it, the leases remove their desktops, and the items it ran are retried on the head.
Nodes are stopped by process id, never with ``ray stop`` (which would stop every Ray on the machine).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import ray

from vdesk.desktop import Desktop
from vdesk import forks
from vdesk.errors import DesktopGone, DesktopNotFound, InvalidArgument, VdeskError
from vdesk.harness.agents import ScriptedAgent
from vdesk.harness.record import episode_folders, load_run
from vdesk.harness.report import write_report
from vdesk.harness.runner import run_suite
from vdesk.harness.suite import SuiteEvent, SuiteSummary
from vdesk.harness.tasks import load_suite
from vdesk.cluster import (DesktopSpec, RemoteDesktop, connect, desktop_nodes, move_checkpoint, remove_checkpoint,
                           run_episodes)
from vdesk.cluster.placement import ClusterPlacement

RAY = str(Path(sys.executable).parent / "ray")
VDESK = str(Path(sys.executable).parent / "vdesk")
SUITE = Path(__file__).resolve().parents[2] / "examples" / "suite"
# One task per kind of check: region (terminal-clear), window, command and file.
EVAL_TASKS = ("terminal-clear", "terminal-title", "clipboard-copy", "terminal-echo")
SLOTS = 2  # vdesk_desktop per node
CLICK = [{"type": "click", "inputs": {"point": {"raw": {"x": 40, "y": 30}}}}]
# Ray notices a dead node after period × threshold; the defaults would take far longer, and a
# shorter one takes a node starved of CPU for a few seconds (a loaded CI machine) for dead.
# Authentication is off for the nodes as it is for the driver, which joins by address: a token
# another Ray left in ~/.ray/auth_token would otherwise turn it on for the nodes alone.
NODE_ENVIRONMENT = {"RAY_health_check_period_ms": "1000", "RAY_health_check_failure_threshold": "10",
                    "RAY_AUTH_MODE": "disabled"}
START_TIMEOUT = 90.0
STOP_TIMEOUT = 30.0
from tests.engine import CLIENT  # noqa: E402  (made on first use, not at import)
RUN_TOKEN = secrets.token_hex(6)  # marks the desktops these tests start (others run desktops too)
SPEC = DesktopSpec(size=(800, 600), environment={"VDESK_TEST_RUN": RUN_TOKEN})


@dataclass
class RayNode:
    process: subprocess.Popen[bytes]
    temp_dir: Path
    log: Path


@dataclass
class Cluster:
    address: str
    head: RayNode
    second: RayNode
    head_id: str
    second_id: str


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_node(*args: str, environment: dict[str, str] | None = None) -> RayNode:
    """``ray start --block`` with its own temporary folder, dashboard-agent port and OS-chosen worker ports."""
    temp_dir = Path(tempfile.mkdtemp(prefix="vdesk-ray-", dir="/tmp"))  # short: Ray puts sockets in it
    log = temp_dir / "start.log"
    argv = [RAY, "start", "--block", *args, "--num-cpus", str(SLOTS), "--resources", f'{{"vdesk_desktop": {SLOTS}}}',
            "--disable-usage-stats", "--temp-dir", str(temp_dir), "--dashboard-agent-listen-port", str(free_port()),
            "--min-worker-port", "0", "--max-worker-port", "0"]
    with log.open("wb") as output:
        process = subprocess.Popen(argv, stdout=output, stderr=subprocess.STDOUT, env={**os.environ, **NODE_ENVIRONMENT, **(environment or {})})
    return RayNode(process, temp_dir, log)


def descendants(pid: int) -> list[int]:
    """Every process below ``pid``, read from /proc (children before grandchildren)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue  # it ended while we looked
            parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        children = parents.get(todo.pop(0), [])
        found += children
        todo += children
    return found


def command_of(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def stop_node(node: RayNode) -> None:
    """SIGTERM the node's ``ray start`` (it stops its own processes), then SIGKILL whatever of its tree is left."""
    tree = descendants(node.process.pid)
    if node.process.poll() is None:
        node.process.send_signal(signal.SIGTERM)
        try:
            node.process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            node.process.kill()
            node.process.wait(timeout=STOP_TIMEOUT)
    for pid in tree:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    shutil.rmtree(node.temp_dir, ignore_errors=True)


def wait_for_nodes(count: int, nodes: list[RayNode]) -> list[str]:
    """IDs of the live desktop nodes once there are ``count``; fails with the nodes' logs otherwise."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        live = desktop_nodes()
        if len(live) == count:
            return [node.id for node in live]
        for node in nodes:
            if node.process.poll() is not None:
                pytest.fail(f"ray start exited: {node.log.read_text()[-3000:]}")
        time.sleep(0.5)
    pytest.fail(f"{count} nodes did not join within {START_TIMEOUT:g} s")


def own_desktops(*, alive_only: bool = False) -> set[str]:
    """Names of the desktops these tests started (found by the marker in their environment)."""
    found = set()
    for container in CLIENT.containers.list(all=True, filters={"label": "vdesk=desktop"}, ignore_removed=True):
        env = container.attrs.get("Config", {}).get("Env") or []
        if f"VDESK_TEST_RUN={RUN_TOKEN}" in env and (not alive_only or container.status == "running"):
            found.add(container.name)
    return found



def wait_gone(name: str, timeout: float) -> float:
    """Seconds until desktop ``name`` no longer exists. (Listing with ignore_removed: desktops
    of other tests vanish between the engine's list and its inspect.)"""
    started = time.monotonic()
    while name in own_desktops():
        assert time.monotonic() - started < timeout, f"desktop {name} still exists after {timeout} s"
        time.sleep(0.05)
    return time.monotonic() - started


def wait_gone_by_name(name: str, timeout: float) -> None:
    """Wait until no container is named ``name`` (for desktops started without the test marker)."""
    deadline = time.monotonic() + timeout
    while CLIENT.containers.list(all=True, filters={"name": f"^/{name}$"}, ignore_removed=True):
        assert time.monotonic() < deadline, f"desktop {name} still exists after {timeout} s"
        time.sleep(0.1)


def wait_none_left(timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while own_desktops() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not own_desktops(), f"desktops left behind: {sorted(own_desktops())}"


def start_head(port: int, environment: dict[str, str] | None = None) -> RayNode:
    """A head node, once its GCS answers (a second node or a driver can join then)."""
    head = start_node("--head", "--port", str(port), "--include-dashboard=false", "--dashboard-port", str(free_port()),
                      "--ray-client-server-port", str(free_port()), environment=environment)
    deadline = time.monotonic() + START_TIMEOUT
    while not _answers(port):
        if head.process.poll() is not None or time.monotonic() > deadline:
            log = head.log.read_text()[-3000:]
            stop_node(head)
            pytest.fail(f"the head did not start: {log}")
        time.sleep(0.3)
    return head


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """A head and a second node on this machine; the test process joins as the driver."""
    port = free_port()
    address = f"127.0.0.1:{port}"
    head = start_head(port)
    nodes = [head]
    try:
        connect(address)
        head_id = wait_for_nodes(1, nodes)[0]
        second = start_node("--address", address)
        nodes.append(second)
        second_id = next(n for n in wait_for_nodes(2, nodes) if n != head_id)
        yield Cluster(address, head, second, head_id, second_id)
    finally:
        ray.shutdown()
        for node in reversed(nodes):
            stop_node(node)
        wait_none_left(timeout=20)


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def kill_node(node: RayNode) -> None:
    """A node dies: SIGKILL its raylet (its workers and their desktops go with it)."""
    raylets = [pid for pid in descendants(node.process.pid) if "/raylet/raylet" in command_of(pid)]
    assert len(raylets) == 1, raylets
    os.kill(raylets[0], signal.SIGKILL)


def window_count(desktop: Desktop) -> int:
    return len(desktop.windows.list())


def clicks_seen(desktop: Desktop, actions: list[dict]) -> list[tuple[str, int, int, int]]:
    """On the node: the button events an X client there receives when ``actions`` run."""
    from tests.desktop.probe import EventProbe, buttons

    with EventProbe(desktop) as probe:
        assert desktop.input.execute(actions).status == "success"
        return buttons(probe.events())


def width_plus(desktop: Desktop, extra: int) -> int:
    return desktop.screen.width + extra


# -- the tests: the node-killing one comes last ------------------------------------------------
def test_an_actor_hosted_desktop_clicks_and_returns_frames_of_its_size(cluster):
    with RemoteDesktop.up(SPEC) as desktop:
        assert desktop.node_id in (cluster.head_id, cluster.second_id)
        assert desktop.name in own_desktops(alive_only=True)
        result = desktop.input.execute(CLICK, settle=True)
        assert result.status == "success" and result.executed == 1, result
        assert desktop.call(clicks_seen, CLICK) == [("button_press", 1, 40, 30), ("button_release", 1, 40, 30)]
        assert desktop.screen.shot().size == (800, 600)
        assert desktop.screenshot_bytes("jpeg").startswith(b"\xff\xd8")
        assert desktop.screen.settle().size == (800, 600)
        assert desktop.programs.run(["true"], wait=True).returncode == 0
        usage = desktop.usage()  # the container, and the worker hosting it
        assert desktop.call(width_plus, 1) == 801  # run on the node
        before = desktop.call(window_count)
        desktop.programs.run(["xterm", "-title", "counted"])
        deadline = time.monotonic() + 30
        while desktop.call(window_count) != before + 1 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert desktop.call(window_count) == before + 1
        assert usage.memory_mib > 0 and usage.cpu_seconds > 0 and usage.host_memory_mib > 0
        assert desktop.input.execute([{"type": "nonsense"}]).status == "failed"  # refused, not raised
        name = desktop.name
    wait_gone(name, timeout=10)


def test_killing_the_actor_removes_its_desktop(cluster):
    desktop = RemoteDesktop.up(SPEC, node_id=cluster.second_id)
    try:
        assert desktop.node_id == cluster.second_id
        desktop.kill()
        print(f"desktop gone {wait_gone(desktop.name, timeout=10):.2f} s after the actor was killed")
        with pytest.raises(DesktopGone, match="closed"):
            desktop.screen.shot()  # it refuses at once
    finally:
        desktop.close()


def test_a_desktop_that_cannot_start_says_why(cluster):
    with pytest.raises(InvalidArgument, match="size 10x10 is outside"):  # refused here, before any actor
        RemoteDesktop.up(DesktopSpec(size=(10, 10)))
    with pytest.raises(VdeskError, match="did not start on the node.*no-such-image"):
        RemoteDesktop.up(DesktopSpec(image="vdesk/no-such-image:0"))


def home_file(desktop: Desktop, name: str) -> str:
    return desktop.programs.run(["sh", "-c", 'cat ~/"$1"', "sh", name], wait=True).stdout


def test_a_checkpoint_forks_and_restores_on_the_node_that_holds_it_only(cluster):
    with RemoteDesktop.up(SPEC, node_id=cluster.second_id) as original:
        original.programs.run(["sh", "-c", "echo set up > ~/mark"], wait=True).check()
        start = original.checkpoint()
        try:
            assert start.node_id == cluster.second_id and start.checkpoint.source == original.name
            with pytest.raises(InvalidArgument, match=f"checkpoint {start.name} is on node {cluster.second_id[:8]}"):
                RemoteDesktop.fork(start, node_id=cluster.head_id)
            (fork,) = RemoteDesktop.fork(start)  # the node's second slot (the original holds the first)
            try:
                assert fork.node_id == cluster.second_id and fork.name != original.name
                assert fork.call(home_file, "mark") == "set up\n"
                fork.programs.run(["sh", "-c", "echo changed > ~/mark"], wait=True).check()
                assert (fork.call(home_file, "mark"), original.call(home_file, "mark")) == ("changed\n", "set up\n")
            finally:
                fork.close()
                wait_gone_by_name(fork.name, timeout=10)
            original.programs.run(["sh", "-c", "echo later > ~/mark"], wait=True).check()
            original.restore(start)  # in place, on its node
            assert original.call(home_file, "mark") == "set up\n"
        finally:
            remove_checkpoint(start)
    assert start.name not in {checkpoint.name for checkpoint in forks.list_checkpoints(CLIENT)}
    with pytest.raises(DesktopNotFound, match=f"no checkpoint named '{start.name}'"):
        remove_checkpoint(start)
    remove_checkpoint(start, missing_ok=True)  # a run's cleanup after a `vdesk prune` got there first


def test_a_checkpoint_moved_to_another_node_forks_there(cluster):
    with RemoteDesktop.up(SPEC, node_id=cluster.second_id) as original:
        original.programs.run(["sh", "-c", "echo set up > ~/mark"], wait=True).check()
        start = original.checkpoint()
    try:
        # Both nodes of this cluster share one engine, so the copy takes another name there.
        moved = move_checkpoint(start, cluster.head_id, name=f"{start.name}-moved")
        try:
            assert moved.node_id == cluster.head_id and moved.checkpoint.size == start.checkpoint.size
            (fork,) = RemoteDesktop.fork(moved)
            with fork:
                assert fork.node_id == cluster.head_id and fork.call(home_file, "mark") == "set up\n"
            wait_gone_by_name(fork.name, timeout=10)
            with pytest.raises(InvalidArgument, match="already exists here"):
                move_checkpoint(start, cluster.head_id, name=moved.name)
        finally:
            remove_checkpoint(moved)
    finally:
        remove_checkpoint(start)
    left = {checkpoint.name for checkpoint in forks.list_checkpoints(CLIENT)}
    assert not {start.name, moved.name} & left


def test_an_item_past_its_timeout_fails_and_leaves_nothing(cluster):
    def work(desktop: RemoteDesktop, item: int) -> None:
        names.append(desktop.name)
        desktop.screen.wait_for_change(timeout=300)  # a still screen: only the item's timeout ends this

    names: list[str] = []
    started = time.monotonic()
    [outcome] = run_episodes(work, [0], parallel=1, per_node=1, timeout=20, spec=SPEC)
    assert not outcome.ok and "timed out after 20 s" in outcome.error and not outcome.retried
    assert time.monotonic() - started < 20 + 15
    for name in names:
        wait_gone(name, timeout=10)


def test_an_item_whose_desktop_is_still_starting_at_its_timeout_times_out_once_and_leaves_nothing(cluster):
    # No desktop comes up on a Ray node within 0.3 s (a worker process and a container start):
    # the item's own time runs out during the start, which is the item timing out, not its node
    # failing to start a desktop (that would be retried elsewhere).
    ran: list[int] = []
    started = time.monotonic()
    [outcome] = run_episodes(lambda desktop, item: ran.append(item), [0], parallel=1, per_node=1,
                             timeout=0.3, spec=SPEC)
    assert outcome.error == "timed out after 0.3 s" and not outcome.retried and len(outcome.attempts) == 1
    assert not ran and time.monotonic() - started < 0.3 + 15
    wait_none_left(timeout=30)
    assert not own_desktops()


def test_a_failing_item_fails_once_and_is_not_retried(cluster):
    def work(desktop: RemoteDesktop, item: int) -> str:
        if item == 1:
            raise ValueError("the task itself failed")
        return desktop.name

    outcomes = run_episodes(work, [0, 1], parallel=2, per_node=1, timeout=120, spec=SPEC)
    assert [o.index for o in outcomes] == [0, 1]
    assert outcomes[0].ok and outcomes[0].result.startswith("vdesk-")
    assert not outcomes[1].ok and "ValueError: the task itself failed" in outcomes[1].error
    assert not any(o.retried for o in outcomes) and all(len(o.attempts) == 1 for o in outcomes)
    assert {o.attempts[0].node_id for o in outcomes} == {cluster.head_id, cluster.second_id}  # per_node=1 spreads them


def test_an_item_whose_desktop_did_not_start_runs_again_elsewhere_and_the_node_is_avoided(cluster):
    tries: list[int] = []

    def spec(item: int) -> DesktopSpec:  # item 0's first try names an image no node has
        tries.append(item)
        return SPEC.model_copy(update={"image": "vdesk/no-such-image:0"}) if tries == [0] else SPEC

    # One at a time: item 1 starts after item 0's retry, with both nodes idle.
    outcomes = run_episodes(lambda desktop, item: desktop.node_id, [0, 1], parallel=1, per_node=1,
                            timeout=120, spec=spec)
    assert all(o.ok for o in outcomes), outcomes
    retried, then = outcomes
    assert retried.retried and not then.retried
    first, last = retried.attempts
    assert first.desktop is None and first.lost and "no-such-image" in retried.first_error
    assert last.node_id != first.node_id and retried.result == last.node_id
    assert then.result == last.node_id  # not the node that just failed a desktop, idle as it was


def test_items_survive_a_node_dying_mid_run(cluster):
    on_second = threading.Event()
    seen: list[str] = []

    def work(desktop: RemoteDesktop, item: int) -> dict[str, object]:
        seen.append(desktop.name)
        if desktop.node_id == cluster.second_id:
            on_second.set()
        steps, until = 0, time.monotonic() + 5
        while time.monotonic() < until:
            assert desktop.input.execute(CLICK, settle=True).status == "success"
            assert desktop.screen.shot().size == (800, 600)
            steps += 1
        return {"item": item, "node": desktop.node_id, "steps": steps}

    def killer() -> None:
        if on_second.wait(timeout=120):
            time.sleep(1.5)  # well into the items' stepping
            kill_node(cluster.second)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    lines: list[str] = []
    outcomes = run_episodes(work, list(range(6)), parallel=4, per_node=2, timeout=120, spec=SPEC,
                            progress=lines.append)
    thread.join(timeout=5)
    print("\n".join(lines))

    assert on_second.is_set(), "no item ran on the second node"
    assert len(outcomes) == 6 and all(o.ok for o in outcomes), [(o.index, o.error) for o in outcomes]
    retried = [o for o in outcomes if o.retried]
    assert any(o.attempts[0].desktop and o.attempts[0].node_id == cluster.second_id for o in retried), \
        "no item running on the node that died was retried"
    for outcome in retried:
        first, last = outcome.attempts[0], outcome.attempts[-1]
        assert first.lost and last.error is None
        if first.desktop is not None:  # it ran on the node that died
            assert first.node_id == cluster.second_id and "DesktopLost" in outcome.first_error
            assert last.node_id == cluster.head_id and outcome.result["node"] == cluster.head_id
        # else it was placed before Ray noticed the death, or its desktop did not come up on the
        # busy head: nothing of it had run
    for outcome in outcomes:
        if not outcome.retried:
            assert len(outcome.attempts) == 1 and outcome.first_error is None
    assert cluster.second_id not in {n.id for n in desktop_nodes()}
    wait_none_left(timeout=15)


def example_suite(folder: Path, task_ids: tuple[str, ...]) -> Path:
    """A suite of some of the example tasks, with the reference images they name."""
    folder.mkdir()
    for task_id in task_ids:
        shutil.copy(SUITE / f"{task_id}.yaml", folder)
    shutil.copytree(SUITE / "references", folder / "references")
    return folder


def episode_files(folder: Path) -> list[str]:
    return sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file())


def slow_suite(folder: Path, count: int, seconds: int) -> Path:
    """Tasks that step for about ``seconds`` (one wait a step), then write a file that is checked."""
    folder.mkdir()
    for index in range(count):
        steps = [[{"type": "wait", "inputs": {"time": 1}}]] * seconds
        steps.append([{"type": "type", "inputs": {"content": f"echo {index} > ~/done.txt\n"}}])
        (folder / f"slow-{index}.json").write_text(json.dumps({
            "id": f"slow-{index}", "instruction": "Wait, then write the file.", "desktop": {"size": "640x480"},
            "setup": [{"start": "xterm -geometry 80x24+0+0 -title Terminal -e env 'PS1=$ ' bash --norc --noprofile"},
                      {"wait_window": "Terminal"}],
            "checks": [{"file": "~/done.txt", "equals": f"{index}\n"}], "max_steps": seconds + 2, "time_limit": 120,
            "solution": steps}))
    return folder


# -- suites over the cluster (after the node-killing test above: a fresh node stands in for it) ----
@dataclass
class TwoNodes:
    head_id: str
    other: RayNode
    other_id: str


@pytest.fixture(scope="module")
def two_nodes(cluster: Cluster) -> Iterator[TwoNodes]:
    """The head and one more live node: the second one, or (once a test killed it) a node that
    joins now and is stopped after the module's tests."""
    if cluster.second_id in {node.id for node in desktop_nodes()}:
        yield TwoNodes(cluster.head_id, cluster.second, cluster.second_id)
        return
    spare = start_node("--address", cluster.address)
    try:
        spare_id = next(n for n in wait_for_nodes(2, [cluster.head, spare]) if n != cluster.head_id)
        yield TwoNodes(cluster.head_id, spare, spare_id)
    finally:
        stop_node(spare)


def test_eval_on_the_cluster_writes_the_same_run_folder_as_a_local_eval(cluster, two_nodes, tmp_path):
    head_id, spare_id = two_nodes.head_id, two_nodes.other_id
    suite = example_suite(tmp_path / "suite", EVAL_TASKS)
    out = tmp_path / "cluster"
    started = time.monotonic()
    done = subprocess.run([VDESK, "eval", str(suite), "--ray", cluster.address, "--parallel", "4", "--per-node", "2",
                           "--out", str(out)], capture_output=True, text=True, timeout=300)
    cluster_s = time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(EVAL_TASKS)}/{len(EVAL_TASKS)} passed" in done.stdout

    summary = SuiteSummary.model_validate_json((out / "results.json").read_text())
    assert summary.success_rate == 1.0 and summary.ray_address == cluster.address and summary.per_node == 2
    assert [o.task_id for o in summary.episodes] == sorted(EVAL_TASKS)
    nodes = {o.attempts[0].node for o in summary.episodes}
    assert nodes == {head_id, spare_id}  # two at a time on each
    assert all(not o.retried and len(o.attempts) == 1 for o in summary.episodes)
    for name in [o.attempts[0].desktop for o in summary.episodes]:
        wait_gone_by_name(name, timeout=15)

    # The same task run here: the same files, the same final frame.
    started = time.monotonic()
    local = run_suite(load_suite(suite / "terminal-clear.yaml"), ScriptedAgent, out=tmp_path / "local")
    print(f"{len(EVAL_TASKS)} tasks on the cluster: {cluster_s:.1f} s; one task here: {time.monotonic() - started:.1f} s")
    assert local.success_rate == 1.0
    assert episode_files(out / "terminal-clear") == episode_files(tmp_path / "local" / "terminal-clear")
    remote_run = load_run(out / "terminal-clear")
    assert remote_run.outcome.final_hash == local.episodes[0].final_hash
    for folder in episode_folders(out):
        run = load_run(folder)
        assert run.outcome.success and run.steps and all((folder / step.frame).is_file() for step in run.steps)

    report = subprocess.run([VDESK, "report", str(out)], capture_output=True, text=True, timeout=120)
    assert report.returncode == 0 and (out / "report.html").is_file(), report.stderr


def test_a_suite_forked_after_setup_runs_each_task_s_episodes_on_its_checkpoint_s_node(cluster, two_nodes, tmp_path):
    from tests.harness.test_forked_suite import PRUNED_WITH, forked_task, pruning

    with pruning(CLIENT, RUN_TOKEN) as removed:  # the run holds its checkpoint on its node
        summary = run_suite([forked_task()], ScriptedAgent, out=tmp_path / "run", parallel=2, repeats=2,
                            fork_after_setup=True, placement=ClusterPlacement(cluster.address),
                            environment={"VDESK_TEST_RUN": RUN_TOKEN, PRUNED_WITH: RUN_TOKEN})
    failed = {o.task_id: o.error or [c.detail for c in o.checks if not c.passed] for o in summary.episodes if not o.success}
    assert not failed  # each fork saw the setup's file and program, and kept its own change
    (checkpoint,) = {o.forked_from for o in summary.episodes}
    assert checkpoint not in removed
    assert checkpoint and all(o.setup_s and o.fork_s and o.repeat_of == "forked" for o in summary.episodes)
    nodes = {o.attempts[-1].node for o in summary.episodes}
    assert len(nodes) == 1 and nodes <= {two_nodes.head_id, two_nodes.other_id}  # the checkpoint's node
    assert checkpoint not in {c.name for c in forks.list_checkpoints(CLIENT)}
    wait_none_left(timeout=20)


def test_eval_on_an_unreachable_cluster_is_one_line(tmp_path):
    suite = example_suite(tmp_path / "suite", EVAL_TASKS[:1])
    address = f"127.0.0.1:{free_port()}"
    done = subprocess.run([VDESK, "eval", str(suite), "--ray", address, "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"no Ray cluster answers at {address}" in done.stderr and "Traceback" not in done.stderr


def desktops_of(nodes: list[RayNode]) -> set[str]:
    """Names of the desktops whose lease is held by a process of these nodes (their actors' workers)."""
    pids = {str(pid) for node in nodes for pid in [node.process.pid, *descendants(node.process.pid)]}
    listed = CLIENT.api.containers(all=True, filters={"label": "vdesk=desktop"})
    return {name.lstrip("/") for item in listed if item["Labels"].get("vdesk.owner", "").rsplit(":", 1)[-1] in pids
            for name in item["Names"]}


def test_a_cluster_with_token_authentication_is_joined_with_its_token_and_named_without():
    token = secrets.token_hex(32)
    port = free_port()
    head = start_head(port, {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token})
    join = [sys.executable, "-c", "import sys; from vdesk.cluster import connect, desktop_nodes; "
            "connect(sys.argv[1]); print(len(desktop_nodes()))", f"127.0.0.1:{port}"]
    bare = {name: value for name, value in os.environ.items() if not name.startswith("RAY_AUTH")}
    try:
        joined = subprocess.run(join, env={**bare, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token},
                                capture_output=True, text=True, timeout=120)
        assert joined.returncode == 0 and joined.stdout.strip() == "1", joined.stderr[-2000:]
        refused = subprocess.run(join, env=bare, capture_output=True, text=True, timeout=180)
        assert refused.returncode != 0 and "set RAY_AUTH_MODE=token" in refused.stderr, refused.stderr[-2000:]
    finally:
        stop_node(head)


def test_ctrl_c_during_an_eval_on_the_cluster_leaves_no_desktop(cluster, two_nodes, tmp_path):
    nodes = [cluster.head, two_nodes.other]
    suite = slow_suite(tmp_path / "suite", count=4, seconds=20)
    process = subprocess.Popen([VDESK, "eval", str(suite), "--ray", cluster.address, "--parallel", "4",
                                "--out", str(tmp_path / "out")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 90
        while len(desktops_of(nodes)) < 4 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.2)
        assert len(desktops_of(nodes)) == 4
        time.sleep(2)  # the episodes are stepping
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    deadline = time.monotonic() + 60  # four removals on a loaded 2-core machine, counted from the exit
    while desktops_of(nodes) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not desktops_of(nodes), stderr
    summary = SuiteSummary.model_validate_json((tmp_path / "out" / "results.json").read_text())
    assert summary.interrupted and [o.status for o in summary.episodes] == ["cancelled"] * 4, (
        [(o.task_id, o.status, o.error) for o in summary.episodes], stderr)


def test_an_eval_survives_a_node_dying_mid_suite(cluster, two_nodes, tmp_path):
    head_id, spare, spare_id = two_nodes.head_id, two_nodes.other, two_nodes.other_id
    tasks = load_suite(slow_suite(tmp_path / "suite", count=6, seconds=8))
    started: list[str] = []
    retrying: list[SuiteEvent] = []
    four_running = threading.Event()

    def on_event(event: SuiteEvent) -> None:
        if event.kind == "started":
            started.append(event.task_id)
            if len(started) == 4:  # two on each node (per_node=2)
                four_running.set()
        elif event.kind == "retrying":
            retrying.append(event)

    def killer() -> None:
        if four_running.wait(timeout=180):
            time.sleep(3)  # well into their steps
            kill_node(spare)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    out = tmp_path / "out"
    summary = run_suite(tasks, ScriptedAgent, out=out, parallel=4, placement=ClusterPlacement(cluster.address, per_node=2),
                        environment={"VDESK_TEST_RUN": RUN_TOKEN}, on_event=on_event)
    thread.join(timeout=5)

    assert four_running.is_set()
    assert [o.task_id for o in summary.episodes] == [t.id for t in tasks]  # every episode has a result
    assert all(o.success for o in summary.episodes), [(o.task_id, o.error) for o in summary.episodes]
    retried = [o for o in summary.episodes if o.retried]
    assert {e.task_id for e in retrying} == {o.task_id for o in retried}
    # The two episodes it ran when it died; others placed there before Ray noticed (it takes
    # seconds) did not start and ran again too.
    assert len([o for o in retried if o.attempts[0].desktop]) == 2, retried
    for outcome in retried:
        lost, last = outcome.attempts
        assert lost.node == spare_id and lost.lost and lost.address
        assert last.node == head_id and last.error is None and not last.lost
        if not lost.desktop:
            assert lost.moved_to is None
            continue
        assert "died" in lost.error, lost.error
        assert lost.moved_to == f".lost/{outcome.task_id}/attempt-1" and (out / lost.moved_to / "steps.jsonl").is_file()
        run = load_run(out / outcome.task_id)  # the folder holds the new try only
        assert run.outcome.attempts == outcome.attempts and run.outcome.retried
        assert [step.step for step in run.steps] == list(range(1, len(run.steps) + 1))
    for outcome in summary.episodes:
        if not outcome.retried:
            assert [a.node for a in outcome.attempts] in ([head_id], [spare_id])
    assert [f.name for f in episode_folders(out)] == [t.id for t in tasks]  # the moved tries are not episodes
    assert "retried after losing its desktop on node" in write_report(out).read_text()
    assert spare_id not in {n.id for n in desktop_nodes()}
    wait_none_left(timeout=15)

"""desktop-env on vdesk, timed: DesktopEnv(provider_name="vdesk") to its first observation, the
resets to the next tasks, close(), and the memory of one environment (its desktop, the
`vdesk osworld-serve` process, this script). Run with the osworld virtualenv's Python:

    VDESK_BIN=.venv/bin/vdesk .venv-osworld/bin/python scripts/desktop_env_bench.py

Figures for docs, not a test: they depend on the machine's load (print `uptime` beside them).
"""

from __future__ import annotations

import json
import resource
import subprocess
import time
from pathlib import Path

import vdesk_osworld_provider  # noqa: F401  (registers provider_name="vdesk")
from desktop_env.desktop_env import DesktopEnv

TASKS = Path(__file__).resolve().parents[1] / "examples" / "osworld" / "examples" / "os"
ORDER = ("os-make-folder", "os-screen-size", "os-infeasible", "os-echo-file")


def rss_mib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) // 1024


def main() -> None:
    tasks = [json.loads((TASKS / f"{name}.json").read_text()) for name in ORDER]
    start = time.monotonic()
    env = DesktopEnv(provider_name="vdesk", require_a11y_tree=False)
    started = time.monotonic() - start
    env.reset(task_config=tasks[0])
    first = time.monotonic() - start
    name, pid = env.provider.desktop_name, env.provider._served.pid
    desktop = subprocess.run(["docker", "stats", "--no-stream", "--format", "{{.MemUsage}}", name],
                             capture_output=True, text=True, check=False).stdout.strip()
    serve = rss_mib(pid)
    resets = []
    for task in tasks[1:]:
        env.step("DONE", 0)
        start = time.monotonic()
        env.reset(task_config=task)
        resets.append(round(time.monotonic() - start, 1))
    start = time.monotonic()
    env.close()
    print(json.dumps({"started_s": round(started, 1), "first_observation_s": round(first, 1), "next_resets_s": resets,
                      "close_s": round(time.monotonic() - start, 1), "desktop_memory": desktop, "serve_rss_mib": serve,
                      "script_maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}))


if __name__ == "__main__":
    main()

"""OSWorld's own run loop on vdesk desktops: desktop-env's DesktopEnv and mm_agents' PromptAgent,
unchanged, with ``provider_name="vdesk"``.

Run it with the osworld virtualenv's Python (``make osworld-venv``), vdesk's command reachable
(``VDESK_BIN=/path/to/vdesk/.venv/bin/vdesk`` or ``vdesk`` on PATH) and the model's endpoint in
OpenAI's variables (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``)::

    .venv-osworld/bin/python examples/osworld_desktop_env.py OSWorld/evaluation_examples \\
        --cache OSWorld/cache --model gpt-4o --domain os --envs 2 --results runs/desktop-env

Each of ``--envs`` processes holds one DesktopEnv (one vdesk desktop at a time) and takes tasks
from a shared queue, as OSWorld's ``run_multienv.py`` does; each task is the loop of its
``lib_run_single.py``: ``env.reset(task_config=…)``, ``agent.reset()``, then ``agent.predict`` →
``env.step`` until DONE/FAIL or ``--max-steps``, then ``env.evaluate()``. Results land in OSWorld's
layout, ``RESULTS/<action space>/<observation>/<model>/<domain>/<task id>/`` with ``result.txt``,
``traj.jsonl`` and the step screenshots, and the scores are printed as one JSON object.

OSWorld's loop waits 60 s after a reset and 20 s before evaluating, for its VM; a vdesk
desktop's setup steps return once done, so ``--wait-after-reset`` and ``--wait-before-evaluate``
default to 0 (pass 60 and 20 to copy the reference exactly). An ``upload_file`` step's
``local_path`` is read relative to the working folder, as desktop-env reads it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import logging
import multiprocessing
import os
import signal
import sys
import time
from pathlib import Path
from queue import Empty
from typing import Any

import vdesk_osworld_provider  # noqa: F401  (registers provider_name="vdesk")
from desktop_env.desktop_env import DesktopEnv
from mm_agents.agent import PromptAgent

logger = logging.getLogger("desktopenv.experiment")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks", type=Path, help="an evaluation_examples folder: META file and examples/<domain>/<id>.json")
    parser.add_argument("--meta", default="test_all.json", help="domain -> task ids, inside TASKS")
    parser.add_argument("--domain", action="append", help="only these domains (repeatable)")
    parser.add_argument("--cache", type=Path, default=Path("cache"), help="desktop-env's cache_dir (downloads, cloud files)")
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--model", default="gpt-4o")
    parser.add_argument("--action-space", default="pyautogui", choices=["pyautogui", "computer_13"])
    parser.add_argument("--observation", default="screenshot", choices=["screenshot", "a11y_tree", "screenshot_a11y_tree", "som"])
    parser.add_argument("--max-steps", type=int, default=15)
    parser.add_argument("--max-trajectory-length", type=int, default=3)
    parser.add_argument("--sleep-after-execution", type=float, default=0.0)
    parser.add_argument("--wait-after-reset", type=float, default=0.0)
    parser.add_argument("--wait-before-evaluate", type=float, default=0.0)
    parser.add_argument("--screen", default="1920x1080", help="WIDTHxHEIGHT")
    parser.add_argument("--image", default=None, help="the vdesk image (path_to_vm); default osworld")
    parser.add_argument("--envs", type=int, default=1, help="environments (processes) at once")
    return parser.parse_args()


def load_tasks(args: argparse.Namespace) -> list[dict[str, Any]]:
    meta = json.loads((args.tasks / args.meta).read_text())
    tasks = []
    for domain, ids in meta.items():
        if args.domain and domain not in args.domain:
            continue
        for task_id in ids:
            task = json.loads((args.tasks / "examples" / domain / f"{task_id}.json").read_text())
            tasks.append({"domain": domain, "task": task})
    return tasks


def run_task(agent: PromptAgent, env: DesktopEnv, task: dict[str, Any], args: argparse.Namespace, out: Path) -> float:
    """One task, as lib_run_single runs it."""
    out.mkdir(parents=True, exist_ok=True)
    env.reset(task_config=task)
    agent.reset(logger)
    time.sleep(args.wait_after_reset)
    obs = env._get_obs()  # the observation after the wait, as lib_run_single takes it
    done, step = False, 0
    with (out / "traj.jsonl").open("w") as traj:
        while not done and step < args.max_steps:
            response, actions = agent.predict(task["instruction"], obs)
            for action in actions or []:
                stamp = datetime.datetime.now().strftime("%Y%m%d@%H%M%S%f")
                obs, reward, done, info = env.step(action, args.sleep_after_execution)
                shot = f"step_{step + 1}_{stamp}.png"
                (out / shot).write_bytes(obs["screenshot"] or b"")
                traj.write(json.dumps({"step_num": step + 1, "action_timestamp": stamp, "action": action,
                                       "response": response, "reward": reward, "done": done, "info": info,
                                       "screenshot_file": shot}) + "\n")
                if done:
                    break
            step += 1
    time.sleep(args.wait_before_evaluate)
    score = float(env.evaluate())
    (out / "result.txt").write_text(f"{score}\n")
    return score


def worker(queue: Any, scores: Any, args: argparse.Namespace) -> None:
    """One environment: tasks from the queue until it is empty, then the desktop is removed."""
    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s [env {os.getpid()}] %(name)s: %(message)s")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwinds to env.close(): the desktop goes
    width, height = (int(n) for n in args.screen.split("x"))
    env = DesktopEnv(provider_name="vdesk", path_to_vm=args.image, action_space=args.action_space,
                     screen_size=(width, height), headless=True, os_type="Ubuntu", cache_dir=str(args.cache),
                     require_a11y_tree=args.observation in {"a11y_tree", "screenshot_a11y_tree", "som"})
    agent = PromptAgent(model=args.model, action_space=args.action_space, observation_type=args.observation,
                        max_trajectory_length=args.max_trajectory_length)
    try:
        while True:
            try:
                item = queue.get(timeout=1)
            except Empty:
                return
            task, domain = item["task"], item["domain"]
            out = args.results / args.action_space / args.observation / args.model / domain / task["id"]
            try:
                scores[task["id"]] = run_task(agent, env, task, args, out)
            except Exception as error:  # one task's failure is its own, as in run_multienv
                logger.exception("task %s failed", task["id"])
                with (out / "traj.jsonl").open("a") as traj:
                    traj.write(json.dumps({"Error": f"{type(error).__name__}: {error}"}) + "\n")
                scores[task["id"]] = None
    finally:
        env.close()


def main() -> None:
    args = parse_args()
    manager = multiprocessing.Manager()
    queue, scores = manager.Queue(), manager.dict()
    for item in load_tasks(args):
        queue.put(item)
    processes = [multiprocessing.Process(target=worker, args=(queue, scores, args), daemon=True)
                 for _ in range(max(1, args.envs))]
    for process in processes:
        process.start()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        for process in processes:
            process.join()
    finally:  # stopped early (SIGTERM, Ctrl-C): each environment closes its desktop before it exits
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            process.join()
    print(json.dumps(dict(scores), sort_keys=True))
    failed = [process.exitcode for process in processes if process.exitcode != 0]
    if failed:
        raise SystemExit(f"{len(failed)} environment(s) failed (exit codes {failed}): see the log above")


if __name__ == "__main__":
    main()

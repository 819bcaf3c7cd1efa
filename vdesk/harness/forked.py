"""Episodes that start from their task's desktop as it stood after setup (``vdesk eval
--fork-after-setup``, ``run_suite(fork_after_setup=True)``).

A task's setup (programs started, a document opened, a page loaded, an OSWorld task's config
steps with their sleeps) runs once, on a desktop that is then checkpointed and removed; each of
the task's episodes — its repeats, a group of rollouts — runs on a fork of that checkpoint.
Setup is paid once per task instead of once per episode, and each episode pays a fork instead
(its cost grows with the desktop's memory: see docs/forks.md), so it pays when setup is dear.

What each episode has of its own: a fresh agent, its run folder and video, its desktop (a
fork: its own container, VNC password and lease), its step count and clock (the time limit
starts once the fork is up). What the forks of one task share: the setup's screen, programs and
files, down to the programs' memory — a random value a program drew during setup is the same in
every fork, which is what makes the episodes comparable. Each checkpoint is removed once its
task's last episode has ended, and all of them when the run ends, however it ends.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

from vdesk.errors import InvalidArgument
from vdesk.forks import Checkpoint
from vdesk.harness.env import DesktopEnv
from vdesk.harness.tasks import Task


@dataclass(frozen=True)
class SetUp:
    """A task set up once: the checkpoint its episodes fork, what it took (seconds), and how
    to let go of the run's hold on it (a `vdesk prune` meanwhile leaves a held checkpoint)."""

    checkpoint: Checkpoint
    setup_s: float       # a desktop up, the task's setup run, the screen settled
    checkpoint_s: float  # that desktop checkpointed
    release: Callable[[], None] = field(default=lambda: None, compare=False, repr=False)

    def discard(self, remove: Callable[[Checkpoint], None]) -> None:
        """Remove the checkpoint with ``remove``, then let go of the hold (held until gone: no
        prune in between)."""
        try:
            remove(self.checkpoint)
        finally:
            self.release()

    def record(self) -> dict[str, float | str]:
        """The fields of each episode's :class:`~vdesk.harness.record.Outcome` this setup fills."""
        return {"setup_s": self.setup_s, "checkpoint_s": self.checkpoint_s, "forked_from": self.checkpoint.name}


def set_up(env: DesktopEnv, task: Task, hold: Callable[[Checkpoint], Callable[[], None]],
           remove: Callable[[Checkpoint], None]) -> SetUp:
    """Run ``task``'s setup on a desktop ``env`` opens and checkpoint it there; the desktop is
    released after (the checkpoint outlives it), once ``hold`` holds the checkpoint (it returns
    how to let go): from then until the task's last episode, `vdesk prune` leaves it. When the
    hold fails, ``remove`` removes the checkpoint: nothing would own it."""
    try:
        env.open(task)
        assert env.opening is not None and env.opening.setup_s is not None
        began = time.monotonic()
        checkpoint = env.save_checkpoint()
        took = round(time.monotonic() - began, 3)
        try:
            release = hold(checkpoint)
        except BaseException:
            remove(checkpoint)
            raise
        return SetUp(checkpoint, env.opening.setup_s, took, release)
    finally:
        env.close()


def repeated(tasks: Sequence[Task], repeats: int) -> tuple[list[Task], dict[str, str]]:
    """Each task ``repeats`` times, as episodes: the tasks themselves when once, else copies
    with the ids ``<id>.r1`` … ``<id>.rN`` (their run folders). Returns the episodes and each
    one's task id."""
    if isinstance(repeats, bool) or not isinstance(repeats, int) or not 1 <= repeats <= 1000:
        raise InvalidArgument(f"repeats must be a whole number from 1 to 1000, got {repeats!r}")
    if repeats == 1:
        return list(tasks), {task.id: task.id for task in tasks}
    origin = {f"{task.id}.r{number}": task.id for task in tasks for number in range(1, repeats + 1)}
    taken = sorted(origin.keys() & {task.id for task in tasks})
    if taken:
        raise InvalidArgument(f"repeats: task {taken[0]} has the name of another task's repeat; rename it")
    episodes = [task.model_copy(update={"id": f"{task.id}.r{number}"}) for task in tasks
                for number in range(1, repeats + 1)]
    return episodes, origin


class SharedSetups:
    """One setup per task, shared by its episodes: the first episode to need it runs it (the
    others of that task wait for it), and its checkpoint is removed (``remove``) once the
    task's last episode is :meth:`done`; :meth:`close` removes what is left. A failed setup
    fails each of its episodes with the same error, and is not tried again."""

    def __init__(self, origin: Mapping[str, str], make: Callable[[Task], SetUp],
                 remove: Callable[[Checkpoint], None]) -> None:
        self._origin, self._make, self._remove = origin, make, remove
        self._lock = threading.Lock()
        self._made: dict[str, Future[SetUp]] = {}
        self._left = Counter(origin.values())

    def get(self, episode: Task) -> SetUp:
        """The setup of ``episode``'s task, run now if no episode of it ran it yet."""
        key = self._origin[episode.id]
        with self._lock:
            future = self._made.get(key)
            mine = future is None
            if future is None:
                future = self._made[key] = Future()
        if mine:
            try:
                future.set_result(self._make(episode))
            except BaseException as error:
                future.set_exception(error)
        return future.result()

    def done(self, episode: Task) -> None:
        """``episode`` has ended (or will never run): the last of its task removes the checkpoint."""
        key = self._origin[episode.id]
        with self._lock:
            self._left[key] -= 1
            last = self._left[key] == 0
            future = self._made.pop(key, None) if last else None
        if future is not None:
            self._discard(future)

    def close(self) -> None:
        """Remove every checkpoint still held (a run that ended early)."""
        with self._lock:
            left, self._made = list(self._made.values()), {}
        for future in left:
            self._discard(future)

    def _discard(self, future: Future[SetUp]) -> None:
        if future.done() and future.exception() is None:
            future.result().discard(self._remove)


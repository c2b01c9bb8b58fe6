"""The follower ranks of a sharded learner (sharded.py) and how rank 0 watches them.

    followers = start_rank_actors(ray, seats, group, name=..., timeout_s=...)  # a job
    followers = start_rank_processes                                            # no Ray
    learner = ShardedLearner(spec, log, followers)

In a job (which always has a Ray: the cluster's, or its private one) each follower is a
Ray actor (`learner_rank.LearnerRank`) in its own bundle of the learner's placement group
(placement.py: a GPU a rank on CUDA, so Ray sets its CUDA_VISIBLE_DEVICES; a CPU on
CPU), placed within the stated time or refused saying what it asked and what the cluster
has. Where there is no Ray (the sharded learner driven directly: the GPU bundle carries
no Ray) they are processes of rank 0's, running the same loop.

Either way `lost` names a follower that is gone (its actor died with its node, or was
killed; its process exited) in one line, and `where` says where each one ran, for the
job's record (the `Followers` seam: protocols.py).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from podium.errors import PodiumError

if TYPE_CHECKING:
    from trainers.async_rl.placement import Seat
    from trainers.async_rl.protocols import Followers
    from trainers.async_rl.sharded import RankSpec

FOLLOWER_MODULE = "trainers.async_rl.learner_rank"


class RankActors:
    """The followers as Ray actors; each one's `serve` call runs until "stop"."""

    def __init__(self, ray: Any, actors: list[Any], where: list[dict[str, Any]]) -> None:
        self.ray, self.actors, self.where = ray, actors, where
        self.serving = [actor.serve.remote() for actor in actors]

    def lost(self, wait_s: float = 0.0) -> str | None:
        from ray.exceptions import RayActorError, RayTaskError

        try:
            ready, _ = self.ray.wait(self.serving, num_returns=1, timeout=wait_s)
        except Exception as exc:  # noqa: BLE001 - Ray itself gone (a cancel stops a private one)
            return f"the learner's follower ranks cannot be reached through Ray: {exc}"
        if not ready:
            return None
        where = self.where[self.serving.index(ready[0])]
        at = f"on node {where['node']} (CUDA_VISIBLE_DEVICES={where['cuda_visible_devices']})"
        try:
            self.ray.get(ready[0])
        except RayActorError as exc:  # killed, out of memory, or lost with its node
            return (
                f"learner rank {where['rank']} was lost with its actor {at}: "
                f"{type(exc).__name__}; the run cannot go on without its shard of the weights"
            )
        except RayTaskError as exc:  # its own error
            cause = getattr(exc, "cause", None) or exc
            return f"learner rank {where['rank']} failed {at}: {type(cause).__name__}: {cause}"
        return f"learner rank {where['rank']} stopped {at} before the run ended"

    def wait(self, timeout_s: float) -> None:
        self.ray.get(self.serving, timeout=timeout_s)

    def kill(self) -> None:
        for actor in self.actors:
            with contextlib.suppress(Exception):  # dead already, or Ray with it
                self.ray.kill(actor)


def start_rank_actors(
    ray: Any, seats: Sequence[Seat], group: Any, *, name: str, timeout_s: float
) -> Callable[[RankSpec], RankActors]:
    """A function of the ranks' spec that starts one actor a follower seat (its bundle of
    `group`), each placed within `timeout_s`, else a PodiumError saying what they asked
    and what the cluster has."""

    def start(spec: RankSpec) -> RankActors:
        from podium.cluster import placement_shortfall
        from trainers.async_rl.learner_rank import LearnerRank
        from trainers.async_rl.placement import ray_options

        env = {"env_vars": {k: v for k, v in os.environ.items() if k.startswith("PODIUM_")}}
        cls = ray.remote(max_restarts=0)(LearnerRank)
        actors = [
            cls.options(
                name=f"{name}-rank-{seat.index}", runtime_env=env, **ray_options(seat, group)
            ).remote(spec, seat.index)
            for seat in seats
        ]
        asked = {"CPU": seats[0].num_cpus, "GPU": seats[0].num_gpus}
        short = placement_shortfall(ray, actors, asked, "the learner's follower ranks", timeout_s)
        if short:
            raise PodiumError(short)
        try:
            where = ray.get([actor.where.remote() for actor in actors], timeout=timeout_s)
        except BaseException:
            for actor in actors:
                ray.kill(actor)
            raise
        return RankActors(ray, actors, where)

    return start


class RankProcesses:
    """The followers as processes of this one (no Ray)."""

    def __init__(self, spec: RankSpec) -> None:
        from podium.cluster import routable_address
        from podium.processes import python_module

        env = {**os.environ, "PYTHONPATH": _repo_root()}
        self.procs = [
            subprocess.Popen(python_module(FOLLOWER_MODULE, str(r), spec.to_json()), env=env)
            for r in range(1, spec.ranks)
        ]
        self.where = [
            {
                "rank": r,
                "node": routable_address(),
                "device": f"cuda:{spec.gpu(r)}" if spec.device == "cuda" else "cpu",
                "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
                "actor": None,
            }
            for r in range(1, spec.ranks)
        ]

    def lost(self, wait_s: float = 0.0) -> str | None:
        deadline = time.monotonic() + wait_s
        while True:
            for rank, proc in enumerate(self.procs, start=1):
                code = proc.poll()
                if code is not None:
                    return f"learner rank {rank} exited (code {code}); the job's log has its error"
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.1)

    def wait(self, timeout_s: float) -> None:
        for proc in self.procs:
            proc.wait(timeout=timeout_s)

    def kill(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


class WatchedStore:
    """Rank 0's weight-transfer store (a TCPStore), whose waits for a follower's digests
    end as soon as a follower is lost, or after `patience_s` without them (a follower
    publishes them as its push starts: one silent that long is cut off or stalled), with
    `LearnerLost`, not after the store's timeout (900 s: a push in flight would hold the
    failing job that long)."""

    def __init__(
        self,
        store: Any,
        lost: Callable[[], str | None],
        patience_s: float = float("inf"),
        where: Sequence[dict[str, Any]] = (),
    ) -> None:
        self.store, self.lost, self.patience_s, self.where = store, lost, patience_s, where

    def get(self, key: str) -> Any:
        from trainers.async_rl.protocols import LearnerLost
        from trainers.weight_sync.replica_calls import CALL_TIMEOUT_S

        # Polled (`check` does not block): a store wait that times out logs a warning.
        began = watched = time.monotonic()
        while not self.store.check([key]) and time.monotonic() - began < CALL_TIMEOUT_S:
            time.sleep(0.05)
            if time.monotonic() - watched >= 1.0:
                line = self.lost()
                if line is None and watched - began >= self.patience_s:
                    line = self._silent_line(key)
                if line is not None:
                    raise LearnerLost(line)
                watched = time.monotonic()
        return self.store.get(key)  # past the timeout: the store's own error

    def _silent_line(self, key: str) -> str:
        rank = key.rpartition("/rank")[2]  # the key is push<N>/digests/rank<R>
        at = next((w for w in self.where if str(w.get("rank")) == rank), {})
        return (
            f"learner rank {rank} did not send the digests of its rows for a push within "
            f"{self.patience_s:g} s (learner_rank_timeout_s): its node is cut off from the "
            f"network or its process stalled (node {at.get('node')}, CUDA_VISIBLE_DEVICES="
            f"{at.get('cuda_visible_devices')}); the run cannot go on without its shard of "
            "the weights"
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


def watch_followers(sync: Any, followers: Followers, patience_s: float) -> None:
    """Rank 0's `sync` waits for the followers' digests watching them, at most
    `patience_s` each (WatchedStore)."""
    if getattr(sync, "_store", None) is not None:
        sync._store = WatchedStore(sync._store, followers.lost, patience_s, followers.where)


def start_rank_processes(spec: RankSpec) -> RankProcesses:
    return RankProcesses(spec)


def _repo_root() -> str:
    root = str(Path(__file__).resolve().parents[2])
    extra = os.environ.get("PYTHONPATH")
    return root + (os.pathsep + extra if extra else "")

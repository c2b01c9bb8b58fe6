"""An async GRPO run's pushes: the learner's weights as they are after a step go to the
replicas in the background, in order, the newest only when several queue; a transfer
error is tried again while every replica lives; a replica that fails its load is
condemned (killed, then replaced by its thread: replica_faults.py); a push that met a
dead replica is not the job's failure, any other is."""

from __future__ import annotations

import contextlib
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from trainers.async_rl.run_state import RunState

if TYPE_CHECKING:
    from trainers.weight_sync.base import SyncRecord


class Pushes(RunState):
    """The pushes of one run (`AsyncRun` is built from this and `ReplicaFaults`)."""

    def push(self, version: int) -> None:
        """Push the weights as they are now, in the background (pushes run in order),
        to every replica at once or one at a time (the card's `weight_swap`: swaps.py).

        A push first waits for a replica's generate call to return and keeps it from
        starting another until its load has landed. vLLM's pause would let a request in
        flight finish on the old weights anyway, but a swap landing between a request's
        end and the replica reading its version back makes that request's version
        ambiguous, and the replica then generates it again with the new weights, which
        made every lag 0 whatever max_staleness allowed.
        """
        from trainers.async_rl.swaps import Swapper

        snap = self.sync.snapshot(self.learner.named_tensors())  # the learner moves on now
        self.learner.announce_push(version)  # the other learner ranks push their rows

        def landed_on(r: int, v: int) -> None:
            if r not in self.pool.replacing:
                self.pool.held[r] = max(self.pool.held.get(r, 0), v)
            self.controller.weights_changed()

        swapper = Swapper(
            self.sync,
            self.gen_locks,
            landed_on=landed_on,
            condemn=self.condemn,
            skip=lambda r: r in self.pool.replacing,
            retry=lambda exc: self.push_retry(version, exc),
        )
        self.issued = version

        def push_newest() -> SyncRecord | None:
            # A replica behind goes straight to the newest weights: a push whose version
            # a newer queued push carries anyway is skipped (sharded ranks push their rows
            # on their own: each of theirs must meet rank 0's).
            if self.issued > version and self.cfg.learner_ranks == 1:
                self.pushes_skipped.append(version)
                return None
            return swapper.push(self.cfg.weight_swap, snap, version)

        future = self._push_thread.submit(push_newest)
        self.pushes.append(future)

        def landed(done: Future[SyncRecord | None]) -> None:
            exc = done.exception()
            if exc is not None:
                self.push_failed(version, exc)
                return
            record = done.result()
            if record is None:
                return
            self.syncs.append(record.as_dict())
            for verdict in record.replicas:
                landed_on(int(verdict["replica"]), record.version)

        future.add_done_callback(landed)

    def condemn(self, replicas: list[int], version: int, exc: BaseException) -> None:
        """Kill replicas whose load of `version` failed: each stays paused on weights
        that are not the learner's until its actor is gone; its thread then meets the
        dead actor and replaces it (`replace`), as after any death."""
        for r in replicas:
            self.reporter.log(
                f"replica {r} failed to load version {version}; it stays paused and is "
                f"replaced ({exc})"
            )
            self.pool.replacing.add(r)  # not alive from now on, whatever Ray says yet
            with contextlib.suppress(Exception):
                self.pool.ray.kill(self.pool.actors[r])

    def push_retry(self, version: int, exc: BaseException) -> bool:
        """Whether a push that failed with a transfer error is tried again: yes while
        the run goes on with every replica alive (a dead one is replaced instead)."""
        if self.stop.is_set() or not all(self.pool.alive(r) for r in sorted(self.pool.actors)):
            return False
        self.reporter.log(f"push of version {version} failed ({exc}); trying it again")
        return True

    def push_failed(self, version: int, exc: BaseException) -> None:
        """A push that failed because a replica died, or a replica failed its load (and
        was condemned), is not the job's failure: that replica is replaced (and gets the
        current weights then); the live ones loaded this version, which their own
        report says. Any other failure ends the job."""
        from trainers.weight_sync import ReplicaLoadError

        try:
            self.learner.check()  # a push met a lost learner: no replica's fault
        except BaseException as lost:  # noqa: BLE001 - the job fails with it
            self.fail(lost)
            return
        dead = [r for r in sorted(self.pool.actors) if not self.pool.alive(r)]
        if not dead:
            self.fail(exc)
            return
        failure: dict[str, Any] = {"version": version, "dead_replicas": dead, "error": str(exc)}
        if isinstance(exc, ReplicaLoadError):
            failure["failed_load"] = exc.failed
            failure["replicas"] = exc.verdicts
        self.sync_failures.append(failure)
        self.reporter.log(f"push of version {version} missed dead replica(s) {dead}: {exc}")
        for r in sorted(self.pool.actors):
            if r not in dead and r not in self.pool.replacing:
                try:
                    held = int(self.pool.ray.get(self.pool.actors[r].version.remote()))
                except Exception as err:  # noqa: BLE001 - the job fails with it
                    self.fail(err)
                    return
                self.pool.held[r] = max(self.pool.held.get(r, 0), held)
        self.controller.weights_changed()

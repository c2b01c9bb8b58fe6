"""How one push of an async run lands on its replicas (the card's `weight_swap`), and
how long each replica could not generate because of it.

- `barrier`: the push takes every replica's generate lock (waiting for each one's call
  in flight to return), loads the weights into all of them at once, and lets them all go
  together. Every replica stops from the moment its lock is taken until the slowest
  load has landed.
- `rolling`: one replica at a time, the same snapshot each time: the push holds only
  that replica's lock while its load lands, so the others keep generating. The replica's
  version (`pool.held`) moves as its own load lands, before it may start anything new, so
  admission sees exactly the weights each replica holds and the staleness bound stays
  exact per replica.

Idle seconds, per replica and push: from the moment the push holds its generate lock
(it can start nothing new) until the push gives it back: the wait for the other
replicas' locks (barrier only), the pause at a safe point, the transfer and the load.
Each replica's verdict in the sync record carries them as `idle_s`, with the window
`idle_window_s` (seconds since the push began); the record's `replica_idle_s` is their
mean over the replicas.

A load that fails leaves its replica paused (`ReplicaLoadError`): the run condemns it
before any replica generates again (barrier) or before the rolling push moves on, and a
rolling push still brings the others up to date before it raises. A replica that died
mid-push fails the push the same way for both (run.py's `push_failed` decides). Any
other transfer error (a connection reset, a time-out) while every replica is alive is
transient: the push is tried again, at most `PUSH_ATTEMPTS` times in all, and the record
counts the retries.
"""

from __future__ import annotations

import contextlib
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trainers.async_rl.protocols import WeightPusher
    from trainers.weight_sync.base import Snapshot, SyncRecord

SWAPS = ("barrier", "rolling")
PUSH_ATTEMPTS = 3  # a push that fails for a transient transfer error: tried twice more
RETRY_WAIT_S = 1.0  # before the n-th retry: n times this


@dataclass
class Swapper:
    """What a push needs of the run: the transfer, the generate locks, and what to do
    when a replica's load lands (`landed_on(replica, version)`) or fails (`condemn`)."""

    sync: WeightPusher
    gen_locks: dict[int, threading.Lock]
    landed_on: Callable[[int, int], None]
    condemn: Callable[[list[int], int, BaseException], None]
    skip: Callable[[int], bool]  # a replica being replaced: it gets the weights when it joins

    # Whether a push that failed for a transfer error (not a failed load: that replica is
    # condemned) is tried again; the run says yes while every replica is alive.
    retry: Callable[[BaseException], bool] = lambda exc: False
    attempts: int = PUSH_ATTEMPTS

    def push(self, mode: str, snap: Snapshot, version: int) -> SyncRecord:
        """`mode`'s push, tried up to `attempts` times while `retry` says the error is
        worth it (a transient one: every replica alive); the record counts the retries."""
        from trainers.weight_sync import ReplicaLoadError, WeightSyncError

        for attempt in range(1, self.attempts + 1):
            try:
                record = self._push_once(mode, snap, version)
            except ReplicaLoadError:
                raise
            except WeightSyncError as exc:
                if attempt == self.attempts or not self.retry(exc):
                    raise
                time.sleep(RETRY_WAIT_S * attempt)
                continue
            record.retries = attempt - 1
            return record
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _push_once(self, mode: str, snap: Snapshot, version: int) -> SyncRecord:
        if mode == "rolling":
            return self.rolling(snap, version)
        if mode == "barrier":
            return self.barrier(snap, version)
        raise ValueError(f"unknown weight_swap {mode!r}; choose one of {', '.join(SWAPS)}")

    def barrier(self, snap: Snapshot, version: int) -> SyncRecord:
        from trainers.weight_sync import ReplicaLoadError

        began = time.perf_counter()
        taken: dict[int, float] = {}
        with contextlib.ExitStack() as held:
            for r in sorted(self.gen_locks):
                held.enter_context(self.gen_locks[r])
                taken[r] = time.perf_counter()
            try:
                record = self.sync.push_snapshot(snap, version)
            except ReplicaLoadError as exc:
                # Before any replica generates again: a replica left paused on a failed
                # load is condemned (never resumed); it is replaced and gets the
                # current weights when it joins.
                self.condemn(exc.failed, version, exc)
                raise
        released = time.perf_counter()
        windows = {r: (t - began, released - began) for r, t in taken.items()}
        return with_idle(record, "barrier", windows)

    def rolling(self, snap: Snapshot, version: int) -> SyncRecord:
        from trainers.weight_sync import ReplicaLoadError, SyncRecord, WeightSyncError

        began = time.perf_counter()
        landed: list[SyncRecord] = []
        windows: dict[int, tuple[float, float]] = {}
        verdicts: list[dict[str, Any]] = []
        failed: list[int] = []
        errors: list[BaseException] = []
        for r in sorted(self.sync.replicas):
            if r not in self.gen_locks or self.skip(r):
                continue
            with self.gen_locks[r]:
                taken = time.perf_counter()
                one: SyncRecord | None
                try:
                    one = self.sync.push_snapshot(snap, version, only=[r])
                except ReplicaLoadError as exc:
                    self.condemn(exc.failed, version, exc)  # before its lock is let go
                    failed += exc.failed
                    verdicts += exc.verdicts
                    one = None
                except Exception as exc:  # noqa: BLE001 - a dead replica: the others go on
                    errors.append(exc)
                    one = None
                if one is not None:
                    # Before the replica may start anything new: admission then sees
                    # the version it holds.
                    self.landed_on(r, version)
                    landed.append(one)
                    verdicts += one.replicas
            windows[r] = (taken - began, time.perf_counter() - began)
        if failed:
            raise ReplicaLoadError(
                f"rolling push of version {version}: replica(s) {failed} failed their load "
                "(left paused)",
                failed,
                [_with_window(v, windows) for v in verdicts],
            )
        if errors:
            raise errors[0]
        if not landed:
            raise WeightSyncError("no replicas to push to: every replica is being replaced")
        record = SyncRecord(
            version=version,
            backend=landed[0].backend,
            bytes=sum(one.bytes for one in landed),
            seconds=time.perf_counter() - began,
            replicas=verdicts,
        )
        for one in landed:
            for name, seconds in one.phases.items():
                record.phases[name] = record.phases.get(name, 0.0) + seconds
        return with_idle(record, "rolling", windows)


def _with_window(
    verdict: dict[str, Any], windows: dict[int, tuple[float, float]]
) -> dict[str, Any]:
    window = windows.get(int(verdict["replica"]))
    if window is None:
        return verdict
    start, end = window
    return {**verdict, "idle_s": end - start, "idle_window_s": [start, end]}


def with_idle(record: SyncRecord, mode: str, windows: dict[int, tuple[float, float]]) -> SyncRecord:
    """The record with each replica's idle seconds and window, and their mean."""
    record.replicas = [_with_window(v, windows) for v in record.replicas]
    record.swap = mode
    idle = [v["idle_s"] for v in record.replicas if "idle_s" in v]
    record.replica_idle_s = statistics.fmean(idle) if idle else 0.0
    return record

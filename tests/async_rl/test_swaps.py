"""How a push lands (trainers/async_rl/swaps.py) when a replica fails: the order of the
locks, the versions and the condemnations. The transfer here is a stand-in that answers
as a real one does (`tests/weight_sync/test_rolling_push.py` pushes into real replicas)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from trainers.async_rl.swaps import Swapper
from trainers.weight_sync import ReplicaEndpoint, ReplicaLoadError, SyncRecord, WeightSyncError


class Transfer:
    """Answers each replica's load: a verified verdict, a failed load (left paused) for
    replicas in `bad`, a broken connection for replicas in `dead`; records what it saw."""

    def __init__(self, locks: dict[int, threading.Lock], bad=(), dead=()) -> None:  # type: ignore[no-untyped-def]
        self.replicas = {i: ReplicaEndpoint(i, f"http://r{i}") for i in locks}
        self.locks, self.bad, self.dead = locks, set(bad), set(dead)
        self.calls: list[tuple[list[int], list[int]]] = []  # (targets, locks held then)

    def push_snapshot(self, snap: Any, version: int, only: Any = None) -> SyncRecord:
        targets = list(self.replicas) if only is None else list(only)
        self.calls.append((targets, [r for r, lock in self.locks.items() if lock.locked()]))
        hit = [r for r in targets if r in self.dead]
        if hit:
            raise WeightSyncError(f"replica {hit[0]}: connection refused")
        verdicts = [
            {"replica": r, "match": r not in self.bad, "resumed": r not in self.bad}
            for r in targets
        ]
        failed = [r for r in targets if r in self.bad]
        if failed:
            raise ReplicaLoadError("checksum differs", failed, verdicts)
        return SyncRecord(version, "gloo", 10 * len(targets), 0.1, verdicts, {"digests_s": 0.1})


def swapper(transfer: Transfer, locks: dict[int, threading.Lock], skip=()):  # type: ignore[no-untyped-def]
    seen: dict[str, list[Any]] = {"landed": [], "condemned": []}

    def condemn(replicas: list[int], version: int, exc: BaseException) -> None:
        held = [r for r, lock in locks.items() if lock.locked()]
        seen["condemned"].append((replicas, version, held))

    return (
        Swapper(
            transfer,  # type: ignore[arg-type]
            locks,
            landed_on=lambda r, v: seen["landed"].append(
                (r, v, [x for x, lock in locks.items() if lock.locked()])
            ),
            condemn=condemn,
            skip=lambda r: r in skip,
        ),
        seen,
    )


def three_locks() -> dict[int, threading.Lock]:
    return {r: threading.Lock() for r in range(3)}


def test_rolling_loads_one_replica_at_a_time_and_moves_its_version_before_letting_go() -> None:
    locks = three_locks()
    transfer = Transfer(locks)
    swap, seen = swapper(transfer, locks)
    record = swap.push("rolling", snap=None, version=4)  # type: ignore[arg-type]
    # Each load with only its own replica's lock held; its version moved before release.
    assert transfer.calls == [([0], [0]), ([1], [1]), ([2], [2])]
    assert seen["landed"] == [(0, 4, [0]), (1, 4, [1]), (2, 4, [2])]
    assert record.swap == "rolling" and record.bytes == 30
    assert record.phases == {"digests_s": pytest.approx(0.3)}
    windows = [v["idle_window_s"] for v in record.replicas]
    assert all(a[1] <= b[0] for a, b in zip(windows, windows[1:], strict=False))
    assert record.replica_idle_s == pytest.approx(sum(v["idle_s"] for v in record.replicas) / 3)


def test_rolling_condemns_a_failed_load_at_once_and_still_updates_the_others() -> None:
    locks = three_locks()
    swap, seen = swapper(Transfer(locks, bad=[1]), locks)
    with pytest.raises(ReplicaLoadError) as raised:
        swap.push("rolling", snap=None, version=5)  # type: ignore[arg-type]
    # Condemned while its own lock was still held: it never generated on bad weights.
    assert seen["condemned"] == [([1], 5, [1])]
    assert [r for r, _, _ in seen["landed"]] == [0, 2]
    assert raised.value.failed == [1]
    assert [v["replica"] for v in raised.value.verdicts] == [0, 1, 2]
    assert all("idle_s" in v for v in raised.value.verdicts)


def test_rolling_goes_on_past_a_dead_replica_and_skips_one_being_replaced() -> None:
    locks = three_locks()
    transfer = Transfer(locks, dead=[0])
    swap, seen = swapper(transfer, locks, skip=[2])
    with pytest.raises(WeightSyncError, match="replica 0: connection refused"):
        swap.push("rolling", snap=None, version=6)  # type: ignore[arg-type]
    assert [targets for targets, _ in transfer.calls] == [[0], [1]]
    assert [r for r, _, _ in seen["landed"]] == [1]
    assert seen["condemned"] == []


def test_barrier_holds_every_lock_through_the_load_and_condemns_before_letting_go() -> None:
    locks = three_locks()
    transfer = Transfer(locks)
    swap, _ = swapper(transfer, locks)
    record = swap.push("barrier", snap=None, version=7)  # type: ignore[arg-type]
    assert transfer.calls == [([0, 1, 2], [0, 1, 2])]
    assert record.swap == "barrier"
    ends = {v["idle_window_s"][1] for v in record.replicas}
    assert len(ends) == 1  # all let go together

    swap, seen = swapper(Transfer(locks, bad=[2]), locks)
    with pytest.raises(ReplicaLoadError):
        swap.push("barrier", snap=None, version=8)  # type: ignore[arg-type]
    assert seen["condemned"] == [([2], 8, [0, 1, 2])]
    assert not any(lock.locked() for lock in locks.values())


class FlakyTransfer(Transfer):
    """Fails its first `failures` pushes with a transfer error, as a reset connection does."""

    def __init__(self, locks: dict[int, threading.Lock], failures: int) -> None:
        super().__init__(locks)
        self.failures = failures

    def push_snapshot(self, snap: Any, version: int, only: Any = None) -> SyncRecord:
        if self.failures:
            self.failures -= 1
            self.calls.append(([], []))
            raise WeightSyncError("replica 1: connection reset by peer")
        return super().push_snapshot(snap, version, only)


@pytest.mark.parametrize("mode", ["barrier", "rolling"])
def test_a_transient_push_error_is_tried_again_a_bounded_number_of_times(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A push that meets a transfer error while every replica lives is tried again (it
    failed the job before); the record counts the retries; past the bound it raises."""
    from trainers.async_rl import swaps

    monkeypatch.setattr(swaps, "RETRY_WAIT_S", 0.0)
    locks = three_locks()
    per_try = 3 if mode == "rolling" else 1  # loads a try asks for: one a replica, or one
    transfer = FlakyTransfer(locks, failures=2 * per_try)
    swap, _ = swapper(transfer, locks)
    swap.retry = lambda exc: True
    record = swap.push(mode, snap=None, version=3)  # type: ignore[arg-type]
    assert record.retries == 2 and transfer.failures == 0
    assert [v["replica"] for v in record.replicas] == [0, 1, 2]
    assert all(v["match"] and v["resumed"] for v in record.replicas)

    transfer = FlakyTransfer(locks, failures=swaps.PUSH_ATTEMPTS * per_try)
    swap, _ = swapper(transfer, locks)
    swap.retry = lambda exc: True
    with pytest.raises(WeightSyncError, match="connection reset"):
        swap.push(mode, snap=None, version=4)  # type: ignore[arg-type]

    transfer = FlakyTransfer(locks, failures=1)  # a retry the run refuses: a dead replica
    swap, _ = swapper(transfer, locks)
    with pytest.raises(WeightSyncError, match="connection reset"):
        swap.push(mode, snap=None, version=5)  # type: ignore[arg-type]

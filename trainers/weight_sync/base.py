"""What every weight-sync backend shares: the snapshot a push sends, its record, the
expected checksum over every learner rank's rows, and pushing in the background (the
calls to a replica's server and the verdict on its load: replica_calls.py).

A push, for each replica: pause the server at a safe point (`/pause?mode=wait`: requests
in flight finish on the old weights, new ones queue), move and load the weights through
the worker extension (`/collective_rpc`), clear the prefix cache (its entries were
computed with the old weights), and resume only a replica whose load is verified: it
reports the version and the checksum of what it loaded. A load that raised, a checksum
that differs from the learner's, or a load that did not move the engine's parameters
leaves the replica paused (it must never serve weights that are not the learner's) and
fails the push with `ReplicaLoadError`, which names those replicas for the caller to
re-push or replace (async RL replaces them).
"""

from __future__ import annotations

import json
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any, TypedDict

import torch

from podium import failpoints
from trainers.weight_sync.checksum import ChecksumStream, slice_digest
from trainers.weight_sync.plan import PlannedTensor, TransferPlan, make_plan
from trainers.weight_sync.replica_calls import CALL_TIMEOUT_S, ReplicaEndpoint, WeightSyncError


class SyncOptions(TypedDict, total=False):
    """What every backend's constructor takes (see `WeightSync`); a backend adds its own."""

    learner_ranks: int
    rank: int
    corrupt_for_tests: bool
    address: tuple[str, int] | None


@dataclass(frozen=True)
class Snapshot:
    """What one push sends: the plan, and this rank's tensors in the plan's order."""

    plan: TransferPlan
    tensors: list[tuple[str, torch.Tensor]]
    # What pushing it computed once for every push that sends it (the checksum, disk's
    # file): a rolling push sends one snapshot to one replica at a time.
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass
class SyncRecord:
    """One push; goes into the job's outputs["syncs"]."""

    version: int
    backend: str
    bytes: int
    seconds: float
    replicas: list[dict[str, Any]] = field(default_factory=list)
    phases: dict[str, float] = field(default_factory=dict)  # learner-side seconds, diagnostic
    # Set by an async run (trainers/async_rl/swaps.py): how the push landed (barrier or
    # rolling) and the mean seconds a replica could not generate because of it.
    swap: str | None = None
    replica_idle_s: float | None = None
    retries: int = 0  # failed tries before this one landed (swaps.py: transient errors)
    # The members group a gloo push was broadcast over (gloo.py), None: sent per replica;
    # why a push that tried a broadcast was sent per replica instead.
    broadcast: str | None = None
    broadcast_failed: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def timed(phases: dict[str, float], name: str, fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args), its seconds added to phases[name] (a diagnostic of the sync record)."""
    started = time.perf_counter()
    try:
        return fn(*args)
    finally:
        phases[name] = phases.get(name, 0.0) + time.perf_counter() - started


def materialise(
    named_tensors: Iterable[tuple[str, torch.Tensor]], *, snapshot: bool = True, device: str = "cpu"
) -> list[tuple[str, torch.Tensor]]:
    """The tensors name-ordered, contiguous, on `device`; with `snapshot` copied, since the
    learner may change its parameters as soon as a background push has taken them. A
    sharded parameter (an FSDP2 DTensor) becomes this rank's rows (`to_local`)."""
    out = []
    for name, tensor in named_tensors:
        t = tensor.detach()
        if hasattr(t, "to_local"):
            t = t.to_local()
        # A CUDA tensor stays on its own GPU (the learner's may not be cuda:0).
        target = t.device if device == "cuda" and t.is_cuda else device
        out.append((name, t.to(target, copy=snapshot).contiguous()))
    return sorted(out, key=lambda item: item[0])


def rows_of(planned: PlannedTensor, tensor: torch.Tensor, rank: int) -> torch.Tensor:
    """The rows `rank` sends of `planned`: a slice of the whole tensor, or the tensor
    itself when the rank holds exactly its own rows (a dim-0 shard, as FSDP2 keeps)."""
    rows = tensor.reshape(1) if tensor.dim() == 0 else tensor
    start, stop = planned.slices[rank]
    whole = planned.shape[0] if planned.shape else 1
    if rows.shape[0] == whole:
        return rows[start:stop]
    if rows.shape[0] == stop - start:
        return rows
    raise WeightSyncError(
        f"{planned.name}: learner rank {rank} holds {rows.shape[0]} rows; it must pass the "
        f"whole tensor ({whole} rows) or its own rows {start}..{stop}"
    )


class WeightSync(ABC):
    """The learner's handle on the replicas' weights (one per learner rank).

    With `learner_ranks` R > 1 every rank makes its own, with the same `address` of a
    TCPStore that rank 0 hosts. Every rank calls push / add_replica in the same order
    with its tensors (whole, or only its rows: sharded parameters); each sends its rows,
    publishes the digests of its rows in the store, and rank 0 combines them into the
    expected checksum and drives the replicas."""

    backend = "none"
    device = "cpu"  # where the tensors are sent from
    needs_store = False  # a backend whose transfer groups rendezvous on the store

    def __init__(
        self,
        *,
        learner_ranks: int = 1,
        rank: int = 0,
        corrupt_for_tests: bool = False,
        address: tuple[str, int] | None = None,
    ):
        if not 0 <= rank < learner_ranks:
            raise ValueError(f"rank {rank} is outside 0..{learner_ranks - 1}")
        self.learner_ranks, self.rank = learner_ranks, rank
        self.corrupt_for_tests = corrupt_for_tests
        self.replicas: dict[int, ReplicaEndpoint] = {}
        self._background = ThreadPoolExecutor(max_workers=1, thread_name_prefix="weight-push")
        self._lock = threading.Lock()  # one push at a time, in version order
        self._pushes = 0  # every rank counts alike: the key of a push in the store
        self.address = address
        self._memo: dict[str, Any] = {}  # the snapshot being pushed: its Snapshot.memo
        self._store: Any = None
        if learner_ranks > 1 or self.needs_store:
            self._store = self._open_store(address)

    def _open_store(self, address: tuple[str, int] | None) -> Any:
        import datetime

        if address is None:
            if self.learner_ranks > 1:
                raise WeightSyncError(
                    "with learner_ranks > 1 every rank must be given the same store address "
                    "(host, port); rank 0 hosts it"
                )
            from podium.cluster import routable_address
            from podium.models.vllm_launch import free_port

            address = (routable_address(), free_port())
        self.address = address
        return torch.distributed.TCPStore(
            address[0],
            address[1],
            is_master=self.rank == 0,
            timeout=datetime.timedelta(seconds=CALL_TIMEOUT_S),
            wait_for_workers=False,
        )

    @abstractmethod
    def connect(self, replicas: Sequence[ReplicaEndpoint]) -> None:
        """Reach the replicas and warm up every connection, once, before the first push."""

    @abstractmethod
    def _push_to(
        self,
        targets: Sequence[ReplicaEndpoint],
        plan: TransferPlan,
        tensors: list[tuple[str, torch.Tensor]],
        version: int,
    ) -> SyncRecord:
        """Send this rank's rows of `tensors` to `targets` as `version`; on rank 0, the
        verified record."""

    def _record(
        self, version: int, plan: TransferPlan, targets: Sequence[ReplicaEndpoint]
    ) -> SyncRecord:
        """A push's record before it starts: its bytes are the plan's once per target."""
        return SyncRecord(
            version=version, backend=self.backend, bytes=plan.bytes * len(targets), seconds=0.0
        )

    def snapshot(
        self, named_tensors: Iterable[tuple[str, torch.Tensor]], *, copy: bool = True
    ) -> Snapshot:
        """The plan (from the whole shapes, also of sharded parameters) and this rank's
        tensors, copied unless `copy` is False: the learner may change its parameters
        as soon as a background push has taken them."""
        items = list(named_tensors)
        plan = make_plan(items, self.learner_ranks)
        return Snapshot(plan, materialise(items, snapshot=copy, device=self.device))

    def push(self, named_tensors: Iterable[tuple[str, torch.Tensor]], version: int) -> SyncRecord:
        """Move these weights into every replica as `version`, verified. Every learner
        rank calls it with its tensors; each sends only its planned rows."""
        return self.push_snapshot(self.snapshot(named_tensors, copy=False), version)

    def push_snapshot(
        self, snap: Snapshot, version: int, only: Sequence[int] | None = None
    ) -> SyncRecord:
        """Load `snap` into every replica as `version`, or into replicas `only` (a
        rolling push: one replica at a time, the same snapshot each time)."""
        if only is None:
            return self._push_locked(list(self.replicas.values()), snap, version)
        unknown = [i for i in only if i not in self.replicas]
        if unknown:
            raise WeightSyncError(f"replica(s) {unknown} are not connected: connect them first")
        return self._push_locked([self.replicas[i] for i in only], snap, version)

    def push_async(
        self, named_tensors: Iterable[tuple[str, torch.Tensor]], version: int
    ) -> Future[SyncRecord]:
        """`push` in the background; returns once the tensors are snapshotted, so the
        learner can take its next step while the transfer is in flight."""
        snap = self.snapshot(named_tensors)
        targets = list(self.replicas.values())
        return self._background.submit(self._push_locked, targets, snap, version)

    def add_replica(
        self,
        replica: ReplicaEndpoint,
        named_tensors: Iterable[tuple[str, torch.Tensor]],
        version: int,
    ) -> SyncRecord:
        """A new or restarted replica joins and gets the current weights from the learner
        (every learner rank calls it, as it calls push)."""
        snap = self.snapshot(named_tensors)
        with self._lock:
            self.connect([replica])
        return self._push_locked([replica], snap, version)

    def drop_replica(self, index: int) -> None:
        """A replica the run goes on without (lost, and no seat for a replacement): no
        push goes to it any more."""
        with self._lock:
            self.replicas.pop(index, None)

    def corrupts_load(self) -> bool:
        """Whether the next replica load is corrupted on purpose: `corrupt_for_tests`
        (every load), or the failpoint `weight_sync.corrupt` (`raise@N`: the N-th)."""
        return self.corrupt_for_tests or failpoints.fires("weight_sync.corrupt")

    def _push_locked(
        self, targets: Sequence[ReplicaEndpoint], snap: Snapshot, version: int
    ) -> SyncRecord:
        if not targets:
            raise WeightSyncError("no replicas to push to: call connect(replicas) first")
        with self._lock:
            self._pushes += 1
            self._memo = snap.memo
            started = time.perf_counter()
            try:
                record = self._push_to(targets, snap.plan, snap.tensors, version)
            finally:
                self._memo = {}
            record.seconds = time.perf_counter() - started
            return record

    # -- the expected checksum, from every rank's rows --------------------------

    def _my_digests(self, plan: TransferPlan, tensors: list[tuple[str, torch.Tensor]]) -> list[str]:
        return [
            slice_digest(rows_of(planned, tensor, self.rank))
            for planned, (_, tensor) in zip(plan.tensors, tensors, strict=True)
        ]

    def _store_key(self, what: str, rank: int) -> str:
        return f"push{self._pushes}/{what}/rank{rank}"

    def publish(self, plan: TransferPlan, tensors: list[tuple[str, torch.Tensor]]) -> None:
        """A follower rank: put the digests of its rows where rank 0 reads them."""
        if self._store is not None and self.rank != 0:
            digests = self._my_digests(plan, tensors)
            self._store.set(self._store_key("digests", self.rank), json.dumps(digests))

    def expected_checksum(self, plan: TransferPlan, tensors: list[tuple[str, torch.Tensor]]) -> str:
        """Rank 0: the checksum every replica must report, from every rank's digests.
        One learner hashes a snapshot once, however many pushes send it (a rolling push
        sends it to one replica at a time)."""
        if self.learner_ranks == 1 and "checksum" in self._memo:
            return str(self._memo["checksum"])
        checksum = self._combined_checksum(plan, tensors)
        if self.learner_ranks == 1:
            self._memo["checksum"] = checksum
        return checksum

    def _combined_checksum(
        self, plan: TransferPlan, tensors: list[tuple[str, torch.Tensor]]
    ) -> str:
        per_rank = [self._my_digests(plan, tensors)]
        for r in range(1, self.learner_ranks):
            per_rank.append(json.loads(self._store.get(self._store_key("digests", r))))
        stream = ChecksumStream(self.learner_ranks)
        for i, planned in enumerate(plan.tensors):
            stream.update_digests(planned.name, planned.shape, [d[i] for d in per_rank])
        return stream.hexdigest()

    def close(self) -> None:
        self._background.shutdown(wait=True)

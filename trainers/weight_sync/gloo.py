"""Weights over a torch.distributed group between the learner ranks and each replica.

One small group per replica: learner ranks 0..R-1 and the replica as rank R, each built
as a `ProcessGroupGloo` over a shared TCPStore (hosted by learner rank 0) under a prefix
of its own. Not `init_process_group`: vLLM's worker already owns the default group, and
one group per replica lets a replacement join (a fresh group) while the others stay.
`connect` builds the groups and sends one probe per link (the warm-up); a push then
sends each rank's planned rows (plan.py) to every replica concurrently, while learner
rank 0 has the replicas receive, verify and load (base.swap_at_safe_point).

A push from one learner rank to two or more replicas (a barrier push) is instead one
broadcast a tensor over the members group: the learner and every replica it pushes to,
each replica as it joined (index and join count). The group is built at the first push
to those members and kept; a replica replaced (a new join) or added changes the members,
so the next push builds a new group, which each replica takes in place of the old. A
dead member cannot hold the others for long: the group's operations time out after
`MEMBERS_TIMEOUT_S`, and a push whose broadcast failed (the group not built, or a load
that raised) is made again replica by replica over their own groups, whose verdicts
decide the push as before. A rolling push (one replica at a time) and a sharded learner
keep the groups per replica.

nccl.py is the same protocol on CUDA tensors.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Unpack

import torch

from trainers.weight_sync.base import SyncOptions, SyncRecord, WeightSync, rows_of, timed
from trainers.weight_sync.plan import TransferPlan
from trainers.weight_sync.replica_calls import (
    CALL_TIMEOUT_S,
    ReplicaEndpoint,
    load_problem,
    rpc,
    swap_at_safe_point,
    verify,
)
from trainers.weight_sync.vllm_extension import build_group

GROUP_TIMEOUT_S = 900.0
MEMBERS_TIMEOUT_S = 60.0  # one broadcast operation (a tensor) or the members' rendezvous


class BroadcastFailed(Exception):
    """A push's broadcast did not land (gloo.py sends it replica by replica instead)."""


class GlooWeightSync(WeightSync):
    backend = "gloo"
    device = "cpu"
    needs_store = True
    broadcasts = True  # the members group (nccl.py: not yet, its path never ran)

    def __init__(self, **options: Unpack[SyncOptions]) -> None:
        super().__init__(**options)
        self._groups: dict[int, Any] = {}
        self._joins: dict[int, int] = {}  # how often each replica index has joined
        self._members: tuple[tuple[tuple[int, int], ...], str, Any] | None = None
        self._members_built = 0  # member groups built: each one's name

    def _spec(self, replica: ReplicaEndpoint, rank: int) -> dict[str, Any]:
        assert self.address is not None  # set by the store
        joins = self._joins.get(replica.index, 0)
        return {
            "host": self.address[0],
            "port": self.address[1],
            "group": f"replica{replica.index}-join{joins}",
            "rank": rank,
            "world": self.learner_ranks + 1,
            "learner_ranks": self.learner_ranks,
            "backend": self.backend,
            "timeout_s": GROUP_TIMEOUT_S,
        }

    def connect(self, replicas: Sequence[ReplicaEndpoint]) -> None:
        with ThreadPoolExecutor(max_workers=max(1, 2 * len(replicas))) as pool:
            joined = []
            for replica in replicas:
                remote: Future[Any] | None = None
                if self.rank == 0:  # rank 0 tells the replica to join (it blocks until all have)
                    remote = pool.submit(
                        rpc, replica, "podium_join_group", self._spec(replica, self.learner_ranks)
                    )
                local = pool.submit(build_group, self._spec(replica, self.rank), False)
                joined.append((replica, local, remote))
            for replica, local, remote in joined:
                group = local.result()
                probe = torch.ones(1, device=self.device)
                group.send([probe], self.learner_ranks, 0).wait()
                if remote is not None:
                    remote.result()
                self._groups[replica.index] = group
                self._joins[replica.index] = self._joins.get(replica.index, 0) + 1
                self.replicas[replica.index] = replica

    def _send(
        self, replica: ReplicaEndpoint, plan: TransferPlan, tensors: list[tuple[str, torch.Tensor]]
    ) -> list[Any]:
        group = self._groups[replica.index]
        works = []
        for planned, _, _ in plan.sends(self.rank):
            rows = rows_of(planned, tensors[planned.index][1], self.rank)
            works.append(group.send([rows.to(self.device)], self.learner_ranks, planned.index + 1))
        return works

    def _send_to_all(
        self,
        targets: Sequence[ReplicaEndpoint],
        plan: TransferPlan,
        tensors: list[tuple[str, torch.Tensor]],
    ) -> None:
        """A follower rank's rows to every replica: all posted before any is awaited, so
        a dead replica's broken link cannot keep the live ones from getting theirs (they
        wait for every rank's rows); the first failure is raised once all are done."""
        errors: list[BaseException] = []
        posted = []
        for replica in targets:
            try:
                posted.append(self._send(replica, plan, tensors))
            except Exception as exc:  # noqa: BLE001 - raised below, after the others
                errors.append(exc)
        for works in posted:
            for work in works:
                try:
                    work.wait()
                except Exception as exc:  # noqa: BLE001 - raised below
                    errors.append(exc)
                    break
        if errors:
            raise errors[0]

    def _push_to(
        self,
        targets: Sequence[ReplicaEndpoint],
        plan: TransferPlan,
        tensors: list[tuple[str, torch.Tensor]],
        version: int,
    ) -> SyncRecord:
        record = self._record(version, plan, targets)
        if self.broadcasts and self.learner_ranks == 1 and len(targets) > 1:
            try:
                return self._broadcast(targets, plan, tensors, version, record)
            except BroadcastFailed as exc:
                self._members = None  # built afresh at the next push; this one per replica
                record.broadcast_failed = str(exc)
        if self.rank != 0:  # only sends; rank 0 drives the replicas and verifies
            self.publish(plan, tensors)
            self._send_to_all(targets, plan, tensors)
            return record
        with ThreadPoolExecutor(max_workers=len(targets) + 1) as pool:
            expected = pool.submit(
                timed, record.phases, "digests_s", self.expected_checksum, plan, tensors
            )

            def one(replica: ReplicaEndpoint) -> dict[str, Any]:
                meta = plan.replica_meta(version, corrupt=self.corrupts_load())

                def load() -> dict[str, Any]:
                    with ThreadPoolExecutor(max_workers=1) as receiver:
                        answer = receiver.submit(rpc, replica, "podium_receive_weights", meta)
                        works = self._send(replica, plan, tensors)
                        result: dict[str, Any] = answer.result()  # all received: sends are done
                        for work in works:
                            work.wait()
                        return result

                return swap_at_safe_point(
                    replica, load, lambda got: load_problem(version, expected.result(), got)
                )

            answers = [(r, pool.submit(one, r)) for r in targets]
            results = [(r, a.result()) for r, a in answers]
            record.replicas = verify(version, expected.result(), results)
        return record

    # -- one broadcast a tensor to every replica (a learner of one rank) --------

    def _members_group(self, targets: Sequence[ReplicaEndpoint]) -> tuple[str, Any]:
        """The broadcast group of the learner (rank 0) and `targets` as they joined:
        kept while they stay, built afresh (and joined by each) when they change."""
        ordered = sorted(targets, key=lambda r: r.index)
        key = tuple((r.index, self._joins.get(r.index, 0)) for r in ordered)
        if self._members is not None and self._members[0] == key:
            return self._members[1], self._members[2]
        self._members_built += 1
        name = f"members{self._members_built}"

        def spec(rank: int) -> dict[str, Any]:
            assert self.address is not None
            return {
                "host": self.address[0],
                "port": self.address[1],
                "group": name,
                "rank": rank,
                "world": len(ordered) + 1,
                "learner_ranks": 1,
                "backend": self.backend,
                "timeout_s": MEMBERS_TIMEOUT_S,
                "members": True,
            }

        with ThreadPoolExecutor(max_workers=len(ordered)) as pool:
            joins = [
                pool.submit(rpc, r, "podium_join_group", spec(i)) for i, r in enumerate(ordered, 1)
            ]
            group = build_group(spec(0), False)
            group.broadcast(torch.ones(1, device=self.device), 0).wait()
            for join in joins:
                join.result()
        self._members = (key, name, group)
        return name, group

    def _broadcast(
        self,
        targets: Sequence[ReplicaEndpoint],
        plan: TransferPlan,
        tensors: list[tuple[str, torch.Tensor]],
        version: int,
        record: SyncRecord,
    ) -> SyncRecord:
        """The push as one broadcast a tensor, verified; BroadcastFailed where the
        broadcast failed (the group could not be built, a pause or a load raised):
        nothing is resumed then, and the caller makes the push replica by replica."""
        try:
            name, group = timed(record.phases, "members_group_s", self._members_group, targets)
        except Exception as exc:  # noqa: BLE001 - a member is gone: the push goes per replica
            raise BroadcastFailed(f"building the members group: {exc}") from exc
        # Each replica's receives are posted once every replica is paused (a pause waits
        # for the requests in flight), so none waits on the others' in-flight requests
        # beyond the group's timeout; a pause that fails breaks the barrier.
        all_paused = threading.Barrier(len(targets) + 1)  # and the sender
        with ThreadPoolExecutor(max_workers=len(targets) + 2) as pool:
            expected = pool.submit(
                timed, record.phases, "digests_s", self.expected_checksum, plan, tensors
            )

            def send() -> None:
                all_paused.wait(timeout=CALL_TIMEOUT_S)
                works = [
                    group.broadcast(tensors[planned.index][1].to(self.device).reshape(-1), 0)
                    for planned in plan.tensors
                ]
                for work in works:
                    work.wait()

            def one(replica: ReplicaEndpoint) -> dict[str, Any]:
                meta = {**plan.replica_meta(version, corrupt=self.corrupts_load()), "members": name}

                def load() -> dict[str, Any]:
                    all_paused.wait(timeout=CALL_TIMEOUT_S)
                    return dict(rpc(replica, "podium_receive_weights", meta))

                try:
                    return swap_at_safe_point(
                        replica, load, lambda got: load_problem(version, expected.result(), got)
                    )
                except BaseException:
                    all_paused.abort()
                    raise

            sending = pool.submit(send)
            answers = [(r, pool.submit(one, r)) for r in targets]
            failed = [a.exception() for _, a in answers if a.exception() is not None]
            if failed:
                all_paused.abort()
                raise BroadcastFailed(f"a replica could not be paused: {failed[0]}")
            results = [(r, a.result()) for r, a in answers]
            errors = [str(got["error"]) for _, got in results if got.get("error")]
            if sending.exception() is not None:
                errors.insert(0, f"the learner's broadcast: {sending.exception()}")
            if errors:
                raise BroadcastFailed("; ".join(errors))
            record.replicas = verify(version, expected.result(), results)
        record.broadcast = name
        return record

"""Scale-out from live weights: a running async GRPO job grows its replicas on request.

`podium jobs scale ID --replicas N` stores the request (`podium.jobs.scale`); while the
run trains (`job.py` starts a `ScaleOut` beside `AsyncRun.train` and joins it after),
`ScaleOut` polls it on a thread of its own (starting a vLLM server takes minutes; the
learner goes on meanwhile) and, when N exceeds the pool:

- checks the cluster has the seats (a CPU each, and a GPU on CUDA) and refuses the
  request otherwise: a replica Ray cannot place would wait forever;
- starts the new replicas (`Pool.start`, new indices after the highest);
- joins each with the learner's current weights over the transfer group, as a replaced
  replica joins (`learner.announce_replica`, `sync.add_replica`, verified): under the
  run's lock, after the pushes in flight, so no push is issued between the version it
  reads and the join; the join is listed in the run's syncs (`joined`, `scaled`);
- gives it a generation lock (pushes then wait for its generate calls too), the version
  it holds, and a replica thread (`AsyncRun.replica_loop`), which the controller admits
  like any other: its samples carry that version or a newer one;
- answers the request (done or refused, in words) for `podium jobs show`.

A replica that fails to start is killed and the request refused; the run goes on. A
join that fails after the transfer group took the replica in fails the run, as a failed
replacement does (its pushes would go to a replica that never loaded).
"""

from __future__ import annotations

import contextlib
import threading
from concurrent.futures import wait
from typing import TYPE_CHECKING, Any

from podium.store.schema import PROP_LINEAGE_PREFIX

if TYPE_CHECKING:
    from podium.jobs.scale import ScaleRequest
    from trainers.async_rl.run import AsyncRun
    from trainers.weight_sync.replica_calls import ReplicaEndpoint

POLL_S = 2.0


def job_id_of(lineage: dict[str, str]) -> str | None:
    """The job a run belongs to (None: a run outside the job system, as in unit tests)."""
    return lineage.get(f"{PROP_LINEAGE_PREFIX}job_id") or None


class ScaleOut:
    """Polls `job_id`'s replica-count request and grows `run`'s pool to it."""

    def __init__(self, run: AsyncRun, job_id: str | None, poll_s: float = POLL_S) -> None:
        self.run, self.job_id, self.poll_s = run, job_id, poll_s
        self.threads: list[threading.Thread] = []  # the new replicas' threads
        self._answered: int | None = None  # the last request this run acted on
        self._poller = threading.Thread(target=self._poll, name="scale-out", daemon=True)

    def start(self) -> None:
        if self.job_id is not None:
            self._poller.start()

    def join(self) -> None:
        """After the run's stop: the poller (a replica still starting ends first) and
        the new replicas' threads."""
        if self._poller.is_alive():
            self._poller.join()
        for t in self.threads:
            t.join()

    def _poll(self) -> None:
        from podium.jobs.scale import latest_request

        assert self.job_id is not None
        while not self.run.stop.wait(self.poll_s):
            try:
                request = latest_request(self.job_id)
            except Exception as exc:  # noqa: BLE001 - a busy database: ask again later
                self.run.reporter.log(f"scale-out: could not read requests ({exc}); retrying")
                continue
            if request is None or request.outcome is not None or request.id == self._answered:
                continue
            self._answered = request.id
            try:
                self.serve(request)
            except BaseException as exc:  # noqa: BLE001 - the job fails with it
                self._answer(request, "refused", f"the join failed: {exc}")
                self.run.fail(exc)
                return

    def serve(self, request: ScaleRequest) -> None:
        """Grow the pool to `request.replicas`, or refuse, and answer the request."""
        pool, log = self.run.pool, self.run.reporter.log
        have = sorted(pool.actors)
        wanted = request.replicas - len(have)
        log(
            f"scale-out: {request.requested_by} asked for {request.replicas} replica(s); "
            f"the job has {len(have)}"
        )
        if wanted <= 0:
            self._answer(
                request,
                "refused",
                f"the job has {len(have)} replicas; scaling down is not supported yet",
            )
            return
        new = list(range(max(have) + 1, max(have) + 1 + wanted))
        short = self._short_of_seats(new)
        if short:
            self._answer(request, "refused", short)
            return
        self.run.reporter.phase(f"scale-out: starting replica(s) {new}")
        try:
            endpoints = pool.start(new)
        except Exception as exc:  # noqa: BLE001 - the run goes on without them
            self._kill(new)
            self._answer(request, "refused", f"replica(s) {new} failed to start: {exc}")
            return
        if self.run.stop.is_set():  # the run ended meanwhile; pool.stop reaps them
            self._answer(request, "refused", "the run ended before the new replicas joined")
            return
        versions = [self.join_replica(endpoint) for endpoint in endpoints]
        self._answer(
            request,
            "done",
            f"replica(s) {new} joined at version(s) {versions}; the job has "
            f"{len(pool.actors)} replicas",
        )

    def join_replica(self, endpoint: ReplicaEndpoint) -> int:
        """A started replica gets the learner's current weights, verified, then
        generates; the version it joined at."""
        run, index = self.run, endpoint.index
        with run.lock:  # no step commits and no push is issued until it has joined
            wait(list(run.pushes))  # pushes in flight land first; the next include it
            version = run.controller.version
            run.learner.announce_replica(index, endpoint.base_url, version)
            record = run.sync.add_replica(endpoint, run.learner.named_tensors(), version)
            run.gen_locks[index] = threading.Lock()
            run.pool.held[index] = version
        run.syncs.append({**record.as_dict(), "joined": index, "scaled": True})
        thread = threading.Thread(
            target=run.replica_loop, args=(index,), name=f"replica-{index}", daemon=True
        )
        self.threads.append(thread)
        thread.start()
        run.controller.weights_changed()
        run.reporter.log(
            f"scale-out: replica {index} ({endpoint.base_url}) joined; it holds version {version}"
        )
        return version

    def _short_of_seats(self, new: list[int]) -> str:
        """Why the cluster cannot place replicas `new` now ('' when it can)."""
        placement = self.run.pool.placement
        if placement.colocated:
            return (
                "this run's learner and its one replica share a GPU (placement: "
                "colocated): it cannot take more replicas; run it with --placement separate"
            )
        seats = [placement.replica_seat(i) for i in new]
        try:
            free: dict[str, Any] = self.run.pool.ray.available_resources()
        except Exception as exc:  # noqa: BLE001 - refused, not the run's failure
            return f"could not read the Ray cluster's free resources: {exc}"
        for resource, need in (
            ("CPU", sum(s.num_cpus for s in seats)),
            ("GPU", sum(s.num_gpus for s in seats)),
        ):
            if need > float(free.get(resource, 0.0)) + 1e-9:
                return (
                    f"{len(new)} more replica(s) need {need:g} {resource}(s) and the Ray "
                    f"cluster has {float(free.get(resource, 0.0)):g} free; free some or add "
                    "a node, then ask again"
                )
        return ""

    def _kill(self, indices: list[int]) -> None:
        """Replicas that failed to start: their actors go (the pool never listed them)."""
        pool = self.run.pool
        for i in indices:
            with contextlib.suppress(Exception):
                pool.ray.kill(pool.ray.get_actor(pool.actor_name(i)))

    def _answer(self, request: ScaleRequest, outcome: str, note: str) -> None:
        from podium.jobs.scale import answer_request

        self.run.reporter.log(f"scale-out: {outcome}: {note}")
        if outcome != "done":
            self.run.reporter.warn(f"scale to {request.replicas} replicas {outcome}: {note}")
        try:
            answer_request(request.id, outcome, note)
        except Exception as exc:  # noqa: BLE001 - the log above keeps the answer
            self.run.reporter.log(f"scale-out: could not record the answer ({exc})")

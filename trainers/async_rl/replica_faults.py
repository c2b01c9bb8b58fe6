"""An async GRPO run's lost replicas: a replica that dies (killed, out of memory, its
node lost) gives its slots back and is replaced, the replacement joining with the
learner's current weights; where the cluster has no seat for it the run goes on with the
others, and the job's record lists it in `replicas_lost`."""

from __future__ import annotations

from concurrent.futures import wait

from trainers.async_rl.run_state import RunState


class ReplicaFaults(RunState):
    """Replacing a dead replica, or going on without it (`AsyncRun` is built from this
    and `Pushes`)."""

    def replace(self, replica: int) -> bool:
        """A dead replica: its slots are given back, a new one starts and gets the
        current weights from the learner over the transfer group. False when the
        cluster has no seat for it and the run goes on with the other replicas."""
        from podium.errors import PodiumError
        from trainers.async_rl.replica import reap_servers

        self.learner.check()  # a node lost with the learner too: that is the job's end
        self.pool.replacing.add(replica)
        lost = self.controller.release_replica(replica)
        self.reporter.log(f"replica {replica}: {len(lost)} slot(s) given back for regeneration")
        old = self.pool.infos.get(replica)
        if old is not None:
            # First: the dead actor's vLLM worker may outlive it, still in the transfer
            # group, where a learner rank's push blocks sending to it; reaped, the send
            # fails, and the push (and the replacement's join after it) can go on.
            reap_servers(self.pool.ray, [old], self.reporter)
        self.pool.restarts += 1
        try:
            (endpoint,) = self.pool.start([replica], generation=self.pool.restarts)
        except PodiumError as exc:  # not placed within the time: the cluster has no seat
            others = [r for r in self.pool.actors if r != replica and r not in self.pool.replacing]
            # Sharded learner ranks each hold the replica in their own transfer: not yet.
            if self.stop.is_set() or not others or self.cfg.learner_ranks > 1:
                raise
            self.go_on_without(replica, str(exc))
            return False
        if self.stop.is_set():  # the run ended meanwhile: nothing left to generate
            return True
        with self.lock:
            wait(list(self.pushes))  # pushes in flight to the old replica end first
            version = self.controller.version
            self.learner.announce_replica(endpoint.index, endpoint.base_url, version)
            record = self.sync.add_replica(endpoint, self.learner.named_tensors(), version)
        self.syncs.append({**record.as_dict(), "joined": replica})
        self.pool.held[replica] = version
        self.pool.replacing.discard(replica)
        self.controller.weights_changed()
        self.reporter.log(f"replica {replica} replaced; it holds version {version}")
        return True

    def go_on_without(self, replica: int, why: str) -> None:
        """Replica `replica` is gone for good: no push goes to it, no slot waits on it,
        and the log and the job's record say so."""
        with self.lock:
            wait(list(self.pushes))  # pushes in flight end first (they skip it: replacing)
            self.sync.drop_replica(replica)
            self.pool.actors.pop(replica, None)
            self.pool.held.pop(replica, None)
            self.gen_locks.pop(replica, None)
            self.pool.replacing.discard(replica)
        self.replicas_lost.append({"replica": replica, "reason": why})
        self.controller.weights_changed()
        self.reporter.warn(
            f"replica {replica} was lost and no replacement could be placed; the run goes "
            f"on with {len(self.pool.actors)} replica(s): {why}"
        )

"""`kind: grpo` with `rollout: async`: replicas generate on Ray while a learner trains.

    podium train grpo --table demo.json_sft --out json-async --rollout async \\
        --replicas 2 --max-staleness 1 --weight-sync gloo --rollouts demo.json_async_rollouts
    podium sql "SELECT trained_step - policy_version AS lag, count(*) FROM \\
        demo.json_async_rollouts GROUP BY lag"
    podium jobs show ID --json            # outputs.summary.syncs: one verified push a step

The job (`job.py`) checks the card, loads the learner and starts what follows; the
pieces, each in its own module:

- replicas (`replica.PolicyReplica`, one Ray actor and vLLM server each; on the
  configured Ray cluster, else a private local Ray started for this job and stopped at
  its end) generate prompt groups, each completion tagged with the weight version that
  made it and its behaviour log-probs (processed: after temperature);
- one thread per replica asks the controller (`controller.Controller`) for slots,
  generates, and scores the completions with the card's reward rules
  (`trainers.rewards`), outside the learner;
- the learner (`learner.Learner` in this process, or in a Ray actor where the
  cluster's GPUs or CPUs are on other nodes, `learner_host.RemoteLearner`, or with
  `learner_ranks` R > 1 rank 0 of R processes holding FSDP2-sharded parameters,
  `sharded.ShardedLearner`, each rank pushing its own rows) takes each step's slots in
  order,
  trains (GRPO advantages, truncated-IS REINFORCE: learner.py), commits the new version
  and starts a push of its weights (`trainers.weight_sync`) in the background, so it can
  train the next step while the push is in flight, as far as `max_staleness` allows; a
  push lands on every replica at once or one at a time (`weight_swap`: swaps.py);
- each step's samples are appended to the rollouts table (`rollouts.py`) with the step
  that trained them; a replica that dies is replaced, its slots are generated again,
  and the replacement gets the current weights from the learner (`add_replica`);
- `podium jobs scale ID --replicas N` adds replicas while the run trains; each joins
  with the learner's current weights the same way (`scale.py`, beside `train`).
"""

from __future__ import annotations

import contextlib
import random
import statistics
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Any

from podium.errors import Cancelled
from podium.reporting import Reporter
from trainers.async_rl.controller import Completed, Controller, Ticket
from trainers.async_rl.prompts import Prompt, Scorer
from trainers.async_rl.rollouts import RolloutsWriter, rollout_row
from trainers.config import GrpoConfig
from trainers.learning_signal import no_signal_warning

if TYPE_CHECKING:
    from collections.abc import Callable

    from trainers.async_rl.protocols import (
        PolicyLearner,
        ReplicaGroup,
        SaveCheckpoint,
        WeightPusher,
    )
    from trainers.weight_sync.base import SyncRecord

ADMIT_WAIT_S = 0.5
LEARNER_CHECK_S = 5.0  # while no samples come, how often the learner is checked for loss


class AsyncRun:
    """One async GRPO run: the threads, the learner loop and what they share."""

    def __init__(
        self,
        cfg: GrpoConfig,
        reporter: Reporter,
        prompts: list[Prompt],
        scorer: Scorer,
        learner: PolicyLearner,
        sync: WeightPusher,
        pool: ReplicaGroup,
        writer: RolloutsWriter,
    ) -> None:
        self.cfg, self.reporter, self.prompts = cfg, reporter, prompts
        self.scorer, self.learner, self.sync, self.pool, self.writer = (
            scorer,
            learner,
            sync,
            pool,
            writer,
        )
        self.groups_per_step = cfg.batch_size * cfg.grad_accum // cfg.num_generations
        self.controller = Controller(cfg.max_staleness, self.groups_per_step, cfg.max_steps)
        order = list(range(len(prompts)))
        random.Random(cfg.seed).shuffle(order)
        self.order = order
        self.lock = threading.RLock()  # learner weights + push issue + replica joins
        self.pushes: list[Future[SyncRecord | None]] = []
        self.issued = 0  # the newest version a push was issued for
        self.pushes_skipped: list[int] = []  # versions a newer queued push carried instead
        self._push_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="push")
        # Held by a replica's thread while it generates, and by a push while it lands.
        self.gen_locks = {r: threading.Lock() for r in pool.actors}
        self.syncs: list[dict[str, Any]] = []
        self.sync_failures: list[dict[str, Any]] = []  # pushes that met a dead replica
        # Replicas lost whose replacement found no seat: the run went on without them.
        self.replicas_lost: list[dict[str, Any]] = []
        self.errors: list[BaseException] = []
        self.stop = pool.stopping  # set, a replacement waiting for a seat gives up too
        self.generated = 0  # samples generated and kept (slots given back excluded)
        self._count_lock = threading.Lock()
        self.history: list[dict[str, float]] = []
        self._told_no_signal = False

    # -- replicas ---------------------------------------------------------------

    def prompt_of(self, slot: int) -> Prompt:
        return self.prompts[self.order[slot % len(self.order)]]

    def _admit(self, replica: int) -> list[Ticket]:
        """Up to one step's slots for this replica, waiting a moment for the first."""

        def version() -> int:
            return self.pool.held[replica]

        first = self.controller.admit(replica, version, timeout=ADMIT_WAIT_S)
        if first is None:
            return []
        tickets = [first]
        while len(tickets) < self.groups_per_step:
            more = self.controller.admit(replica, version, timeout=0)
            if more is None:
                break
            tickets.append(more)
        return tickets

    def replica_loop(self, replica: int) -> None:
        from ray.exceptions import RayError, RayTaskError

        while not self.stop.is_set() and not self.controller.state.finished:
            tickets: list[Ticket] = []
            try:
                tickets = self._admit(replica)
                if not tickets:
                    # Idle: still notice a dead actor, so it is replaced before its turn.
                    self.pool.ray.get(self.pool.actors[replica].get_endpoint.remote())
                    continue
                self._generate(replica, tickets)
            except RayTaskError as exc:  # the replica's own code failed: not a death
                self.fail(exc)
                return
            except RayError as exc:  # the actor died: killed, out of memory, node lost
                if self.stop.is_set():
                    return
                self.reporter.log(f"replica {replica} died ({type(exc).__name__}); replacing it")
                try:
                    if not self.replace(replica):
                        return  # no seat for a replacement: the others go on
                except BaseException as err:  # noqa: BLE001 - the job fails with it
                    self.fail(err)
                    return
            except BaseException as exc:  # noqa: BLE001 - the job fails with it
                self.fail(exc)
                return

    def _generate(self, replica: int, tickets: list[Ticket]) -> None:
        cfg = self.cfg
        prompts = [self.prompt_of(t.slot) for t in tickets]
        actor = self.pool.actors[replica]
        with self.gen_locks[replica]:
            rows = self.pool.ray.get(
                actor.generate.remote(
                    [p.ids for p in prompts],
                    cfg.num_generations,
                    cfg.max_completion_length,
                    cfg.temperature,
                    cfg.seed * 7919 + tickets[0].slot,
                )
            )
        for i, (ticket, prompt) in enumerate(zip(tickets, prompts, strict=True)):
            mine = [r for r in rows if r["prompt_index"] == i]
            rewards, means = self.scorer.score(prompt, [r["text"] for r in mine])
            version = min(int(r["policy_version"]) for r in mine)
            payload = {"prompt": prompt, "rows": mine, "rewards": rewards, "means": means}
            if self.controller.complete(ticket, payload, version):
                with self._count_lock:
                    self.generated += len(mine)

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

    def fail(self, exc: BaseException) -> None:
        self.errors.append(exc)
        self.stop.set()
        self.controller.close()

    def raise_errors(self) -> None:
        if self.errors:
            raise self.errors[0]

    # -- pushes -----------------------------------------------------------------

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

    # -- the learner ------------------------------------------------------------

    def learn(self, writer_rows: list[dict[str, Any]], batch: list[Completed], step: int) -> None:
        from trainers.async_rl.learner import Sample, group_advantages

        samples, rewards, lags = [], [], []
        means: dict[str, list[float]] = {}
        for c in batch:
            payload = c.payload
            advantages = group_advantages(payload["rewards"], len(payload["rows"]))
            for j, (row, adv, reward) in enumerate(
                zip(payload["rows"], advantages, payload["rewards"], strict=True)
            ):
                samples.append(
                    Sample(
                        payload["prompt"].ids,
                        list(row["completion_ids"]),
                        list(row["behaviour_logprobs"]),
                        adv,
                    )
                )
                rewards.append(reward)
                writer_rows.append(
                    rollout_row(
                        rollout_id=f"{c.ticket.slot}-{j}",
                        prompt=payload["prompt"].messages,
                        completion=row["text"],
                        reward=reward,
                        policy_version=c.ticket.version,
                        trained_step=step,
                        replica=c.ticket.replica,
                        metadata={
                            "prompt_id": payload["prompt"].id,
                            "slot": c.ticket.slot,
                            "completion": j,
                            "finish_reason": row.get("finish_reason"),
                        },
                    )
                )
            lags.append(step - c.ticket.version)
            for key, value in payload["means"].items():
                means.setdefault(key, []).append(value)
        began = time.perf_counter()
        with self.lock:
            stats = self.learner.step(samples)
            version = self.controller.commit_step()
            if version < self.cfg.max_steps:  # the last weights generate nothing more
                self.push(version)
        step_seconds = time.perf_counter() - began
        last_sync = next((s for s in reversed(self.syncs) if "joined" not in s), None)
        metrics: dict[str, float] = {
            "reward": statistics.fmean(rewards),
            "reward_std": statistics.pstdev(rewards),
            # Groups whose completions all scored alike teach nothing (TRL's name for it).
            "frac_reward_zero_std": sum(len(set(c.payload["rewards"])) <= 1 for c in batch)
            / len(batch),
            "loss": stats.loss,
            "is_weight_mean": stats.is_weight_mean,
            "is_truncated": stats.is_truncated,
            "behaviour_kl": stats.behaviour_kl,
            "clip_fraction": stats.clip_fraction,
            "learning_rate": stats.learning_rate,
            **({"ref_kl": stats.ref_kl} if stats.ref_kl is not None else {}),
            "lag": statistics.fmean(lags),
            "lag_max": float(max(lags)),
            # Samples trained at this step with each lag: the app's live histogram.
            **{
                f"staleness/{k}": float(lags.count(k) * self.cfg.num_generations) for k in set(lags)
            },
            "policy_version": float(version),
            "learner_seconds": step_seconds,
            **{k: statistics.fmean(v) for k, v in means.items()},
            # A copy: a scale-out may add a replica meanwhile.
            **{f"policy_version/{r}": float(v) for r, v in dict(self.pool.held).items()},
        }
        if last_sync is not None:
            metrics["sync_seconds"] = float(last_sync["seconds"])
            if last_sync.get("replica_idle_s") is not None:  # swaps.py: per replica, mean
                metrics["replica_idle_seconds"] = float(last_sync["replica_idle_s"])
        self.history.append(metrics)
        self.reporter.metric(step + 1, metrics)
        warning = None if self._told_no_signal else no_signal_warning(self.history)
        if warning:  # the Train page and the Logbook show it while the run goes on
            self._told_no_signal = True
            self.reporter.warn(warning)
        first = batch[0].payload
        self.reporter.sample(
            step + 1,
            {
                "prompt": first["prompt"].messages[-1]["content"],
                "completion": first["rows"][0]["text"],
                "reward": first["rewards"][0],
                "lag": step - batch[0].ticket.version,
            },
        )

    def train(self, save: SaveCheckpoint, stop_requested: Callable[[], bool] | None = None) -> None:
        """Learn until the last step; `stop_requested` (a held SIGTERM) ends the run
        between steps as a cancel, as the job's own cancel check does."""
        from podium import failpoints

        threads = [
            threading.Thread(target=self.replica_loop, args=(r,), name=f"replica-{r}", daemon=True)
            for r in sorted(self.pool.actors)
        ]
        for t in threads:
            t.start()
        checked = time.monotonic()
        try:
            while not self.controller.state.finished:
                # First: the SIGTERM also stopped the job's private Ray, so a replica's
                # error now is the stop's doing, not the run's failure.
                if stop_requested is not None and stop_requested():
                    raise Cancelled("stopped by SIGTERM")
                self.raise_errors()
                self.reporter.check_cancelled()
                batch = self.controller.take_batch(timeout=1.0)
                if batch is None:
                    if time.monotonic() - checked > LEARNER_CHECK_S:
                        self.learner.check()  # lost with its node: fail now, not hang
                        checked = time.monotonic()
                    continue
                failpoints.hit("async_rl.learner_step")
                step = self.controller.version
                rows: list[dict[str, Any]] = []
                self.learn(rows, batch, step)
                self.writer.append(rows)
                self.reporter.progress(step + 1, self.cfg.max_steps, "learner steps")
                every = self.cfg.save_every
                if every and (step + 1) % every == 0 and step + 1 < self.cfg.max_steps:
                    with self.lock:
                        save(step + 1, final=False)
            wait(list(self.pushes))
            self.raise_errors()
        finally:
            self.stop.set()
            self.controller.close()
            for t in threads:  # a replacement still starting ends first (then stopped)
                t.join()
            self._push_thread.shutdown(wait=True)

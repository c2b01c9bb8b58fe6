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
  push lands on every replica at once or one at a time (`weight_swap`: swaps.py), and
  pushes queued behind a slow one skip to the newest (pushes.py);
- each step's samples are appended to the rollouts table (`rollouts.py`) with the step
  that trained them; a replica that dies is replaced, its slots are generated again,
  and the replacement gets the current weights from the learner (`add_replica`), or
  the run goes on without it where no seat is left (replica_faults.py);
- `podium jobs scale ID --replicas N` adds replicas while the run trains; each joins
  with the learner's current weights the same way (`scale.py`, beside `train`).
"""

from __future__ import annotations

import statistics
import threading
import time
from concurrent.futures import wait
from typing import TYPE_CHECKING, Any

from podium.errors import Cancelled
from trainers.async_rl.controller import Completed, Ticket
from trainers.async_rl.prompts import Prompt
from trainers.async_rl.protocols import LearnerLost
from trainers.async_rl.pushes import Pushes
from trainers.async_rl.replica_faults import ReplicaFaults
from trainers.async_rl.rollouts import rollout_row
from trainers.learning_signal import no_signal_warning

if TYPE_CHECKING:
    from collections.abc import Callable

    from trainers.async_rl.protocols import SaveCheckpoint

ADMIT_WAIT_S = 0.5
LEARNER_CHECK_S = 5.0  # while no samples come, how often the learner is checked for loss


class AsyncRun(ReplicaFaults, Pushes):
    """One async GRPO run: the replicas' threads and the learner loop (the state they
    share: run_state.py; pushes: pushes.py; lost replicas: replica_faults.py)."""

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
                    self._on_its_node(replica, self.pool.actors[replica].get_endpoint.remote())
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

    def _on_its_node(self, replica: int, ref: Any) -> Any:
        """The call's result; a node's death ends it as a dead actor (`get_on_node`)."""
        from podium.cluster import get_on_node

        info = self.pool.infos.get(replica, {})
        return get_on_node(self.pool.ray, ref, info.get("node_id"))

    def _generate(self, replica: int, tickets: list[Ticket]) -> None:
        cfg = self.cfg
        prompts = [self.prompt_of(t.slot) for t in tickets]
        actor = self.pool.actors[replica]
        with self.gen_locks[replica]:
            rows = self._on_its_node(
                replica,
                actor.generate.remote(
                    [p.ids for p in prompts],
                    cfg.num_generations,
                    cfg.max_completion_length,
                    cfg.temperature,
                    cfg.seed * 7919 + tickets[0].slot,
                ),
            )
        for i, (ticket, prompt) in enumerate(zip(tickets, prompts, strict=True)):
            mine = [r for r in rows if r["prompt_index"] == i]
            rewards, means = self.scorer.score(prompt, [r["text"] for r in mine])
            version = min(int(r["policy_version"]) for r in mine)
            payload = {"prompt": prompt, "rows": mine, "rewards": rewards, "means": means}
            if self.controller.complete(ticket, payload, version):
                with self._count_lock:
                    self.generated += len(mine)

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
        except LearnerLost:
            # A sharded learner's push in flight waits on the lost rank's rows in each
            # replica (and on its digests in the store: rank_workers.WatchedStore):
            # stopped, the replicas fail it, so the run ends now, not when the push times
            # out (900 s). A one-rank learner's push fails with its actor.
            if self.cfg.learner_ranks > 1:
                self.stop.set()
                self.pool.stop(self.reporter)
            raise
        finally:
            self.stop.set()
            self.controller.close()
            for t in threads:  # a replacement still starting ends first (then stopped)
                t.join()
            self._push_thread.shutdown(wait=True)

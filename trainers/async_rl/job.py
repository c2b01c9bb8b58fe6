"""The async GRPO job: check the host, load the learner (one process, or rank 0 of
`learner_ranks`), start the replicas and the weight transfer, run (`run.AsyncRun`), save
and report. See run.py for how the pieces work together."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from podium.errors import Cancelled, PodiumError
from podium.reporting import JobOutputs, Reporter
from podium.store.schema import PROP_LINEAGE_CHECKPOINT, PROP_LINEAGE_INPUT
from trainers.async_rl.host import check_async_host, rollouts_table
from trainers.async_rl.learner_host import LEARNER_CPUS, start_remote_learner
from trainers.async_rl.learner_setup import (
    RankSeats,
    learner_and_sync,
    learner_in_an_actor,
    learner_nodes,
    learner_spec,
    rank_devices,
    seat_kind,
)
from trainers.async_rl.memory import ray_oom_line
from trainers.async_rl.placement import LearnerSeats, hold_learner_seats, plan_placement
from trainers.async_rl.pool import Pool, ray_for_job
from trainers.async_rl.prompts import Scorer, load_prompts
from trainers.async_rl.protocols import LearnerLost
from trainers.async_rl.rollouts import RolloutsWriter, rollouts_note
from trainers.async_rl.run import AsyncRun
from trainers.async_rl.scale import ScaleOut, job_id_of
from trainers.config import GrpoConfig
from trainers.data import TrainingData
from trainers.held_sigterm import HeldSigterm
from trainers.lifecycle import as_config, check_card, start_run
from trainers.rewards import SampleTap, build_rewards, check_rewards
from trainers.runtime import BaseModelRef, load_tokenizer, prepare_env, resolve_device

if TYPE_CHECKING:
    from podium.models.registry import ModelInfo
    from trainers.async_rl.protocols import PolicyLearner, WeightPusher
    from trainers.lifecycle import Run


def run_async_grpo(config: GrpoConfig, reporter: Reporter) -> JobOutputs:
    prepare_env()
    cfg = as_config(config, GrpoConfig)  # the card's own async rules: its model's
    check_rewards(cfg.rewards, *_table_context(cfg))
    base, data = check_card(cfg)
    # Again, as at submit: this worker's host, and what appeared since (a rollouts table,
    # a vLLM server using the memory).
    check_async_host(cfg, base.path)
    table = rollouts_table(cfg)
    reporter.log(
        f"async grpo on {data.table}@{data.snapshot_id}: {len(data.train)} prompts; base "
        f"{base.name}; {cfg.replicas} replica(s), max_staleness {cfg.max_staleness}, "
        f"weight sync {cfg.weight_sync} ({cfg.weight_swap} swaps); "
        f"{rollouts_note(table, named=bool(cfg.rollouts))}"
    )
    reporter.check_cancelled()
    return _run(cfg, base, data, table, reporter)


def _run(
    cfg: GrpoConfig, base: BaseModelRef, data: TrainingData, table: str, reporter: Reporter
) -> JobOutputs:
    tap = SampleTap(keep=0)
    lineage = {
        "rollouts": table,
        "rollout": "async",
        "replicas": cfg.replicas,
        "max_staleness": cfg.max_staleness,
        "weight_sync": cfg.weight_sync,
        "weight_swap": cfg.weight_swap,
        "learner_ranks": cfg.learner_ranks,
        "rewards": [r.model_dump() for r in cfg.rewards],
    }
    run = start_run("grpo", cfg, base, data, reporter, lineage)
    tokenizer = load_tokenizer(base.path)
    run.writer.tokenizer = tokenizer
    prompts, too_long = load_prompts(cfg, data, tokenizer)
    if too_long:
        reporter.log(f"{too_long} prompts left out: longer than max_length - max_completion_length")
    properties = {**run.writer.reporter.lineage}
    properties[PROP_LINEAGE_INPUT] = f"{data.table}@{data.snapshot_id}"
    properties[PROP_LINEAGE_CHECKPOINT] = cfg.out
    funcs, weights = build_rewards(cfg.rewards, tap, *_table_context(cfg))
    job = str(reporter.lineage.get("podium.lineage.job_id") or os.getpid())
    began = time.perf_counter()
    # A private Ray's CPUs: one a replica and one a follower learner rank (placement.py).
    with ray_for_job(cfg.replicas + cfg.learner_ranks - 1, reporter) as ray:
        remote = learner_in_an_actor(ray, cfg)
        # A learner in an actor resolves the card's device where it runs: its node's
        # GPUs, not the job's.
        device = cfg.device if remote else resolve_device(cfg.device)
        placement = plan_placement(
            cfg, seat_kind(ray, cfg, device, remote), LEARNER_CPUS if remote else 0.0
        )
        pad_token_id = int(tokenizer.pad_token_id or 0)
        seats = LearnerSeats()
        learner: PolicyLearner | None = None
        sync: WeightPusher | None = None
        job_run: AsyncRun | None = None
        sigterm = HeldSigterm()  # a cancel's SIGTERM ends the step in hand, then saves
        pool = Pool(ray, base.name, tag=f"podium-async-{job}", placement=placement)
        ranks_at: list[dict[str, Any]] = []  # where each learner rank runs
        backend: str = cfg.weight_sync
        stage = "reserving the learner's GPUs"
        try:
            if remote:
                learner, sync, seats = start_remote_learner(
                    ray,
                    placement,
                    learner_spec(cfg, base, pad_token_id, run.work_dir, placement),
                    name=f"podium-async-{job}-learner",
                    timeout_s=pool.place_timeout_s,
                )
                assert seats.where is not None
                devices = [str(seats.where[0]["device"])]
                reporter.log(
                    f"learner: an actor on {seats.where[0]['node']}, {devices[0]} "
                    f"(CUDA_VISIBLE_DEVICES={seats.where[0]['cuda_visible_devices']})"
                )
            else:
                seats = hold_learner_seats(ray, placement, name=f"podium-async-{job}-learner")
                # Each rank on the GPU its seat holds (0..R-1 of a node's own), else `device`.
                devices = rank_devices(
                    seats,
                    ray.get_runtime_context().get_node_id(),
                    os.environ.get("CUDA_VISIBLE_DEVICES"),
                    device,
                )
                if seats.where:
                    reserved = [w["gpus"] for w in seats.where]
                    reporter.log(f"learner: {', '.join(devices)} (GPUs {reserved} reserved)")
            pool.group = seats.group  # a colocated replica sits in the learner's bundle
            ranks_at = learner_nodes(seats, devices)
            if not remote:
                stage = "starting the learner ranks"
                ranks = RankSeats(
                    ray, placement, seats, f"podium-async-{job}-learner", pool.place_timeout_s
                )
                learner, sync = learner_and_sync(
                    cfg, base, devices, pad_token_id, run.work_dir, reporter.log, ranks
                )
                ranks_at = learner_nodes(seats, devices, learner)
                for rank in ranks_at[1:]:
                    reporter.log(
                        f"learner rank {rank['rank']}: an actor on {rank['node']}, "
                        f"{rank['device']} (CUDA_VISIBLE_DEVICES={rank['cuda_visible_devices']})"
                    )
            assert learner is not None and sync is not None
            stage = "starting the replicas"
            reporter.phase(f"starting {cfg.replicas} vLLM replica(s) of {base.name}")
            endpoints = pool.start(list(range(cfg.replicas)))
            stage = "training"
            for e in endpoints:
                seat = pool.infos[e.index]
                reporter.log(
                    f"replica {e.index}: {e.base_url} on {seat['node']} "
                    f"(CUDA_VISIBLE_DEVICES={seat.get('cuda_visible_devices')})"
                )
                pool.held[e.index] = 0
            reporter.phase(f"connecting the {cfg.weight_sync} weight transfer")
            learner.connect([(e.index, e.base_url) for e in endpoints])  # the other ranks
            sync.connect(endpoints)
            # An actor's learner picks the path where the replicas are (CUDA IPC for one
            # on its own GPU: ipc.backend_for).
            backend = str(getattr(sync, "backend", cfg.weight_sync))
            reporter.log(f"weight transfer: {backend}")
            writer = RolloutsWriter(table, properties)
            job_run = AsyncRun(
                cfg, reporter, prompts, Scorer(funcs, weights), learner, sync, pool, writer
            )

            def save(step: int, *, final: bool) -> ModelInfo:
                return run.writer.save(learner.full_model(), step, final=final)

            scale_out = ScaleOut(job_run, job_id_of(reporter.lineage))  # `podium jobs scale`
            scale_out.start()
            loop_began = time.perf_counter()
            sigterm.hold()
            try:
                job_run.train(save, lambda: sigterm.requested)
            except Exception:
                if sigterm.requested:  # it stopped the job's private Ray too: not a failure
                    raise Cancelled("stopped by SIGTERM") from None
                raise
            finally:
                job_run.stop.set()
                scale_out.join()  # a replica it is still starting ends first (then stopped)
            loop_seconds = time.perf_counter() - loop_began
            seconds = time.perf_counter() - began
            if writer.rows != job_run.generated:
                raise PodiumError(
                    f"{job_run.generated} samples were generated but {writer.rows} written "
                    f"to {table}"
                )
            final = save(cfg.max_steps, final=True)
        except Cancelled:
            done = job_run.controller.version if job_run is not None else 0
            if learner is not None:
                _keep_state(run, learner, done)
            run.writer.stopped(done, cfg.max_steps)  # what it saved so far: partial
            sigterm.deliver()  # the job's handler: a cancel, or the worker shutting down
            raise Cancelled(f"cancelled; rollouts so far are in {table}") from None
        except LearnerLost:
            # The weights in hand went with the learner; what it saved before stays,
            # registered as <out>-step-<N> marked partial, and the failed job names it.
            done = job_run.controller.version if job_run is not None else 0
            run.writer.stopped(done, cfg.max_steps, how="failed")
            raise
        except Exception as exc:
            run.writer.discard()  # a failed run registers nothing
            # Ray's report is a page (an object-store dump); the job's error is one line.
            line = ray_oom_line(exc, stage, cfg.replicas)
            if line is None:
                raise
            reporter.log(f"{type(exc).__name__}: {exc}")
            raise PodiumError(line) from None
        finally:
            # Where each part ran, in the job's record however it ends (a failed run's too).
            for key, where in _placement(pool, ranks_at).items():
                reporter.keep(key, where)
            sigterm.release()
            if sync is not None:
                sync.close()
            if learner is not None:
                learner.close()
            pool.stop(reporter)
            seats.release(ray)
    rewards = [h["reward"] for h in job_run.history]
    return JobOutputs(
        tables=[table],
        checkpoints=[info.name for info in run.writer.saved],
        summary={
            "checkpoint": final.name,
            "path": final.path,
            "steps": cfg.max_steps,
            "rollout": "async",
            "rollouts": table,
            "rollouts_note": rollouts_note(table, named=bool(cfg.rollouts)),
            "samples": writer.rows,
            "syncs": sorted(job_run.syncs, key=lambda s: (s["version"], "joined" in s)),
            "staleness": {  # lag -> samples trained at it
                lag: groups * cfg.num_generations
                for lag, groups in job_run.controller.staleness().items()
            },
            "weight_swap": cfg.weight_swap,
            # Seconds a replica could not generate because of a push (mean over the
            # replicas of each push, then over the pushes): swaps.py.
            "replica_idle_s_per_push": _mean_idle(job_run.syncs),
            "replica_restarts": pool.restarts,
            **_placement(pool, ranks_at),
            "transfer_backend": backend,  # the path pushes took (ipc: colocated)
            "learner_ranks": cfg.learner_ranks,
            "sync_failures": job_run.sync_failures,
            # Replicas lost whose replacement found no seat (the run went on without them).
            "replicas_lost": job_run.replicas_lost,
            "pushes_skipped": job_run.pushes_skipped,  # a newer queued push carried them
            "replicas": len(pool.actors),  # the card's, and any added by `jobs scale`
            "first_reward": rewards[0] if rewards else None,
            "last_reward": rewards[-1] if rewards else None,
            "prompts": len(prompts),
            "snapshot_id": data.snapshot_id,
            # End to end (replica start-up included), and the training loop alone.
            "steps_per_minute": cfg.max_steps / max(seconds, 1e-9) * 60,
            "loop_steps_per_minute": cfg.max_steps / max(loop_seconds, 1e-9) * 60,
        },
    )


def _keep_state(run: Run, learner: PolicyLearner, step: int) -> None:
    """A cancelled run saves and registers its weights at the step it stopped (as
    `<out>-step-<N>`, marked partial by the caller), unless that step is saved already
    or none was taken. A learner that cannot give its weights (a rank stopped by the
    same SIGTERM) leaves what was saved before, and the log says why."""
    if step == 0 or run.writer.last_step == step:
        return
    try:
        run.writer.save(learner.full_model(), step, final=False)
    except Exception as exc:
        run.writer.reporter.log(f"could not save the state at step {step}: {exc}")


def _placement(pool: Pool, learner_nodes: list[dict[str, Any]]) -> dict[str, Any]:
    """Where each replica ran (replaced ones too: the node's routable address and the
    devices Ray gave it) and each learner rank (its node and devices)."""
    return {
        "replica_nodes": [
            {
                "replica": info["index"],
                "node": info["node"],
                "url": info["url"],
                "cuda_visible_devices": info.get("cuda_visible_devices"),
            }
            for info in pool.every_info
        ],
        "learner_nodes": learner_nodes,
    }


def _mean_idle(syncs: list[dict[str, Any]]) -> float | None:
    idle = [float(s["replica_idle_s"]) for s in syncs if s.get("replica_idle_s") is not None]
    return sum(idle) / len(idle) if idle else None


def _table_context(cfg: GrpoConfig) -> tuple[dict[str, str], str]:
    from podium.store.catalog.catalog import load_table

    return dict(load_table(cfg.table.name).properties), cfg.table.name

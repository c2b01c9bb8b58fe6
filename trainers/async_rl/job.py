"""The async GRPO job: check the host, load the learner (one process, or rank 0 of
`learner_ranks`), start the replicas and the weight transfer, run (`run.AsyncRun`), save
and report. See run.py for how the pieces work together."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from podium.cluster import actor_seat
from podium.errors import Cancelled, PodiumError
from podium.reporting import JobOutputs, Reporter
from podium.store.schema import PROP_LINEAGE_CHECKPOINT, PROP_LINEAGE_INPUT
from trainers.async_rl.host import check_async_host, rollouts_table
from trainers.async_rl.learner_host import (
    LEARNER_CPUS,
    LearnerSpec,
    build_learner,
    learner_on_a_node_of_its_own,
    start_remote_learner,
)
from trainers.async_rl.memory import ray_oom_line
from trainers.async_rl.placement import (
    LearnerSeats,
    hold_learner_seats,
    learner_device,
    plan_placement,
)
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
    from trainers.async_rl.learner import LearnerSettings
    from trainers.async_rl.protocols import PolicyLearner, WeightPusher
    from trainers.lifecycle import Run
    from trainers.weight_sync import WeightSync


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
    with ray_for_job(cfg.replicas, reporter) as ray:
        remote = _learner_in_an_actor(ray, cfg)
        # A learner in an actor resolves the card's device where it runs: its node's
        # GPUs, not the job's.
        device = cfg.device if remote else resolve_device(cfg.device)
        placement = plan_placement(
            cfg, _seat_kind(ray, cfg, device, remote), LEARNER_CPUS if remote else 0.0
        )
        seats = LearnerSeats()
        learner: PolicyLearner | None = None
        sync: WeightPusher | None = None
        job_run: AsyncRun | None = None
        sigterm = HeldSigterm()  # a cancel's SIGTERM ends the step in hand, then saves
        pool = Pool(ray, base.name, tag=f"podium-async-{job}", placement=placement)
        learner_nodes: list[dict[str, Any]] = []
        stage = "reserving the learner's GPUs"
        try:
            if remote:
                learner, sync, seats = start_remote_learner(
                    ray,
                    placement,
                    _learner_spec(cfg, base, int(tokenizer.pad_token_id or 0), run),
                    name=f"podium-async-{job}-learner",
                    timeout_s=pool.place_timeout_s,
                )
                assert seats.where is not None
                learner_on = str(seats.where[0]["device"])
                reporter.log(
                    f"learner: an actor on {seats.where[0]['node']}, {learner_on} "
                    f"(CUDA_VISIBLE_DEVICES={seats.where[0]['cuda_visible_devices']})"
                )
            else:
                seats = hold_learner_seats(ray, placement, name=f"podium-async-{job}-learner")
                learner_on = device
            if seats.where and not remote:
                learner_on = learner_device(
                    seats.where[0],
                    ray.get_runtime_context().get_node_id(),
                    os.environ.get("CUDA_VISIBLE_DEVICES"),
                )
                reporter.log(f"learner: {learner_on} (GPU {seats.where[0]['gpus']} reserved)")
            learner_nodes = _learner_nodes(cfg.learner_ranks, seats, learner_on)
            if not remote:
                learner, sync = _learner_and_sync(
                    cfg, base, learner_on, int(tokenizer.pad_token_id or 0), run, reporter
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
            for key, where in _placement(pool, learner_nodes).items():
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
            **_placement(pool, learner_nodes),
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


def _learner_nodes(ranks: int, seats: LearnerSeats, device: str) -> list[dict[str, Any]]:
    """Each learner rank's node and devices: the GPU seat Ray reserved for it, else this
    process's node (its CPU ranks run beside the job's process)."""
    here = actor_seat()
    return [
        {
            "rank": rank,
            "node": (seats.where[rank] if seats.where else here)["node"],
            "device": device,
            "cuda_visible_devices": (seats.where[rank] if seats.where else here)[
                "cuda_visible_devices"
            ],
        }
        for rank in range(ranks)
    ]


def _learner_in_an_actor(ray: Any, cfg: GrpoConfig) -> bool:
    """One learner rank on a cluster whose GPUs, or CPUs, are on other nodes than the
    job's (learner_host.py); several ranks still run beside the job's process."""
    return cfg.learner_ranks == 1 and learner_on_a_node_of_its_own(ray)


def _seat_kind(ray: Any, cfg: GrpoConfig, device: str, remote: bool) -> str:
    """What the seats reserve: GPUs where the learner goes to a cluster that has them
    (its actor then trains on the GPU Ray gave it), else the job's own device."""
    if remote and cfg.device != "cpu":
        has_gpus = ray.cluster_resources().get("GPU", 0.0) > 0
        return "cuda" if has_gpus or cfg.device == "cuda" else "cpu"
    return device


def _learner_spec(cfg: GrpoConfig, base: BaseModelRef, pad_token_id: int, run: Run) -> LearnerSpec:
    return LearnerSpec(
        checkpoint=str(base.path),
        device=cfg.device,
        settings=learner_settings(cfg),
        pad_token_id=pad_token_id,
        sync_backend=cfg.weight_sync,
        work_dir=str(run.work_dir),
    )


def _learner_and_sync(
    cfg: GrpoConfig,
    base: BaseModelRef,
    device: str,
    pad_token_id: int,
    run: Run,
    reporter: Reporter,
) -> tuple[PolicyLearner, WeightSync]:
    """One learner process, or rank 0 of `learner_ranks` (sharded.py), and its sync."""
    from podium.cluster import routable_address
    from podium.models.vllm_launch import free_port
    from trainers.weight_sync import make_weight_sync

    settings = learner_settings(cfg)
    if cfg.learner_ranks == 1:
        learner = build_learner(_learner_spec(cfg, base, pad_token_id, run), device)
        return learner, make_weight_sync(cfg.weight_sync, work_dir=run.work_dir)
    from trainers.async_rl.sharded import RankSpec, ShardedLearner

    spec = RankSpec(
        checkpoint=str(base.path),
        ranks=cfg.learner_ranks,
        host=routable_address(),  # inside Ray: the node's IP, which replicas reach
        group_port=free_port(),
        sync_backend=cfg.weight_sync,
        sync_port=free_port(),
        work_dir=str(run.work_dir),
        settings=settings,
        pad_token_id=pad_token_id,
        seed=cfg.seed,
    )
    sync = make_weight_sync(
        cfg.weight_sync,
        learner_ranks=cfg.learner_ranks,
        rank=0,
        work_dir=run.work_dir,
        address=(spec.host, spec.sync_port),
    )
    return ShardedLearner(spec, reporter.log), sync


def learner_settings(cfg: GrpoConfig) -> LearnerSettings:
    """The card's learner fields: `batch_size` samples a forward pass, `batch_size x
    grad_accum` a batch, cut into `ppo_minibatches` optimizer steps for `ppo_epochs`
    passes, on the card's LR schedule over the whole run."""
    from trainers.async_rl.learner import LearnerSettings

    return LearnerSettings(
        learning_rate=cfg.learning_rate,
        temperature=cfg.temperature,
        minibatches=cfg.ppo_minibatches,
        epochs=cfg.ppo_epochs,
        micro_batch=cfg.batch_size,
        beta=cfg.beta,
        lr_scheduler=cfg.lr_scheduler,
        warmup_steps=cfg.warmup_steps,
        total_steps=cfg.max_steps,
    )


def _mean_idle(syncs: list[dict[str, Any]]) -> float | None:
    idle = [float(s["replica_idle_s"]) for s in syncs if s.get("replica_idle_s") is not None]
    return sum(idle) / len(idle) if idle else None


def _table_context(cfg: GrpoConfig) -> tuple[dict[str, str], str]:
    from podium.store.catalog.catalog import load_table

    return dict(load_table(cfg.table.name).properties), cfg.table.name

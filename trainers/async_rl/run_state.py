"""What an async GRPO run's parts share (`run.AsyncRun` and the two rooms it is built
from: `pushes.Pushes`, `replica_faults.ReplicaFaults`): the card, the seams (learner,
weight transfer, replicas, rollouts writer), the controller, the locks, the pushes in
flight and what the job's record reports of them, and how a part fails the run."""

from __future__ import annotations

import random
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from podium.reporting import Reporter
from trainers.async_rl.controller import Controller
from trainers.async_rl.prompts import Prompt, Scorer
from trainers.async_rl.rollouts import RolloutsWriter
from trainers.config import GrpoConfig

if TYPE_CHECKING:
    from trainers.async_rl.protocols import PolicyLearner, ReplicaGroup, WeightPusher
    from trainers.weight_sync.base import SyncRecord


class RunState:
    """The state of one async GRPO run, and how any of its threads fails it."""

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

    def fail(self, exc: BaseException) -> None:
        self.errors.append(exc)
        self.stop.set()
        self.controller.close()

    def raise_errors(self) -> None:
        if self.errors:
            raise self.errors[0]

"""Learner ranks: the async learner as R processes with FSDP2-sharded parameters.

With `learner_ranks: R` > 1 the job process is learner rank 0 and starts R - 1 followers
(rank_workers.py: Ray actors in the learner's placement group, each in its own bundle;
processes of rank 0's where there is no Ray). All R join one process group (gloo on
CPU; NCCL on GPUs: rank 0 on the GPU its seat holds, `RankSpec.gpus`, learner_setup.py,
each follower on the one GPU Ray gave its actor) and shard the model with FSDP2
(`fully_shard`, dim-0 shards: rank r holds rows `row_slices(shape, R)[r]` of every
parameter, and the matching optimizer state). Rank 0 drives; each command is broadcast
to the followers, which run it alongside:

    connect  every rank joins every replica's transfer group (weight_sync)
    step     each rank trains on its share of every minibatch; FSDP all-gathers the weights
             for the forward pass and reduce-scatters the gradients
    push     each rank snapshots its rows and pushes them in the background, so every
             replica receives R slices of each tensor at once (the n -> m plan)
    add      a new replica gets every rank's rows over its fresh group
    gather   whole weights on rank 0, to save a checkpoint
    stop

Commands go over a gloo group of their own beside the learner group FSDP uses, and rank
0 sends them only from the thread that trains (under the run's lock). Pushes use the
replicas' own groups and the store, never the learner group, so they overlap training.

Two time-outs, because a follower waits in two ways. Between commands it may wait as
long as rank 0 waits for samples (minutes on a big model): its command group keeps
torch's 1,800 s. In a collective every rank is working, so a peer silent for
`rank_timeout_s` (the card's `learner_rank_timeout_s`, 120 s) is gone: a node cut off by
the network, whose actor Ray does not yet call dead, or a stalled process. The learner
group, and rank 0's side of the command group, give up then, and the job fails as a lost
rank (`LearnerLost`: checkpoints kept) naming the followers, in place of gloo's error
after 30 minutes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from trainers.async_rl.learner import Learner, LearnerSettings, Sample, StepStats
from trainers.async_rl.protocols import LearnerLost

if TYPE_CHECKING:
    from trainers.async_rl.protocols import Followers

GROUP_TIMEOUT_S = 1800.0  # the rendezvous, and a follower's wait for rank 0's next command
RANK_TIMEOUT_S = 120.0  # a collective's wait for a peer (GrpoConfig.learner_rank_timeout_s)
# How long rank 0, its collective broken, waits for Ray (or the OS) to report the follower
# that broke it: the job then fails as a lost rank, keeping its checkpoints.
LOST_WAIT_S = 10.0


@dataclass(frozen=True)
class RankSpec:
    """What every learner rank needs to build its part (sent to followers as JSON)."""

    checkpoint: str
    ranks: int
    host: str  # rank 0's routable address (podium.cluster): both rendezvous are there
    group_port: int  # the learner group's rendezvous
    sync_backend: str
    sync_port: int  # the weight-sync store rank 0 hosts
    work_dir: str
    settings: LearnerSettings
    pad_token_id: int
    seed: int
    # "cuda": rank r trains on this host's GPU gpus[r] (GPU r without gpus), the learner
    # group over NCCL (FSDP2 on GPUs); "cpu": gloo. The weight sync's backend is
    # sync_backend's either way.
    device: str = "cpu"
    gpus: list[int] | None = None
    rank_timeout_s: float = RANK_TIMEOUT_S

    def gpu(self, rank: int) -> int:
        """The CUDA index rank `rank` trains on, as this host's processes see it."""
        return self.gpus[rank] if self.gpus else rank

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> RankSpec:
        fields = json.loads(text)
        return cls(**{**fields, "settings": LearnerSettings(**fields["settings"])})


def build_rank(spec: RankSpec, rank: int, gpu: int | None = None) -> tuple[Learner, Any]:
    """Join the learner group, load the checkpoint, shard it, and wrap it as a Learner;
    on CUDA on GPU `gpu` as this process sees it (spec.gpu(rank) when None). With it, the
    group rank 0's commands go over (`receive_command`)."""
    import datetime

    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.distributed_c10d import _set_pg_timeout
    from torch.distributed.fsdp import fully_shard

    from trainers.runtime import load_model

    cuda = spec.device == "cuda"
    index = spec.gpu(rank) if gpu is None else gpu
    if cuda:
        torch.cuda.set_device(index)  # before the group: NCCL binds a rank to it
    dist.init_process_group(
        "nccl" if cuda else "gloo",
        init_method=f"tcp://{spec.host}:{spec.group_port}",
        rank=rank,
        world_size=spec.ranks,
        timeout=datetime.timedelta(seconds=GROUP_TIMEOUT_S),  # a slow start is not a loss
    )
    # Each process's own time-out: rank 0's sends give up with its collectives, while a
    # follower waits for the next command as long as rank 0 may wait for samples.
    waits = spec.rank_timeout_s if rank == 0 else GROUP_TIMEOUT_S
    commands = dist.new_group(backend="gloo", timeout=datetime.timedelta(seconds=waits))
    torch.manual_seed(spec.seed)
    device = torch.device("cuda", index) if cuda else torch.device("cpu")
    model = load_model(Path(spec.checkpoint), device.type).to(device)
    # The reference is only read (no grad, no optimizer state): each rank keeps a whole
    # copy rather than joining it to the shards.
    reference = None
    if spec.settings.beta > 0:
        reference = load_model(Path(spec.checkpoint), device.type).to(device)
    mesh = init_device_mesh(device.type, (spec.ranks,))
    for layer in model.model.layers:  # one all-gather a decoder layer, not one whole model
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    # Every rank loaded (a slow load is not a loss): from here a rank waits for another
    # only in a collective, where all are working. The time-out of FSDP's collectives and
    # the step's, on the default group (torch has no public setter).
    dist.barrier(device_ids=[index] if cuda else None)
    _set_pg_timeout(datetime.timedelta(seconds=spec.rank_timeout_s))
    learner = Learner(
        model,
        spec.settings,
        pad_token_id=spec.pad_token_id,
        ranks=spec.ranks,
        rank=rank,
        reference=reference,
    )
    return learner, commands


def gather_state(model: Any) -> dict[str, torch.Tensor]:
    """Whole tensors of every sharded parameter (a collective: every rank calls it)."""
    out = {}
    for name, value in model.state_dict().items():
        full = value.full_tensor() if hasattr(value, "full_tensor") else value
        out[name] = full.detach().cpu()
    return out


def receive_command(commands: Any) -> tuple[Any, ...]:
    """Rank 0's next command, over the group `commands` (build_rank's)."""
    import torch.distributed as dist

    box: list[Any] = [None]
    dist.broadcast_object_list(box, src=0, group=commands)
    return tuple(box[0])


def timed_out(exc: BaseException) -> bool:
    """Whether a collective's error is its time-out (gloo: "Timed out waiting 120000ms
    for recv operation to complete"), not a peer's closed connection or a bug. (NCCL's
    watchdog ends the process at its time-out instead: not run on GPUs here.)"""
    return "timed out" in str(exc).lower()


def unanswered_line(spec: RankSpec, followers: Sequence[dict[str, Any]], exc: BaseException) -> str:
    """The job's failure where a follower went silent in a collective: gloo cannot say
    which, so every follower is named, with where it ran."""
    ranks = ", ".join(
        f"rank {w['rank']} on node {w['node']} (CUDA_VISIBLE_DEVICES={w['cuda_visible_devices']})"
        for w in followers
    )
    said = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    said = said.split("] ", 1)[-1]  # gloo's source path first: not the reader's
    backend = "NCCL" if spec.device == "cuda" else "gloo"
    return (
        f"a learner rank did not answer rank 0 within {spec.rank_timeout_s:g} s in a "
        f"collective (learner_rank_timeout_s): its node is cut off from the network or its "
        f"process stalled (followers: {ranks}); the run cannot go on without its shard of "
        f"the weights ({backend}: {said})"
    )


class ShardedLearner:
    """Learner rank 0 of R: the Learner interface run.py uses, driving R - 1 followers
    (`start_followers(spec)`: rank_workers.py)."""

    def __init__(
        self,
        spec: RankSpec,
        log: Callable[[str], object],
        start_followers: Callable[[RankSpec], Followers],
    ) -> None:
        self.spec, self.log = spec, log
        self.broken = False  # a collective failed: the followers cannot be told to stop
        self.followers = start_followers(spec)
        try:
            self.learner, self.commands = self._join()
        except BaseException:
            self.followers.kill()
            raise
        if spec.device == "cuda":  # the current device is a thread's: this one trains
            torch.cuda.set_device(spec.gpu(0))
        self._template: Any = None
        group = "NCCL on GPUs" if spec.device == "cuda" else "gloo"
        self.log(f"learner: {spec.ranks} ranks, FSDP2-sharded parameters over {group}")

    def _join(self) -> tuple[Learner, Any]:
        """Rank 0's part, built on a thread while the followers are watched: one that
        fails before it joins the group fails the start with its reason, where rank 0
        alone would wait out the group's rendezvous (GROUP_TIMEOUT_S)."""
        import threading

        built: list[tuple[Learner, Any]] = []
        failed: list[BaseException] = []

        def build() -> None:
            try:
                built.append(build_rank(self.spec, 0))
            except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread
                failed.append(exc)

        thread = threading.Thread(target=build, name="learner-rank-0", daemon=True)
        thread.start()
        while thread.is_alive():
            thread.join(timeout=1.0)
            if thread.is_alive():
                self.check()
        if failed:
            raise failed[0]
        return built[0]

    @property
    def model(self) -> Any:
        return self.learner.model

    def check(self, wait_s: float = 0.0) -> None:
        line = self.followers.lost(wait_s)
        if line is not None:
            raise LearnerLost(line)

    def _collective(self, call: Callable[[], Any]) -> Any:
        """`call` (a collective over the ranks): broken by a lost follower, or timed out
        on a silent one, the job's error is that rank's loss (the job keeps its
        checkpoints), not gloo's."""
        try:
            return call()
        except Exception as exc:
            self.broken = True
            self.check(LOST_WAIT_S)
            if timed_out(exc):
                raise LearnerLost(unanswered_line(self.spec, self.followers.where, exc)) from None
            raise

    def _send(self, *command: Any) -> None:
        import torch.distributed as dist

        self.check()
        self._collective(lambda: dist.broadcast_object_list([command], src=0, group=self.commands))

    def connect(self, endpoints: Sequence[tuple[int, str]]) -> None:
        self._send("connect", list(endpoints))

    def step(self, samples: Sequence[Sample]) -> StepStats:
        self._send("step", list(samples))
        stats: StepStats = self._collective(lambda: self.learner.step(samples))
        return stats

    def named_tensors(self) -> Iterator[tuple[str, torch.Tensor]]:
        return self.learner.named_tensors()

    def announce_push(self, version: int) -> None:
        self._send("push", version)

    def announce_replica(self, index: int, base_url: str, version: int) -> None:
        self._send("add", index, base_url, version)

    def full_model(self) -> Any:
        from trainers.runtime import load_model

        self._send("gather")
        state = self._collective(lambda: gather_state(self.learner.model))
        if self._template is None:
            self._template = load_model(Path(self.spec.checkpoint), "cpu")
        self._template.load_state_dict(state)
        return self._template

    def close(self) -> None:
        import torch.distributed as dist

        try:
            if not self.broken and self.followers.lost() is None:
                self._send("stop")
                self.followers.wait(timeout_s=300)
        finally:
            self.followers.kill()
            if dist.is_initialized():
                dist.destroy_process_group()

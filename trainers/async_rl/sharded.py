"""Learner ranks: the async learner as R processes with FSDP2-sharded parameters.

With `learner_ranks: R` > 1 the job process is learner rank 0 and starts R - 1 follower
processes (`python -m trainers.async_rl.learner_rank`). All R join one process group
(gloo on CPU; NCCL on GPUs, rank r on the GPU Ray reserved for it, `RankSpec.gpus`:
learner_setup.py) and shard the model with FSDP2
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

Commands go over the learner group, which FSDP also uses, so rank 0 sends them only from
the thread that trains (under the run's lock). Pushes use the replicas' own groups and
the store, never the learner group, so they overlap training.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from podium.processes import python_module
from trainers.async_rl.learner import Learner, LearnerSettings, Sample, StepStats
from trainers.async_rl.protocols import LearnerLost

FOLLOWER_MODULE = "trainers.async_rl.learner_rank"
GROUP_TIMEOUT_S = 1800.0


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

    def gpu(self, rank: int) -> int:
        """The CUDA index rank `rank` trains on, as this host's processes see it."""
        return self.gpus[rank] if self.gpus else rank

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> RankSpec:
        fields = json.loads(text)
        return cls(**{**fields, "settings": LearnerSettings(**fields["settings"])})


def build_rank(spec: RankSpec, rank: int) -> Learner:
    """Join the learner group, load the checkpoint, shard it, and wrap it as a Learner."""
    import datetime

    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    from trainers.runtime import load_model

    cuda = spec.device == "cuda"
    if cuda:
        torch.cuda.set_device(spec.gpu(rank))  # before the group: NCCL binds a rank to it
    dist.init_process_group(
        "nccl" if cuda else "gloo",
        init_method=f"tcp://{spec.host}:{spec.group_port}",
        rank=rank,
        world_size=spec.ranks,
        timeout=datetime.timedelta(seconds=GROUP_TIMEOUT_S),
    )
    torch.manual_seed(spec.seed)
    device = torch.device("cuda", spec.gpu(rank)) if cuda else torch.device("cpu")
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
    return Learner(
        model,
        spec.settings,
        pad_token_id=spec.pad_token_id,
        ranks=spec.ranks,
        rank=rank,
        reference=reference,
    )


def gather_state(model: Any) -> dict[str, torch.Tensor]:
    """Whole tensors of every sharded parameter (a collective: every rank calls it)."""
    out = {}
    for name, value in model.state_dict().items():
        full = value.full_tensor() if hasattr(value, "full_tensor") else value
        out[name] = full.detach().cpu()
    return out


def receive_command() -> tuple[Any, ...]:
    import torch.distributed as dist

    box: list[Any] = [None]
    dist.broadcast_object_list(box, src=0)
    return tuple(box[0])


class ShardedLearner:
    """Learner rank 0 of R: the Learner interface run.py uses, driving R - 1 followers."""

    def __init__(self, spec: RankSpec, log: Callable[[str], object]) -> None:
        self.spec, self.log = spec, log
        env = {**os.environ, "PYTHONPATH": _repo_root()}
        self.followers = [
            subprocess.Popen(
                python_module(FOLLOWER_MODULE, str(r), spec.to_json()),
                env=env,
            )
            for r in range(1, spec.ranks)
        ]
        try:
            self.learner = build_rank(spec, 0)
        except BaseException:
            self._kill()
            raise
        self._template: Any = None
        group = "NCCL on GPUs" if spec.device == "cuda" else "gloo"
        self.log(f"learner: {spec.ranks} ranks, FSDP2-sharded parameters over {group}")

    @property
    def model(self) -> Any:
        return self.learner.model

    def check(self) -> None:
        for rank, proc in enumerate(self.followers, start=1):
            code = proc.poll()
            if code is not None:
                raise LearnerLost(
                    f"learner rank {rank} exited (code {code}); the job's log has its error"
                )

    def _send(self, *command: Any) -> None:
        import torch.distributed as dist

        self.check()
        dist.broadcast_object_list([command], src=0)

    def connect(self, endpoints: Sequence[tuple[int, str]]) -> None:
        self._send("connect", list(endpoints))

    def step(self, samples: Sequence[Sample]) -> StepStats:
        self._send("step", list(samples))
        return self.learner.step(samples)

    def named_tensors(self) -> Iterator[tuple[str, torch.Tensor]]:
        return self.learner.named_tensors()

    def announce_push(self, version: int) -> None:
        self._send("push", version)

    def announce_replica(self, index: int, base_url: str, version: int) -> None:
        self._send("add", index, base_url, version)

    def full_model(self) -> Any:
        from trainers.runtime import load_model

        self._send("gather")
        state = gather_state(self.learner.model)
        if self._template is None:
            self._template = load_model(Path(self.spec.checkpoint), "cpu")
        self._template.load_state_dict(state)
        return self._template

    def close(self) -> None:
        import torch.distributed as dist

        try:
            if all(p.poll() is None for p in self.followers):
                self._send("stop")
                for proc in self.followers:
                    proc.wait(timeout=300)
        finally:
            self._kill()
            if dist.is_initialized():
                dist.destroy_process_group()

    def _kill(self) -> None:
        for proc in self.followers:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _repo_root() -> str:
    root = str(Path(__file__).resolve().parents[2])
    extra = os.environ.get("PYTHONPATH")
    return root + (os.pathsep + extra if extra else "")

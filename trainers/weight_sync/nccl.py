"""The gloo protocol on GPUs: the same groups, plan, probes and verification, with
`ProcessGroupNCCL` over the same TCPStore and the tensors on CUDA.

Each replica's worker builds its NCCL group with `vllm_extension.build_group` (backend
"nccl") and receives straight into CUDA buffers; the learner sends from its CUDA
parameters. This is the design of vLLM's own NCCL weight-transfer engine
(vllm/distributed/weight_transfer/nccl_engine.py: a stateless group beside the engine's
own, trainer as rank 0) without its packed-buffer batching; a PyNccl group would need
vLLM on the learner side, which Podium's environment does not have.

UNTESTED on Podium's CPU machine (no CUDA there); its test is skipped without a GPU.
"""

from __future__ import annotations

from trainers.weight_sync.gloo import GlooWeightSync


class NcclWeightSync(GlooWeightSync):
    backend = "nccl"
    device = "cuda"
    broadcasts = False

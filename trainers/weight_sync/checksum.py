"""The learner's side of sync verification: the same checksum the replicas compute.

The one implementation lives in `vllm_extension.py`, the module vLLM loads, because that
interpreter cannot import Podium; this module only re-exports it for the learner.
"""

from __future__ import annotations

from trainers.weight_sync.vllm_extension import weights_checksum

__all__ = ["weights_checksum"]

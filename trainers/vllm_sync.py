"""New policy weights into the colocated vLLM engine, through vLLM's in-place reload.

TRL 1.16's colocate mode hands each tensor to the engine model's `load_weights`, which
assumes the engine's parameters are still as loaded from the checkpoint. vLLM 0.32
post-processes them where a kernel wants another layout: its CPU build repacks every
linear layer and drops the loader hooks, so TRL's sync failed there with "'Parameter'
object has no attribute 'weight_loader'". vLLM's worker method `reload_weights` (the
layerwise reload) restores the loaded layout, loads the tensors and processes them again;
it is the engine's own way to take new weights in place, on any platform.

The tensors still come from TRL's `_iter_named_params`, consumed lazily: for a LoRA
policy it merges the adapters for the walk and unmerges after, so the engine must read
each tensor before the walk ends.

The reload leaves a tied output head computing with a packed copy of the OLD embedding
(its checksums match, its logits do not), so every sync then re-ties and re-processes
it: `refresh_tied_head`, the same function the async-RL replicas run after their loads.
"""

from __future__ import annotations

from typing import Any


def engine_can_reload(generation: Any) -> bool:
    """The colocated engine's worker offers `reload_weights` (vLLM >= 0.32)."""
    try:
        worker = generation.llm.llm_engine.model_executor.driver_worker
    except AttributeError:
        return False
    return callable(getattr(worker, "reload_weights", None))


def sync_by_reload(generation: Any) -> bool:
    """Route a TRL `VLLMGeneration` (colocate mode) through the engine's in-place reload.
    False, and TRL's own sync kept, where the engine has none."""
    if getattr(generation, "mode", None) != "colocate" or not engine_can_reload(generation):
        return False
    if getattr(generation, "enable_sleep_mode", False):
        return False  # TRL's sync wakes the weights first; keep it whole

    def sync_weights() -> None:
        generation.llm.collective_rpc(
            "reload_weights", kwargs={"weights_iterator": generation._iter_named_params()}
        )
        # Imported here: trainers.weight_sync loads torch, and importing trainers must not
        # (a run sets its threading environment before torch loads).
        from trainers.weight_sync.vllm_extension import refresh_tied_head

        generation.llm.collective_rpc(refresh_tied_head)  # the worker is its argument
        generation.llm.reset_prefix_cache()

    generation.sync_weights = sync_weights
    return True

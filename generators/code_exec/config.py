"""The run card of `kind: code-exec-build` (build and verify modes), on its own so the
build, the verify pass and their Ray driver all read it without importing each other."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, Field

from generators.grading import GRADE_LIMITS
from generators.sandbox import Limits
from podium.jobs.launchers import LaunchOptions
from podium.store.catalog.catalog import full_name
from podium.store.catalog.table_name import TableName
from podium.store.read.refs import TableRef
from podium.store.schema import PROP_LINEAGE_PREFIX

KIND = "code-exec-build"
PROP_ROWS_TABLE = PROP_LINEAGE_PREFIX + "code_exec_rows"


class CodeExecConfig(LaunchOptions):
    """Run-card front matter of `kind: code-exec-build`."""

    table: TableRef = Field(
        validation_alias=AliasChoices("table", "functions"),
        description="Functions table (code, entry_point, id) for build; a rows table for verify.",
    )
    out: TableName = Field(
        description="Rows table (build) or report table (verify); re-runs resume."
    )
    sft_out: TableName | None = Field(
        None, description="SFT table to (re)write (default: OUT_sft)."
    )
    model: str = Field("base", description="Registered model that proposes inputs.")
    mode: Literal["build", "verify"] = Field("build", description="build, or verify old rows.")
    inputs_per_function: int = Field(4, ge=1, le=32, description="Inputs asked per function.")
    backend: Literal["local", "docker"] | None = Field(
        None, description="Sandbox backend (default: the sandbox_backend setting)."
    )
    workers: int | None = Field(None, ge=1, description="Sandbox workers (default: CPU count).")
    limit: int | None = Field(None, ge=1, description="Only the first N functions (or rows).")
    timeout_s: float = Field(
        GRADE_LIMITS.wall_s, gt=0, le=600, description="Wall/CPU limit per execution."
    )
    memory_mb: int = Field(
        GRADE_LIMITS.memory_mb, ge=32, le=16384, description="Memory limit per execution."
    )
    temperature: float = Field(0.8, ge=0.0, le=2.0, description="Sampling temperature.")
    max_tokens: int = Field(384, ge=16, le=4096, description="Most tokens per proposal.")
    seed: int | None = Field(
        None,
        description="Sampling seed (blank: one is drawn when the job is queued and pinned in "
        "its card, so a re-run samples the same).",
    )
    concurrency: int = Field(16, ge=1, le=512, description="Requests in flight.")
    batch_size: int = Field(32, ge=1, description="Functions (or rows) per committed batch.")
    replicas: int = Field(
        0,
        validation_alias=AliasChoices("replicas", "sandbox_nodes"),
        ge=0,
        le=1024,
        description="Ray actors with a sandbox pool each, spread over the cluster's nodes "
        "(0: one pool in the job's process). All rows land in one snapshot.",
    )

    def limits(self) -> Limits:
        return Limits(wall_s=self.timeout_s, cpu_s=self.timeout_s, memory_mb=self.memory_mb)

    def sft_table(self) -> str:
        return full_name(self.sft_out or f"{self.out}_sft")

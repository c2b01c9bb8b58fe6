"""The job kinds Podium knows, and the contract each one follows.

A job kind is two things that live in the package that owns the work:
- a pydantic model: the run card's front matter (minus `kind`), the CLI help and the UI
  form all come from it, so a setting's name, default and help text exist once;
  input tables are `podium.store.read.refs.TableRef` fields (pinned to a snapshot when the
  card is written);
- a function `run(config, reporter) -> JobOutputs` (from podium.reporting) that does the
  work, reports progress through `podium.reporting.Reporter`, calls
  `reporter.check_cancelled()` between units and writes its tables with
  `reporter.lineage` as properties.

Kinds are named by import path so that listing kinds never imports torch or vLLM.
A kind may also name `options` (card path -> the CLI option it has always had, e.g.
`input` -> `--table`; see podium/jobs/fields.py) and a `preflight` function
`(config) -> config` for checks that need the world (a model is registered, a rule
file parses); `podium.jobs.preflight` runs it before any job of the kind is queued.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from podium.errors import InvalidInput
from podium.jobs.fields import FlatField, flat_fields
from podium.jobs.plugins import load_attr
from podium.reporting import JobOutputs

__all__ = ["JobKind", "JobOutputs", "get_kind", "register", "registered_checkpoints", "KINDS"]


@dataclass(frozen=True)
class JobKind:
    name: str
    config_path: str  # "package.module:ConfigModel"
    run_path: str  # "package.module:function"
    description: str
    resumable: bool = False  # True if a re-run skips work already committed
    options: Mapping[str, str] = field(default_factory=dict, hash=False)
    preflight_path: str | None = None  # "package.module:function"
    # Heavy kinds (training) take a worker's heavy lane; the rest may also run in its
    # light lane, so a validation never waits behind a 10-minute training run.
    heavy: bool = False
    # Seconds a stopped job gets to finish its unit of work and save before SIGKILL
    # (training: a step on a CPU, then writing and registering the checkpoint).
    stop_grace_s: float = 5.0
    # The kind registers checkpoints (training, the base-model bootstrap); the others'
    # `checkpoints` output names the model they used, which is no output of theirs.
    registers_checkpoints: bool = False

    def config_model(self) -> type[BaseModel]:
        model = load_attr(self.config_path)
        # The path is a string in a registration (or a plugin's): a typo there should name
        # itself here, not surface later as an attribute error deep in the form code.
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise InvalidInput(
                f"Job kind {self.name!r}: {self.config_path} is not a pydantic model."
            )
        return model

    def fields(self) -> list[FlatField]:
        return flat_fields(self.config_model(), self.options)

    def preflight(self) -> Callable[[Any], Any] | None:
        return load_attr(self.preflight_path) if self.preflight_path else None

    def runner(self) -> Any:
        return load_attr(self.run_path)


KINDS: dict[str, JobKind] = {}


def register(kind: JobKind) -> None:
    KINDS[kind.name] = kind


def get_kind(name: str) -> JobKind:
    try:
        return KINDS[name]
    except KeyError:
        raise InvalidInput(
            f"Unknown job kind {name!r}; known kinds: {', '.join(sorted(KINDS))}."
        ) from None


# The CLI names these kinds' settings have always had (see podium/jobs/fields.py). Every
# kind's input table is `table` (`--table`, `--snapshot`); a kind's output is `out`.
_TRAIN_OPTIONS = {
    "max_steps": "--steps",
    "learning_rate": "--lr",
}

# A cpu-small step takes 20-40 s on 2 cores; saving the checkpoint a few more.
# (`podium up` waits WORKER_STOP_GRACE_SECONDS, a little longer, for its worker.)
TRAIN_STOP_GRACE_S = 120.0

# Registrations: one line per kind, added by the package that owns it.
register(
    JobKind(
        "import",
        "podium.store.write.ingest:ImportConfig",
        "podium.store.write.ingest:run_import",
        "Import JSONL, Parquet or a saved Hugging Face dataset into an SFT table.",
        preflight_path="podium.store.write.ingest:preflight",
    )
)
register(
    JobKind(
        "export",
        "podium.store.read.export:ExportConfig",
        "podium.store.read.export:run_export",
        "Export a table snapshot to JSONL or Parquet.",
        preflight_path="podium.store.read.export:preflight",
    )
)
register(
    JobKind(
        "generate",
        "generators.generate:GenerateConfig",
        "generators.generate:run_generate",
        "Sample a registered checkpoint on every prompt of a table into a samples table.",
        resumable=True,
        preflight_path="generators.preflight:generate",
    )
)
# The two training kinds differ only in their model, runner and description.
for _train in (
    (
        "sft",
        "trainers.config:SftConfig",
        "trainers.sft:run_sft",
        "Supervised fine-tuning (full or LoRA) on a table snapshot; registers checkpoints.",
    ),
    (
        "grpo",
        "trainers.config:GrpoConfig",
        "trainers.grpo:run_grpo",
        "GRPO with rewards from validation rules, the sandbox, exact match and length.",
    ),
):
    register(
        JobKind(
            *_train,
            options=_TRAIN_OPTIONS,
            preflight_path="trainers.preflight:train",
            heavy=True,
            stop_grace_s=TRAIN_STOP_GRACE_S,
            registers_checkpoints=True,
        )
    )
register(
    JobKind(
        "validate",
        "podium.validate.job:ValidateConfig",
        "podium.validate.job:run_validate",
        "Validate structured outputs (JSON, JSON Schema, XML, XSD, Python, regex, tool calls) "
        "in every row of a table snapshot; writes a report table of failing turns.",
        options={"rules": "--rule"},
        preflight_path="podium.validate.preflight:validate",
    )
)
register(
    JobKind(
        "signals",
        "podium.signals.job:SignalsConfig",
        "podium.signals.job:run_signals",
        "Compute signals (duplicates, near-duplicates, contamination, private data, language, "
        "length) over a table snapshot; each is written to a table NS.TABLE__sig_KIND.",
        options={"signals": "--signal"},
        preflight_path="podium.signals.job:preflight",
    )
)
register(
    JobKind(
        "topic-titles",
        "generators.topic_titles:TopicTitlesConfig",
        "generators.topic_titles:run_topic_titles",
        "A model writes a title and a short description for each topic of a table's current "
        "topics signal, from a sample of its rows.",
    )
)
register(
    JobKind(
        "code-exec-build",
        "generators.code_exec.config:CodeExecConfig",
        "generators.code_exec.build:run_code_exec_build",
        "A checkpoint proposes inputs for functions, the sandbox runs them: code-execution "
        "rows plus an SFT table (mode verify: re-run recorded rows and flag mismatches).",
        resumable=True,
        preflight_path="generators.preflight:code_exec_build",
    )
)
register(
    JobKind(
        "compare",
        "podium.compare.job:CompareConfig",
        "podium.compare.job:run_compare",
        "Answer one prompt set with several checkpoints (reusing existing samples) and "
        "check every answer; writes a comparison table for side-by-side votes and ratings.",
        resumable=True,
        options={"checks": "--check"},
        preflight_path="podium.compare.preflight:compare",
    )
)
register(
    JobKind(
        "judge",
        "podium.compare.judge:JudgeConfig",
        "podium.compare.judge:run_judge",
        "A model judges every pair of a comparison in both orders (JSON verdicts, flips "
        "count as ties); verdicts stored beside the human votes as judge:NAME.",
        resumable=True,
    )
)
register(
    JobKind(
        "maintain",
        "podium.jobs.maintain:MaintainConfig",
        "podium.jobs.maintain:run_maintain",
        "Compact a table's small and delete files, expire old snapshots (never tagged, "
        "branched or lineage-named ones) and remove files no snapshot references.",
        options={"all_tables": "--all"},
    )
)
register(
    JobKind(
        "bootstrap",
        "podium.models.bootstrap_job:BootstrapConfig",
        "podium.models.bootstrap_job:run_bootstrap",
        "Convert the shipped SmolLM2-135M-Instruct weights once (~90 s) and register them "
        "as the default base model (what `podium models bootstrap` does).",
        registers_checkpoints=True,
    )
)


def registered_checkpoints(kind: str, outputs: Mapping[str, Any] | None) -> list[str]:
    """The checkpoints a job of `kind` registered, final one last (a training run's
    summary names it; its intermediate saves come before it); [] for kinds that only
    use a model (generate, compare, code-exec builds) or an unknown kind."""
    found = KINDS.get(kind)
    if not (found and found.registers_checkpoints and outputs):
        return []
    names = [str(c) for c in outputs.get("checkpoints") or []]
    final = (outputs.get("summary") or {}).get("checkpoint")
    if final and str(final) not in names:
        names.append(str(final))
    return names

"""Re-running a finished job into new outputs, and comparing the two results.

    podium jobs rerun ID                    # queue its stored card, writing <out>__rerun_<n>
    podium jobs rerun ID --compare [--json] # run it here, then identical / differing / how much

The re-run uses the job's stored card (inputs pinned to the same snapshots, the same
model names, parameters and seed) with every config field that named one of the job's
outputs pointed at a new name, so the original is never touched: tables (rows compared,
podium/store/read/snapshot_diff.py) and, for training, the checkpoint (weights and loss/reward
curves compared, podium/jobs/checkpoint_diff.py). Its recorded environment goes along:
the report lists every pin that differs (version, commit, lock, torch, vLLM, device,
checkpoints; podium/jobs/environment.py). A training run on a GPU cannot be bitwise
reproducible; its card says so and the comparison allows a tolerance instead.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from podium.config import get_settings
from podium.errors import InvalidInput, PodiumError
from podium.jobs.cards import Card, card_environment, parse_card, samples_without_seed
from podium.jobs.checkpoint_diff import (
    CURVE_TOLERANCE,
    WEIGHT_TOLERANCE,
    CurveDiff,
    WeightsDiff,
    compare_curves,
    compare_weights,
)
from podium.jobs.environment import differences
from podium.jobs.fields import unwrap_optional
from podium.jobs.launch import run_foreground
from podium.jobs.queue import Job, get_job
from podium.jobs.reproducibility import record_rerun
from podium.store.catalog.catalog import full_name, table_exists
from podium.store.read.snapshot_diff import TableDiff, diff_tables

RERUN_SUFFIX = "__rerun_"
# Named by import path, as job kinds are: the job machinery never imports podium.models.
_MODEL_LOOKUP = "podium.models.registry:get_model_or_none"
TRAINING_OUTPUT = "checkpoint"  # the summary key a training run names its final one by


@dataclass(frozen=True)
class RerunPlan:
    job_id: str  # the original job
    card: Card  # its card, writing new outputs
    tables: dict[str, str]  # original output table -> the re-run's table
    snapshots: dict[str, int | None]  # original output table -> snapshot the job left
    checkpoints: dict[str, str] = field(default_factory=dict)  # original name -> re-run's
    no_seed: bool = False  # the original sampled without a seed: it cannot be reproduced


@dataclass
class RerunReport:
    job_id: str
    rerun_job_id: str
    tables: list[TableDiff]
    weights: list[WeightsDiff]
    curves: list[CurveDiff]
    environment: list[str]  # pins that differ between the original and the re-run
    tolerance: bool  # a backend that cannot be bitwise reproducible: compared within one
    no_seed: bool

    @property
    def all_identical(self) -> bool:
        return (
            all(d.all_identical for d in self.tables)
            and all(w.identical for w in self.weights)
            and all(c.identical for c in self.curves)
        )

    @property
    def verdict(self) -> str:
        """identical, within tolerance, or differs."""
        if self.all_identical:
            return "identical"
        within = (
            self.tolerance
            and all(d.all_identical for d in self.tables)
            and all(w.within(WEIGHT_TOLERANCE) for w in self.weights)
            and all(c.within(CURVE_TOLERANCE) for c in self.curves)
        )
        return "within tolerance" if within else "differs"

    def differences(self) -> list[str]:
        """What differs, in short phrases (for the Logbook and the terminal)."""
        found = [
            f"{d.original}: {d.differing + d.only_original + d.only_rerun} of "
            f"{d.identical + d.differing + d.only_original + d.only_rerun} rows"
            for d in self.tables
            if not d.all_identical
        ]
        found += [
            f"weights of {Path(w.original).parent.name}: largest difference "
            f"{w.max_abs_diff:.3g} ({w.max_diff_tensor})"
            for w in self.weights
            if not w.identical
        ]
        found += [
            f"{c.name} curve: from step {c.first_differing_step}, largest difference "
            f"{c.max_abs_diff:.3g}"
            if c.first_differing_step is not None
            else f"{c.name} curve: steps logged differ"
            for c in self.curves
            if not c.identical
        ]
        if self.no_seed:
            found.insert(0, "the original card has no seed")
        return found

    def to_dict(self) -> dict[str, Any]:
        return {
            "job_id": self.job_id,
            "rerun_job_id": self.rerun_job_id,
            "verdict": self.verdict,
            "all_identical": self.all_identical,
            "tolerance": (
                {"weights": WEIGHT_TOLERANCE, "curves_relative": CURVE_TOLERANCE}
                if self.tolerance
                else None
            ),
            "no_seed": self.no_seed,
            "environment_differences": self.environment,
            "tables": [d.to_dict() for d in self.tables],
            "checkpoints": [w.to_dict() for w in self.weights],
            "curves": [c.to_dict() for c in self.curves],
        }


def _output_tables(job: Job) -> dict[str, int | None]:
    return {t["name"]: t["snapshot_id"] for t in (job["outputs"] or {}).get("tables", [])}


def _final_checkpoint(job: Job) -> tuple[str, str] | None:
    """(name, path) of the checkpoint a training job finished with, if any."""
    summary = (job["outputs"] or {}).get("summary") or {}
    name, path = summary.get(TRAINING_OUTPUT), summary.get("path")
    return (str(name), str(path)) if name and path else None


def _table_name(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return full_name(value)
    except PodiumError:  # not shaped like a table name: a path, a label
        return None


def _unset_table_fields(config: BaseModel) -> list[str]:
    """Optional table-name fields left unset, whose table the job named by default
    (a validation's `report`: NS.TABLE__validation; a build's `sft_out`: OUT_sft)."""
    found = []
    for name, info in type(config).model_fields.items():
        base, optional = unwrap_optional(info.annotation)
        text = (info.description or "").lower()
        if optional and base is str and getattr(config, name) is None and "table" in text:
            found.append(name)
    return found


def _checkpoint_free(name: str) -> bool:
    module, _, attr = _MODEL_LOOKUP.partition(":")
    lookup = getattr(importlib.import_module(module), attr)
    return lookup(name) is None and not (get_settings().home / "checkpoints" / name).exists()


def _free_suffix(tables: list[str], checkpoints: list[str]) -> int:
    n = 1
    while any(table_exists(f"{t}{RERUN_SUFFIX}{n}") for t in tables) or not all(
        _checkpoint_free(f"{c}{RERUN_SUFFIX}{n}") for c in checkpoints
    ):
        n += 1
    return n


def plan_rerun(job_id: str) -> RerunPlan:
    """The card that re-runs job `job_id` into new outputs (nothing is queued yet)."""
    job = get_job(job_id)
    if job["status"] != "succeeded":
        raise InvalidInput(
            f"Job {job['id']} is {job['status']}: only a succeeded job has outputs to re-run "
            "and compare. To resume or retry it, use the Logbook's 'Re-run from card' or "
            "`podium submit` with its card."
        )
    outputs = _output_tables(job)
    card = parse_card(job["card"], source=f"card of job {job['id']}")
    config = card.config
    fields = {
        name: table
        for name in type(config).model_fields
        if (table := _table_name(getattr(config, name))) in outputs
    }
    unnamed = [t for t in outputs if t not in fields.values()]
    unset = _unset_table_fields(config)
    if len(unnamed) == 1 and len(unset) == 1:  # the one output the card left to its default
        fields[unset[0]] = unnamed[0]
    final = _final_checkpoint(job)
    ckpt_fields = {
        name: final[0]
        for name in type(config).model_fields
        if final is not None and getattr(config, name) == final[0]
    }
    if not fields and not ckpt_fields:
        written = ", ".join(outputs) or "none"
        raise InvalidInput(
            f"Job {job['id']} ({job['kind']}) wrote no table or checkpoint that its card "
            f"names (tables written: {written}); only jobs whose card names their output "
            "can be re-run into a new one."
        )
    if final is not None and ckpt_fields and not Path(final[1]).is_dir():
        raise InvalidInput(
            f"Job {job['id']}'s checkpoint {final[0]} is gone from {final[1]}; there is "
            "nothing to compare a re-run with."
        )
    tables = sorted(set(fields.values()))
    n = _free_suffix(tables, sorted(set(ckpt_fields.values())))
    new = {table: f"{table}{RERUN_SUFFIX}{n}" for table in tables}
    new_ckpts = {c: f"{c}{RERUN_SUFFIX}{n}" for c in set(ckpt_fields.values())}
    updates: dict[str, Any] = {name: new[table] for name, table in fields.items()}
    updates.update({name: new_ckpts[c] for name, c in ckpt_fields.items()})
    rerun_card = Card(card.kind, config.model_copy(update=updates), card.notes, card.environment)
    snapshots = {t: outputs[t] for t in new}
    return RerunPlan(
        job["id"], rerun_card, new, snapshots, new_ckpts, no_seed=samples_without_seed(config)
    )


def _tolerant(*environments: dict[str, Any] | None) -> bool:
    """True when either run's card says its backend cannot be bitwise reproducible."""
    return any(str((e or {}).get("determinism", "")).startswith("tolerance") for e in environments)


def rerun_and_compare(job_id: str, quiet: bool = False) -> RerunReport:
    """Re-run here (with a progress bar unless `quiet`), then compare every output, and
    record the outcome where the Logbook finds it (podium/jobs/reproducibility.py)."""
    plan = plan_rerun(job_id)
    original = get_job(plan.job_id)
    job = run_foreground(plan.card, quiet=quiet)
    return compare_outputs(
        original, job, plan.tables, plan.snapshots, bool(plan.checkpoints), plan.no_seed
    )


def compare_outputs(
    original: Job,
    job: Job,
    tables: dict[str, str],
    snapshots: dict[str, int | None],
    checkpoints: bool,
    no_seed: bool,
) -> RerunReport:
    """Compare every output of `original` with its re-run `job`, and record the outcome
    where the Logbook finds it (podium/jobs/reproducibility.py)."""
    written = _output_tables(job)
    diffs = [
        diff_tables(
            table,
            again,
            original_snapshot=snapshots[table],
            rerun_snapshot=written.get(again),
        )
        for table, again in tables.items()
    ]
    weights: list[WeightsDiff] = []
    curves: list[CurveDiff] = []
    first, second = _final_checkpoint(original), _final_checkpoint(job)
    if checkpoints and first and second:
        weights.append(compare_weights(first[1], second[1]))
        curves = compare_curves(original["id"], job["id"])
    recorded = card_environment(original["card"]) or {}
    current = card_environment(job["card"]) or {}
    report = RerunReport(
        original["id"],
        job["id"],
        diffs,
        weights,
        curves,
        differences(recorded, current),
        tolerance=_tolerant(recorded, current),
        no_seed=no_seed,
    )
    record_rerun(original["id"], report.rerun_job_id, report.verdict, report.differences())
    return report


def describe(diff: TableDiff) -> list[str]:
    """A table comparison in a few lines, for the terminal."""
    lines = [
        f"{diff.original}@{diff.original_snapshot} vs {diff.rerun}@{diff.rerun_snapshot} "
        f"(rows by {' + '.join(diff.key)}, comparing {', '.join(diff.compared)}):",
        f"  {diff.identical} identical, {diff.differing} differing, {diff.only_original} only "
        f"in the original, {diff.only_rerun} only in the re-run",
    ]
    for example in diff.examples:
        lines.append(f"  {example['status']} {example['key']}:")
        lines.append(f"    original: {example['original']}")
        lines.append(f"    re-run:   {example['rerun']}")
    return lines


def describe_report(report: RerunReport) -> list[str]:
    """The whole comparison for the terminal: tables, weights, curves, environment."""
    lines = [f"re-run job {report.rerun_job_id}: {report.verdict}"]
    if report.no_seed:
        lines.append("  the original card has no seed: a sampled result cannot be reproduced")
    for diff in report.tables:
        lines += describe(diff)
    for w in report.weights:
        same = "identical" if w.identical else "differ"
        lines.append(f"weights {same}: {w.original_digest} vs {w.rerun_digest}")
        if not w.identical:
            lines.append(
                f"  {w.differing_count} of {w.tensors} tensors differ; largest difference "
                f"{w.max_abs_diff:.3g} in {w.max_diff_tensor}"
            )
    for c in report.curves:
        state = "identical" if c.identical else f"largest difference {c.max_abs_diff:.3g}"
        lines.append(f"curve {c.name}: {c.identical_steps} of {c.steps} steps identical ({state})")
    if report.tolerance:
        lines.append(
            f"compared within tolerance (weights {WEIGHT_TOLERANCE:g}, curves "
            f"{CURVE_TOLERANCE:.0%} relative): this backend is not bitwise reproducible"
        )
    if report.environment:
        lines.append("environment differs from the original's:")
        lines += [f"  {d}" for d in report.environment]
    return lines

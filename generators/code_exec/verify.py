"""`code-exec-build` in verify mode: re-run recorded calls and flag changed outputs.

Reads a rows table (as written by a build, or any table with code, entry_point, input
and output columns), re-executes every row whose recorded status is ok in the sandbox,
and writes a report table with the recomputed output and `match`. Inputs that are
expressions rather than literals are evaluated inside the sandbox like the call itself.
Mismatches mean a non-deterministic function, a different Python, or a tampered row;
rows whose input cannot be evaluated (it raises, or gives the wrong number of
arguments) are reported `rejected` and counted apart.
"""

from __future__ import annotations

import os
from collections import Counter
from contextlib import closing
from functools import partial
from typing import TYPE_CHECKING, Any

from generators.code_exec import tables
from generators.code_exec.backend import backend_line, chosen_backend
from generators.code_exec.batches import BatchWork, Finished, Spent, chunks, write_batch
from generators.code_exec.harness import (
    InputRejected,
    entry_arity,
    input_error,
    parse_input,
    program,
)
from generators.code_exec.source import done_ids, output_properties, read_input
from generators.grading import error_line
from generators.sandbox import Job, Limits, Result, Sandbox
from podium.reporting import JobOutputs, Reporter
from podium.store.catalog.catalog import full_name, table_exists

if TYPE_CHECKING:
    from generators.code_exec.config import CodeExecConfig

REQUIRED = ("code", "input", "output")


def _checkable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        if row.get("status", "ok") != "ok" or row.get("output") is None:
            continue
        fid = row.get("function_id") or ""
        out.append({**row, "id": row.get("id") or tables.row_id(fid, row["input"] or "")})
    return out


def _report_row(
    row: dict[str, Any],
    actual: str | None,
    status: str,
    error: str | None,
    wall_s: float,
    backend: str,
) -> dict[str, Any]:
    return {
        "id": row["id"],
        "function_id": row.get("function_id"),
        "input": row["input"],
        "expected": row["output"],
        "actual": actual,
        "status": status,
        "match": status == "ok" and actual == row["output"],
        "error": error,
        "wall_s": wall_s,
        "backend": backend,
        "created_at": tables.now(),
    }


def _checked_row(row: dict[str, Any], result: Result, backend: str) -> dict[str, Any]:
    rejected = input_error(result)  # the recorded input raised in the sandbox
    if rejected is not None:
        return _report_row(row, None, tables.REJECTED, rejected, result.wall_s, backend)
    actual = result.stdout if result.status == "ok" else None
    error = error_line(result) or None
    return _report_row(row, actual, result.status, error, result.wall_s, backend)


def _outcome(report_row: dict[str, Any]) -> str:
    """match, mismatch (the call ran and gave another output or failed), or rejected
    (the input itself could not be evaluated)."""
    if report_row["status"] == tables.REJECTED:
        return "rejected"
    return "match" if report_row["match"] else "mismatch"


def _prepare(
    batch: list[dict[str, Any]], limits: Limits, backend: str
) -> tuple[list[dict[str, Any]], list[Job]]:
    """(report rows of inputs that do not even parse, sandbox jobs for the rest)."""
    report: list[dict[str, Any]] = []
    jobs = []
    for row in batch:
        entry = row.get("entry_point") or "f"
        try:
            arity = entry_arity(row["code"], entry)
            call = parse_input(row["input"] or "", arity)
        except (InputRejected, ValueError) as exc:
            report.append(_report_row(row, None, tables.REJECTED, str(exc), 0.0, backend))
            continue
        script = program(row["code"], entry, call, arity)
        jobs.append(Job(script, limits=limits, meta={"row": row}))
    return report, jobs


def _run_checks(
    box: Sandbox,
    report: list[dict[str, Any]],
    jobs: list[Job],
    backend: str,
    reporter: Reporter,
) -> list[dict[str, Any]]:
    """A batch's report rows: `report` plus one per job, run; sorted by id."""
    report = list(report)
    with closing(box.imap(jobs)) as stream:
        for job, result in stream:
            report.append(_checked_row(job.meta["row"], result, backend))
            reporter.check_cancelled()
    return sorted(report, key=lambda r: r["id"])


def verify_batch(
    report: list[dict[str, Any]], jobs: list[Job], backend: str, box: Sandbox
) -> Finished:
    """A batch's work on a Ray sandbox node (`generators.code_exec.on_ray`)."""

    rows = _run_checks(box, report, jobs, backend, Reporter())
    counts = dict(Counter(_outcome(r) for r in rows))
    return Finished(rows, tables.VERIFY_ARROW_SCHEMA, counts, len(jobs))


def _verify_on_ray(
    cfg: CodeExecConfig,
    candidates: list[dict[str, Any]],
    done: set[str],
    input_ref: str,
    out: str,
    backend: str,
    properties: dict[str, str],
    reporter: Reporter,
) -> Counter[str]:
    """The rows' re-runs on `replicas` Ray actors, committed once (as a build's)."""
    from generators.code_exec.on_ray import on_ray

    limits = cfg.limits()

    def plan(batch: list[dict[str, Any]]) -> BatchWork:
        rejected, jobs = _prepare(batch, limits, backend)
        return partial(verify_batch, rejected, jobs, backend)

    return on_ray(cfg, candidates, done, plan, tables.VERIFY_ARROW_SCHEMA, out, input_ref,
                  backend, properties, reporter, Spent(), "rows")  # fmt: skip


def run_verify(cfg: CodeExecConfig, reporter: Reporter) -> JobOutputs:

    out = full_name(cfg.out)
    rows, input_ref = read_input(cfg.table, REQUIRED)
    candidates = _checkable(rows)[: cfg.limit] if cfg.limit else _checkable(rows)
    backend = chosen_backend(cfg.backend)
    reporter.log(backend_line(backend, named=bool(cfg.backend)))
    properties = output_properties(cfg, reporter, tables.VERIFY_KIND, input_ref, None)
    done = done_ids(out, tables.VERIFY_KIND, input_ref, "id")
    todo = [r for r in candidates if r["id"] not in done]
    reporter.log(
        f"{len(candidates)} rows to verify, {len(candidates) - len(todo)} already in {out}"
    )
    counts: Counter[str] = Counter()
    finished = len(candidates) - len(todo)
    reporter.progress(finished, len(candidates), "rows")
    limits = cfg.limits()
    if todo and cfg.replicas:
        counts = _verify_on_ray(cfg, candidates, done, input_ref, out, backend, properties,
                                reporter)  # fmt: skip
    elif todo:
        with Sandbox(backend, workers=cfg.workers or os.cpu_count(), limits=limits) as box:
            for batch in chunks(todo, cfg.batch_size):
                reporter.check_cancelled()
                rejected, jobs = _prepare(batch, limits, backend)
                report = _run_checks(box, rejected, jobs, backend, reporter)
                write_batch(out, report, tables.VERIFY_ARROW_SCHEMA, properties)
                counts.update(_outcome(r) for r in report)
                finished += len(batch)
                reporter.progress(
                    finished,
                    len(candidates),
                    f"rows ({counts['mismatch']} mismatches, {counts['rejected']} rejected)",
                )
                for r in report:
                    if not r["match"]:
                        reporter.sample(
                            finished,
                            {k: r[k] for k in ("id", "input", "expected", "actual", "status")},
                        )
    if not table_exists(out):  # nothing to check still leaves a (empty) report
        write_batch(out, [], tables.VERIFY_ARROW_SCHEMA, properties)
    summary = {
        "rows": len(candidates),
        "resumed_from": len(candidates) - len(todo),
        "matches_this_run": counts["match"],
        "mismatches_this_run": counts["mismatch"],
        "rejected_this_run": counts["rejected"],
        "backend": backend,
    }
    return JobOutputs(tables=[out], summary=summary)

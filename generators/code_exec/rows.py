"""The rows a code-exec build records for its functions: the calls planned from a model's
proposals, the proposals rejected (unparsable, wrong arity, an input expression that
raised), and each executed call's output or error. Every row names the function, the
model that proposed the input and the sandbox backend that ran it."""

from __future__ import annotations

from typing import Any

from generators.code_exec import tables
from generators.code_exec.harness import InputRejected, entry_arity, input_error, parse_input
from generators.code_exec.inputs import Proposal
from generators.grading import error_line
from generators.sandbox import Job, Result


def sort_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A batch's rows in their stored order: by function, rejected last, then id."""
    return sorted(rows, key=lambda r: (r["function_id"], r["status"] == tables.REJECTED, r["id"]))


def rejected_row(
    fn: dict[str, Any], raw: str, error: str, model: str, backend: str
) -> dict[str, Any]:
    return {
        "id": tables.row_id(fn["id"], "\x00rejected\x00" + raw),
        "function_id": fn["id"],
        "entry_point": fn["entry_point"],
        "code": fn["code"],
        "input": None,
        "raw_input": raw,
        "output": None,
        "status": tables.REJECTED,
        "error": error,
        "wall_s": 0.0,
        "cpu_s": 0.0,
        "model": model,
        "backend": backend,
        "created_at": tables.now(),
    }


def plan_calls(
    fn: dict[str, Any], proposal: Proposal, n: int, model: str, backend: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(rows for rejected proposals, calls to execute) for one function."""
    rejected: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    try:
        arity = entry_arity(fn["code"], fn["entry_point"])
    except ValueError as exc:
        return [rejected_row(fn, "", f"function skipped: {exc}", model, backend)], []
    if proposal.error or not proposal.inputs:
        error = proposal.error or "the model proposed no inputs"
        return [rejected_row(fn, "", error, model, backend)], []
    seen: set[str] = set()
    for raw in proposal.inputs[:n]:
        try:
            call = parse_input(raw, arity)
        except InputRejected as exc:
            rejected.append(rejected_row(fn, raw, str(exc), model, backend))
            continue
        if call.input in seen:
            continue
        seen.add(call.input)
        calls.append({"fn": fn, "raw": raw, "input": call.input, "call": call, "arity": arity})
    return rejected, calls


def record_result(
    rows: list[dict[str, Any] | None],
    calls: list[dict[str, Any]],
    job: Job,
    result: Result,
    model: str,
    backend: str,
) -> None:
    """Put the row for one executed call in its place: its output, or why it failed."""
    call = calls[job.meta["i"]]
    fn = call["fn"]
    rejected = input_error(result)  # an expression input that raised in the sandbox
    if rejected is not None:
        rows[job.meta["i"]] = rejected_row(fn, call["raw"], rejected, model, backend)
        return
    rows[job.meta["i"]] = {
        "id": tables.row_id(fn["id"], call["input"]),
        "function_id": fn["id"],
        "entry_point": fn["entry_point"],
        "code": fn["code"],
        "input": call["input"],
        "raw_input": call["raw"],
        "output": result.stdout if result.status == "ok" else None,
        "status": result.status,
        "error": error_line(result) or None,
        "wall_s": result.wall_s,
        "cpu_s": result.cpu_s,
        "model": model,
        "backend": backend,
        "created_at": tables.now(),
    }

"""Reading a code-exec job's input table and resuming into its output table."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel

from generators.resume import done_values
from podium.errors import InvalidInput
from podium.reporting import Reporter
from podium.store.catalog.catalog import full_name
from podium.store.read.read import read_small
from podium.store.read.refs import TableRef
from podium.store.schema import PROP_KIND, PROP_LINEAGE_CHECKPOINT, PROP_LINEAGE_INPUT

PROP_CONFIG = "podium.code_exec.config"


def read_input(ref: TableRef, required: tuple[str, ...]) -> tuple[list[dict[str, Any]], str]:
    """Rows of the pinned input table and its `name@snapshot` reference."""
    data, snapshot_id = read_small(ref.name, ref.snapshot_id)
    missing = [c for c in required if c not in data.column_names]
    if missing:
        raise InvalidInput(
            f"Table {ref.name} has no column {', '.join(missing)}; it needs "
            f"{', '.join(required)} (see `podium show {ref.name}`)."
        )
    input_ref = str(TableRef(name=full_name(ref.name), snapshot_id=snapshot_id))
    return data.to_pylist(), input_ref


def default_entry_point(code: str) -> str:
    """`f` if defined (CRUXEval's convention), else the last top-level function."""
    import ast

    try:
        names = [n.name for n in ast.parse(code).body if isinstance(n, ast.FunctionDef)]
    except SyntaxError:
        return "f"
    if "f" in names or not names:
        return "f"
    return names[-1]


def load_functions(ref: TableRef, limit: int | None) -> tuple[list[dict[str, Any]], str]:
    """Functions as dicts with id, code and entry_point (filled in when absent)."""
    rows, input_ref = read_input(ref, ("code",))
    functions = []
    for row in rows[:limit] if limit else rows:
        code = row.get("code") or ""
        entry = row.get("entry_point") or default_entry_point(code)
        fid = row.get("id") or hashlib.sha1(f"{entry}\x00{code}".encode()).hexdigest()[:12]
        functions.append({"id": str(fid), "code": code, "entry_point": entry})
    return functions, input_ref


def output_properties(
    cfg: BaseModel, reporter: Reporter, kind: str, input_ref: str, model: str | None
) -> dict[str, str]:
    props = {
        **reporter.lineage,
        PROP_KIND: kind,
        PROP_LINEAGE_INPUT: input_ref,
        PROP_CONFIG: json.dumps(cfg.model_dump(mode="json"), sort_keys=True),
    }
    if model:
        props[PROP_LINEAGE_CHECKPOINT] = model
    return props


def done_ids(out: str, kind: str, input_ref: str, column: str) -> set[str]:
    """Values of `column` already in `out`; refuses a table written from other input."""
    written_by = {PROP_KIND: kind, PROP_LINEAGE_INPUT: input_ref}
    return done_values(out, column, written_by, f"{kind} job from {input_ref}")

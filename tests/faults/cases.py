"""The kill harness's cases: one per job kind, on small inputs, in the current home.

`cpu_cases(home)` writes the inputs every CPU kind needs (a chat table, a functions
table of recorded code-exec rows, an import file, the tiny model for training) and
returns the cases; `vllm_cases(model)` the two that need a served model.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
from harness import Case, State

from generators.code_exec import tables as cx_tables
from podium.config import get_settings
from podium.models.registry import get_model_or_none
from podium.store.catalog.catalog import load_table, table_exists
from podium.store.schema import SFT_ARROW_SCHEMA, SFT_SCHEMA
from podium.store.write.write import write_table

SOURCE = "faults.chat"
CODE_ROWS = "faults.cx_rows"
EDITS = "faults.edits"
PODIUM = ["python", "-m", "podium.cli"]


def _messages(i: int) -> list[dict[str, str]]:
    answer = json.dumps({"n": i}) if i % 3 else f"not json {i}"
    return [
        {"role": "user", "content": f"Give number {i} as JSON. " + "pad " * (i % 40)},
        {"role": "assistant", "content": answer},
    ]


def chat_rows(count: int, prefix: str = "r") -> pa.Table:
    rows = [
        {
            "id": f"{prefix}{i}",
            "messages": _messages(i),
            "system": None,
            "source": "faults",
            "split": None,
            "tags": [],
            "metadata": "{}",
            "created_at": None,
        }
        for i in range(count)
    ]
    return pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA)


def rows_state(name: str, columns: tuple[str, ...] = ("messages",), key: str = "id") -> State:
    """Rows of a table as sorted (key, columns...) tuples; None when it does not exist.
    A duplicated key shows up as two equal tuples, so a doubled row never compares equal."""
    if not table_exists(name):
        return None
    data = load_table(name).scan(selected_fields=(key, *columns)).to_arrow().to_pylist()
    return sorted(
        tuple(json.dumps(row[c], sort_keys=True, default=str) for c in (key, *columns))
        for row in data
    )


def _model_name(out: str) -> str:
    return out.split(".", 1)[1].replace("_", "-")


def checkpoint_state(out: str) -> State:
    """A registered checkpoint with its weights, or None; a half-saved one is neither."""
    name = _model_name(out)
    info = get_model_or_none(name)
    folder = get_settings().home / "checkpoints" / name
    weights = sorted(p.name for p in folder.rglob("*.safetensors")) if folder.exists() else []
    if info is None:
        return None if not weights else ("unregistered weights", weights)
    return ("registered", bool(weights) and Path(info.path).exists())


def export_state(out: str) -> State:
    """The exported file's digest, and any leftover temp file beside it."""
    folder = get_settings().home / "exports"
    path = folder / f"{out}.jsonl"
    leftovers = sorted(p.name for p in folder.glob(f".{path.name}.*")) if folder.exists() else []
    digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None
    if digest is None and not leftovers:
        return None
    return (digest, leftovers)


def _code_rows() -> pa.Table:
    code = "def f(xs):\n    return sorted(xs)\n"
    rows: list[dict[str, Any]] = [
        {
            "id": f"c{i}",
            "function_id": "sorter",
            "entry_point": "f",
            "code": code,
            "input": f"[{i}, 3, 1]",
            "raw_input": f"[{i}, 3, 1]",
            "output": repr(sorted([i, 3, 1])),
            "status": "ok",
            "error": None,
            "wall_s": 0.01,
            "cpu_s": 0.01,
            "model": "m",
            "backend": "local",
            "created_at": cx_tables.now(),
        }
        for i in range(12)
    ]
    return cx_tables.to_arrow(rows, cx_tables.ROWS_ARROW_SCHEMA)


def cpu_inputs(home: Path, tiny_model: str | None) -> None:
    write_table(SOURCE, chat_rows(400), schema=SFT_SCHEMA)
    write_table(EDITS, chat_rows(60, prefix="e"), schema=SFT_SCHEMA)
    write_table(CODE_ROWS, _code_rows(), properties={"podium.kind": cx_tables.ROWS_KIND})
    lines = (json.dumps({"id": f"i{i}", "messages": _messages(i)}) for i in range(4000))
    (home / "import.jsonl").write_text("\n".join(lines) + "\n")


class EditCase:
    """Edit (odd trials) or remove (even trials) one row of the edits table per trial."""

    def __init__(self) -> None:
        self.count = 0

    def _target(self, out: str) -> tuple[str, str]:
        serial = int(out.rsplit("_", 1)[1])
        return f"e{serial % 60}", f"edited in trial {serial}"

    def command(self, out: str) -> list[str]:
        row, text = self._target(out)
        serial = int(out.rsplit("_", 1)[1])
        if serial % 2:
            return [*PODIUM, "edit", EDITS, row, "--turn", "1", "--content", text, "-m", out]
        return [*PODIUM, "delete-rows", EDITS, row, "-m", out]

    def state(self, out: str) -> State:
        return rows_state(EDITS)

    def expected(self, out: str) -> State:
        row, text = self._target(out)
        serial = int(out.rsplit("_", 1)[1])
        rows = load_table(EDITS).scan().to_arrow().to_pylist()
        if serial % 2:
            for r in rows:
                if r["id"] == row:
                    r["messages"][1]["content"] = text
        else:
            rows = [r for r in rows if r["id"] != row]
        return sorted(
            (json.dumps(r["id"]), json.dumps(r["messages"], sort_keys=True)) for r in rows
        )


def cpu_cases(home: Path, tiny_model: str | None) -> list[Case]:
    """Every kind that runs without a model server (training needs `tiny_model`)."""
    import sys

    PODIUM[0] = sys.executable
    cpu_inputs(home, tiny_model)
    edits = EditCase()
    cases = [
        Case(
            "import",
            card=lambda out: f"kind: import\npath: {home / 'import.jsonl'}\ntable: {out}",
            state=rows_state,
        ),
        Case(
            "export",
            card=lambda out: f"kind: export\ninput: {{name: {SOURCE}}}\npath: {out}.jsonl",
            state=export_state,
        ),
        Case(
            "validate",
            card=lambda out: (
                f"kind: validate\ntable: {{name: {SOURCE}}}\nrules: [json]\nreport: {out}"
            ),
            state=lambda out: rows_state(out, ("turn", "rule", "message")),
        ),
        Case(
            "code-exec-build",
            card=lambda out: (
                f"kind: code-exec-build\nfunctions: {{name: {CODE_ROWS}}}\n"
                f"out: {out}\nmode: verify\nbackend: local\nbatch_size: 2"
            ),
            state=lambda out: rows_state(out, ("status", "match")),
            resumes=True,
        ),
        Case(
            "review-edit",
            command=edits.command,
            state=edits.state,
            expected=edits.expected,
        ),
    ]
    if tiny_model:
        train = f"model: {tiny_model}\ntable: {{name: {SOURCE}}}\npreset: cpu-smoke\n"
        cases += [
            Case(
                "sft",
                card=lambda out: f"kind: sft\n{train}out: {_model_name(out)}\nmax_steps: 3",
                state=checkpoint_state,
            ),
            Case(
                "grpo",
                card=lambda out: (
                    f"kind: grpo\n{train}out: {_model_name(out)}\nmax_steps: 2\n"
                    "max_completion_length: 8\nnum_generations: 2\nbatch_size: 2"
                ),
                state=checkpoint_state,
            ),
        ]
    return cases


def vllm_cases(model: str, prompts: str) -> list[Case]:
    """generate and compare against the session's real vLLM server."""
    sampling = "max_tokens: 8\ntemperature: 0.0\nseed: 0"
    return [
        Case(
            "generate",
            card=lambda out: (
                f"kind: generate\ninput: {{name: {prompts}}}\nout: {out}\n"
                f"model: {model}\nbatch_size: 2\n{sampling}"
            ),
            # A sample id names its table: rows compare by prompt and index.
            state=lambda out: rows_state(out, ("sample_index",), key="prompt_id"),
            resumes=True,
        ),
        Case(
            "compare",
            card=lambda out: (
                f"kind: compare\ninput: {{name: {prompts}}}\nout: {out}\n"
                f"models: [{model}, {model}-twin]\nmax_tokens: 8\nstop_servers: false"
            ),
            state=lambda out: rows_state(out, ("model",), key="prompt_id"),
            resumes=True,
        ),
    ]

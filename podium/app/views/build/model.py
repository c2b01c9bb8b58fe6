"""What the Code-exec build page shows, without Streamlit: the tables that can feed a
build, a rows or verify table's results (coloured statuses, failures first), and the
SFT table a build wrote beside them."""

from __future__ import annotations

from collections import Counter
from typing import Any

from generators.code_exec import tables
from generators.code_exec.config import KIND as KIND
from generators.code_exec.config import CodeExecConfig
from generators.code_exec.harness import call_text
from podium.app.safe_markdown import code_span, escape_markdown
from podium.models import list_models
from podium.store.catalog.catalog import list_tables, load_table
from podium.store.catalog.catalog import table_exists as table_exists
from podium.store.catalog.kinds import tables_of_kind
from podium.store.read.read import read_small
from podium.store.schema import PROP_KIND

# The form's first build: 20 functions, not the whole table (an empty Limit meant all
# 297 of the demo's, many minutes of generation on a small CPU before the first row).
DEFAULT_LIMIT = 20


def first_limit(mode: str) -> int | None:
    """The form's Limit: a build's first 20 functions; a verify checks every row."""
    return DEFAULT_LIMIT if mode == "build" else None


# Streamlit markdown colours: failures red, limits orange, the sandbox's own trouble gray.
STATUS_COLOUR = {
    "ok": "green",
    "error": "red",
    "killed": "red",
    "timeout": "orange",
    "oom": "orange",
    "output_limit": "orange",
    "sandbox_error": "gray",
    tables.REJECTED: "gray",
    "mismatch": "red",
}
RESULT_KINDS = (tables.ROWS_KIND, tables.VERIFY_KIND)
VERIFY_KIND = tables.VERIFY_KIND


def source_tables(mode: str) -> list[str]:
    """What a build reads: functions tables; what a verify reads: a build's rows."""
    return function_tables() if mode == "build" else tables_of_kind(tables.ROWS_KIND)


def result_tables() -> list[str]:
    return tables_of_kind(*RESULT_KINDS)


def model_names() -> list[str]:
    return [m.name for m in list_models()]


def config_fields() -> list[str]:
    """Every field of a build's config, in the form's order."""
    return list(CodeExecConfig.model_fields)


def is_sft_table(name: str) -> bool:
    """Whether a build's output is the SFT table it made from its successful rows."""
    return load_table(name).properties.get(PROP_KIND) == "sft"


def sft_table_of(results_table: str) -> str | None:
    """The SFT table a build wrote beside its results (`OUT_sft`, the build's default
    `sft_out`), when it exists: the page links it next to the results table."""
    name = f"{results_table}_sft"
    if table_exists(name) and load_table(name).properties.get(PROP_KIND) == "sft":
        return name
    return None


def function_tables() -> list[str]:
    """Tables that can feed a build: any with a `code` column, demo.functions first."""
    names = []
    for name in list_tables():
        try:
            columns = {f.name for f in load_table(name).schema().fields}
        except Exception:
            continue
        if "code" in columns and load_table(name).properties.get(PROP_KIND) not in RESULT_KINDS:
            names.append(name)
    return sorted(names, key=lambda n: (n != "demo.functions", n))


def load_results(name: str) -> tuple[str, list[dict[str, Any]]]:
    """(kind, rows) of a rows or verify table; verify rows get status "mismatch"."""
    kind = load_table(name).properties.get(PROP_KIND, "")
    rows = read_small(name)[0].to_pylist()
    if kind == tables.VERIFY_KIND:
        for row in rows:
            if row["status"] == "ok" and not row["match"]:
                row["status"] = "mismatch"
    return kind, rows


def status_counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    counts = Counter(r["status"] for r in rows)
    return dict(sorted(counts.items(), key=lambda kv: (kv[0] != "ok", -kv[1])))


def backends_text(rows: list[dict[str, Any]]) -> str:
    """'Ran in the local sandbox backend' (the rows record the backend that ran them)."""
    backends = sorted({str(r["backend"]) for r in rows if r.get("backend")})
    if not backends:
        return ""
    plural = "s" if len(backends) > 1 else ""
    return f"Ran in the {' and '.join(backends)} sandbox backend{plural}."


def badge(status: str) -> str:
    return f":{STATUS_COLOUR.get(status, 'blue')}[**{status}**]"


def problems(rows: list[dict[str, Any]], statuses: set[str] | None = None) -> list[dict[str, Any]]:
    """Rows that did not succeed (or are in `statuses`), worst kinds first."""
    order = {"mismatch": 0, "timeout": 1, "oom": 2, "error": 3, "killed": 4, "output_limit": 5}
    chosen = [
        r for r in rows if (r["status"] != "ok" if statuses is None else r["status"] in statuses)
    ]
    return sorted(chosen, key=lambda r: (order.get(r["status"], 9), str(r.get("function_id"))))


def describe(row: dict[str, Any]) -> str:
    """One markdown line: coloured status, the call, and what went wrong."""
    entry = row.get("entry_point") or "f"
    if row.get("input") is not None:
        call = code_span(call_text(entry, row["input"]))
    else:
        call = f"proposed {code_span((row.get('raw_input') or '')[:80])}"
    detail = escape_markdown(row.get("error") or "")
    if row["status"] == "mismatch":
        detail = f"expected {code_span(row['expected'])}, got {code_span(row['actual'])}"
    elif row["status"] == "ok":
        detail = f"→ {code_span((row.get('output') or '')[:120])}"
    function = escape_markdown(row.get("function_id") or "")
    return f"{badge(row['status'])} · {function} · {call} · {detail}"

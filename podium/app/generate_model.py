"""What the Generate and Vibe-check pages show, computed without Streamlit.

The pages only lay out widgets; choices (models, prompt sources), the job config built
from the form, and the figures shown after a run come from here and are tested
directly.
"""

from __future__ import annotations

import json
import re
from typing import Any

from generators.generate import GenerateConfig
from generators.vibes import EVAL_SET_KIND, VIBES_TABLE
from podium.errors import InvalidInput
from podium.models import list_models
from podium.store.catalog import list_tables, load_table, table_exists
from podium.store.refs import TableRef
from podium.store.schema import PROP_KIND


def model_choices(wanted: str | None = None) -> tuple[list[str], int]:
    """Registered model names and the index to preselect: `wanted` (a URL's ?model=),
    else the default base, else the first."""
    models = list_models()
    names = [m.name for m in models]
    if wanted in names:
        return names, names.index(wanted)
    default = next((i for i, m in enumerate(models) if m.is_default), 0)
    return names, default


def prompt_tables(eval_sets_only: bool = False) -> list[str]:
    """Tables that can feed a generation: eval sets, or every table but the vibes log."""
    names = [t for t in list_tables() if t != VIBES_TABLE]
    if not eval_sets_only:
        return names
    return [t for t in names if load_table(t).properties.get(PROP_KIND) == EVAL_SET_KIND]


def default_out_name(table: str, model: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", f"{table.split('.')[-1]}_{model}".lower()).strip("_")
    return f"gen.{slug[:80]}"


def unique_out_name(table: str, model: str) -> str:
    """`default_out_name`, made unique: a table of that name already exists, so a new
    job writing there would resume into another dataset's rows (type the existing
    name on purpose to resume)."""
    base = default_out_name(table, model)
    name, n = base, 1
    while table_exists(name):
        n += 1
        name = f"{base}_{n}"
    return name


def parse_schema_text(text: str) -> dict[str, Any] | None:
    """A JSON Schema typed or uploaded on the page; blank means none."""
    if not text.strip():
        return None
    try:
        schema = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"The JSON Schema is not valid JSON (line {exc.lineno}): {exc.msg}."
        ) from None
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise InvalidInput(f"That is not a valid JSON Schema: {exc.message}.") from None
    return schema


def build_config(
    *,
    table: str,
    snapshot_id: int | None,
    out: str,
    model: str,
    schema_text: str = "",
    regex: str = "",
    prompt_column: str = "",
    **sampling: Any,
) -> GenerateConfig:
    """The `generate` job config for what the form holds (bad values -> InvalidInput)."""
    from pydantic import ValidationError

    if not out.strip():
        raise InvalidInput("Name the output table (NAMESPACE.TABLE).")
    try:
        return GenerateConfig(
            input=TableRef(name=table, snapshot_id=snapshot_id),
            out=out.strip(),
            model=model,
            json_schema=parse_schema_text(schema_text),
            regex=regex.strip() or None,
            prompt_column=prompt_column.strip() or None,
            **sampling,
        )
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise InvalidInput(f"Check the settings: {problems}.") from None


def run_summary(job: dict[str, Any]) -> dict[str, Any]:
    """Figures of a finished generate job: output table, samples, tokens, tokens/s."""
    outputs = job.get("outputs") or {}
    summary = outputs.get("summary") or {}
    table = (outputs.get("tables") or [{}])[0]
    return {
        "table": table.get("name"),
        "snapshot_id": table.get("snapshot_id"),
        "samples": summary.get("samples_written", 0),
        "resumed_from": summary.get("resumed_from", 0),
        "completion_tokens": summary.get("completion_tokens", 0),
        "tokens_per_s": summary.get("tokens_per_s", 0.0),
        "errors": summary.get("request_errors", 0),
    }

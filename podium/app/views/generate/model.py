"""What the Generate and Vibe-check pages show, computed without Streamlit.

The pages only lay out widgets; choices (models, prompt sources), the job config built
from the form, and the figures shown after a run come from here and are tested
directly.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from generators.generate import GenerateConfig
from generators.vibes import EVAL_SET_KIND, VIBES_TABLE
from generators.vibes import answer_stream as answer_stream
from podium.app.table_choices import pick, table_choices
from podium.errors import InvalidInput
from podium.identity import User
from podium.jobs.queue import list_jobs
from podium.jobs.record import Job
from podium.models.speeds import last_speed
from podium.store.catalog.catalog import table_exists
from podium.store.catalog.kinds import tables_of_kind
from podium.store.read.refs import TableRef
from podium.validate.json_rules import schema_from_text

# The form's fields with their help texts (the config model is their one source).
CONFIG_FIELDS = GenerateConfig.model_fields


def prompt_tables(eval_sets_only: bool = False) -> list[str]:
    """Tables that can feed a generation: eval sets, or every table that is not internal
    (`podium.store.catalog.kinds`), most recently written first."""
    if eval_sets_only:
        return [t for t in tables_of_kind(EVAL_SET_KIND) if t != VIBES_TABLE]
    # Not the bookkeeping tables (the vibes log, votes, reports, annotations): no prompts.
    return [c.name for c in pick(table_choices(), groups=None)]


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
    """A JSON Schema typed or uploaded on the page; blank means none. Checked as the
    json-schema validation rule checks one (drafts, patterns, $refs)."""
    if not text.strip():
        return None
    schema = schema_from_text(text, "the page").schema
    if not isinstance(schema, dict):
        raise InvalidInput('The JSON Schema for generation must be an object: {"type": ...}.')
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
            table=TableRef(name=table, snapshot_id=snapshot_id),
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


def run_summary(job: Job) -> dict[str, Any]:
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


# ---- how much a generation will cost, shown before it is queued ----

# A first look that finishes within minutes on a 2-core CPU (8 x 128 tokens at 20 tok/s:
# under a minute once the server is up); raise the limit (or clear it) for the table.
DEFAULT_LIMIT = 8
DEFAULT_MAX_TOKENS = 128
# What a small model did here on a busy 2-core CPU (17-22 tok/s measured) until this
# model's own speed is known (`podium.models.speeds`, recorded by every generation).
ASSUMED_TOKENS_PER_S = 20.0


@dataclass(frozen=True)
class Estimate:
    prompts: int  # what the job will send
    total: int  # what the table holds
    max_tokens: int
    n: int
    tokens_per_s: float
    measured: bool  # the rate is this model's last run's, not the assumption

    @property
    def tokens(self) -> int:
        return self.prompts * self.n * self.max_tokens

    @property
    def seconds(self) -> float:
        return self.tokens / max(self.tokens_per_s, 1e-9)

    @property
    def text(self) -> str:
        """'50 of 600 prompts × 1 sample × 256 max tokens = up to 12,800 tokens; about
        2 min at 80 tok/s (assumed for a small model on CPU).'"""
        samples = "sample" if self.n == 1 else "samples"
        basis = "this model's last run" if self.measured else "assumed for a small model on CPU"
        return (
            f"{self.prompts:,} of {self.total:,} prompts × {self.n} {samples} × "
            f"{self.max_tokens:,} max tokens = up to {self.tokens:,} tokens; about "
            f"{duration_text(self.seconds)} at {self.tokens_per_s:.0f} tok/s ({basis})."
        )


def duration_text(seconds: float) -> str:
    """'40 s', '7 min', '2 h 10 min'."""
    if seconds < 60:
        return f"{max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"


def measured_rate(model: str, jobs: list[Job]) -> float | None:
    """Tokens/s of `model`'s last generation on this machine (`podium.models.speeds`),
    else of its newest finished generate job among `jobs`, if any."""
    recorded = last_speed(model)
    if recorded is not None:
        return recorded
    for job in jobs:
        if job.get("kind") != "generate" or job.get("status") != "succeeded":
            continue
        try:
            used = json.loads(job.get("config") or "{}").get("model")
        except json.JSONDecodeError:
            continue
        rate = run_summary(job)["tokens_per_s"]
        if used == model and rate:
            return float(rate)
    return None


def estimate(
    total: int, limit: int | None, max_tokens: int, n: int, rate: float | None
) -> Estimate:
    """What queueing these settings costs: prompts × samples × max tokens, and a rough
    time at `rate` (measured) or the CPU assumption."""
    prompts = total if limit is None else min(total, limit)
    return Estimate(
        prompts, total, max_tokens, n, rate or ASSUMED_TOKENS_PER_S, measured=rate is not None
    )


RECENT_S = 3600.0  # a generation finished within the hour is still "the one I started"


def recent_job(jobs: list[Job], kind: str, now: float) -> str | None:
    """The newest `kind` job in `jobs` (one user's, newest first) that is still queued or
    running, or finished within `RECENT_S`: what a page shows when its session forgot the
    job it queued (a reload, a new tab, a return from another page)."""
    for job in jobs:
        if job.get("kind") != kind:
            continue
        if job.get("status") in ("queued", "running"):
            return str(job["id"])
        ended = job.get("finished_at") or job.get("created_at")
        if not isinstance(ended, datetime):
            return None
        return str(job["id"]) if now - ended.timestamp() <= RECENT_S else None
    return None


def recent_rate(model: str) -> float | None:
    """`model`'s tokens/s over its recent successful generations (None: none yet)."""
    return measured_rate(model, list_jobs(limit=50, status="succeeded"))


def recent_generation(user: User, now: float) -> str | None:
    """The generation `user` started within the hour, shown again on a return to the page."""
    return recent_job(list_jobs(limit=20, submitted_by=user.name), "generate", now)

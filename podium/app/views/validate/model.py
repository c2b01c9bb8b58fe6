"""What the Validate page shows, without Streamlit: the settings the form starts from
(those of the report that covers the chosen snapshot, so after a reload the form says
what the report on screen used, else the defaults, extract `auto`), the rule specs its
inputs make, and a finished run's report and error-kind counts."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from podium.errors import InvalidInput
from podium.identity import require
from podium.store.catalog.catalog import load_table
from podium.store.state.users import acting_user
from podium.validate.extract import DEFAULT_EXTRACT
from podium.validate.failure_text import marked_failure, message_texts
from podium.validate.report import read_report, report_for, report_name, report_summary
from podium.validate.rules import PROP_JSON_SCHEMA as PROP_JSON_SCHEMA
from podium.validate.rules import RULE_NAMES as RULE_NAMES
from podium.validate.rules import save_schema_text


@dataclass(frozen=True)
class Seed:
    rules: list[str]  # rule names for the picker (a spec's argument is entered below it)
    extract: str
    report: str  # the report table the form writes


def settings_seed(
    table: str, snapshot: int | None, properties: dict[str, str], report: str | None = None
) -> Seed:
    found = report_for(table, snapshot, report)
    if found is not None:
        summary = report_summary(found)
        names = [str(spec).split(":", 1)[0] for spec in summary.get("rules", [])]
        rules = [n for n in dict.fromkeys(names) if n in RULE_NAMES]
        if rules:
            return Seed(rules, str(summary.get("extract") or DEFAULT_EXTRACT), found)
    rules = ["json", "json-schema"] if PROP_JSON_SCHEMA in properties else ["json"]
    return Seed(rules, DEFAULT_EXTRACT, report_name(table))


@dataclass(frozen=True)
class StoredSchema:
    """The table's own JSON Schema (property `podium.json_schema`), named for the page:
    json-schema without a pasted schema checks against it."""

    text: str  # pretty-printed, what the paste box starts with
    summary: str  # 'an object of name, age, email; requires name, age'

    @property
    def name(self) -> str:
        return f"the table's stored JSON Schema ({PROP_JSON_SCHEMA}: {self.summary})"


def stored_schema(properties: dict[str, str]) -> StoredSchema | None:
    raw = properties.get(PROP_JSON_SCHEMA)
    if not raw:
        return None
    try:
        schema = json.loads(raw)
    except ValueError:
        return StoredSchema(raw, "not valid JSON")
    summary = "any value"
    if isinstance(schema, dict):
        title = schema.get("title")
        fields = list(schema.get("properties") or {})
        summary = f"{schema.get('type') or 'a value'}"
        if fields:
            summary = f"an {summary} of {', '.join(fields)}"
        if schema.get("required"):
            summary += f"; requires {', '.join(map(str, schema['required']))}"
        if title:
            summary = f"“{title}”, {summary}"
    return StoredSchema(json.dumps(schema, indent=2), summary)


def rules_text(rules: list[str], properties: dict[str, str]) -> str:
    """A report's rules, naming the schema a bare json-schema used (the stored one)."""
    stored = stored_schema(properties)
    return ", ".join(f"{r} ({stored.name})" if r == "json-schema" and stored else r for r in rules)


def kind_counts(failures: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """[{"rule", "kind", "count"}], most frequent first (the bar chart's data)."""
    counts = Counter((f["rule"], f["kind"]) for f in failures)
    return [{"rule": r, "kind": k, "count": n} for (r, k), n in counts.most_common()]


def latest_report(
    table: str, snapshot_id: int | None, report: str | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """(summary, failures) of the report covering this snapshot, if one exists."""
    name = report_for(table, snapshot_id, report)
    if name is None:
        return None
    return report_summary(name), read_report(name).to_pylist()


def build_specs(
    chosen: list[str],
    *,
    schema_text: str = "",
    xsd_text: str = "",
    pattern: str = "",
    tools_text: str = "",
    stored: StoredSchema | None = None,
) -> list[str]:
    """Rule specs from the page's inputs; pasted or uploaded files are stored first.

    `json-schema` without a schema text, or with the `stored` schema's text unchanged
    (the box starts with it), uses the table's stored schema; `tool-call`
    without tools uses each row's metadata. The specs are checked (and the files
    compiled) by the caller through `parse_rules`, before anything runs. The role is
    checked first: a pasted file is stored only for someone who may queue the job.
    """
    require(acting_user(), "run_job")
    specs = []
    for rule in chosen:
        unchanged = stored is not None and schema_text.strip() == stored.text.strip()
        if rule == "json-schema" and schema_text.strip() and not unchanged:
            specs.append(f"json-schema:{save_schema_text(schema_text, '.json')}")
        elif rule == "xsd":
            if not xsd_text.strip():
                raise InvalidInput("The xsd rule needs an XML Schema: upload or paste one.")
            specs.append(f"xsd:{save_schema_text(xsd_text, '.xsd')}")
        elif rule == "regex":
            if not pattern:
                raise InvalidInput("The regex rule needs a pattern.")
            specs.append(f"regex:{pattern}")
        elif rule == "tool-call" and tools_text.strip():
            specs.append(f"tool-call:{save_schema_text(tools_text, '.json')}")
        else:
            specs.append(rule)
    if not specs:
        raise InvalidInput("Choose at least one rule.")
    return specs


def table_properties(name: str) -> dict[str, str]:
    """Table `name`'s properties (its stored JSON Schema, its kind)."""
    return dict(load_table(name).properties)


def failure_in_text(name: str, snapshot: int | None, failure: dict[str, Any]) -> tuple[str, str]:
    """Where a failure sits (its position, in words) and its message's text with the
    spot marked, read from the row at `snapshot`."""
    texts = message_texts(name, snapshot, [failure["id"]])
    return marked_failure(failure, texts.get(failure["id"], []))

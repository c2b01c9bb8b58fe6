"""What the Validate page's settings start from, without Streamlit: the settings of the
report that covers the chosen snapshot (so after a reload the form says what the report
on screen used), else the defaults (extract `auto`)."""

from __future__ import annotations

from dataclasses import dataclass

from podium.validate.extract import DEFAULT_EXTRACT
from podium.validate.report import report_for, report_name, report_summary
from podium.validate.rules import PROP_JSON_SCHEMA, RULE_NAMES


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

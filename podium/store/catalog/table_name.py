"""The one rule for namespace and table names, checked wherever a name enters.

Every name reaches the catalog through `podium.store.catalog.catalog.parse_name`, so a name
typed on the command line, written in a run card, picked in a form or derived by a job
is held to the same rule. The rule keeps names usable as they are in DuckDB, Spark and
Trino SQL, in file paths of the warehouse and in the shell, without quoting.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Annotated

from pydantic import AfterValidator

from podium.config import get_settings
from podium.errors import InvalidInput

MAX_PART = 120  # room for the suffixes Podium derives (`__annotations`, `__rerun_12`)
_PART = re.compile(rf"[A-Za-z_][A-Za-z0-9_]{{0,{MAX_PART - 1}}}")
RULE = (
    "a name is NAMESPACE.TABLE (or TABLE, in the default namespace) where each part starts "
    f"with a letter or '_', holds only letters, digits and '_', and is at most {MAX_PART} "
    "characters long"
)


def shown(name: str) -> str:
    """A user's name as an error message quotes it: short, never the whole of a huge one."""
    return repr(name) if len(name) <= 80 else repr(name[:60]) + f"... ({len(name)} characters)"


def split_table_name(name: str, default_namespace: str) -> tuple[str, str]:
    """`ns.table` -> ("ns", "table"); a bare name goes to `default_namespace`."""
    parts = name.strip().split(".")
    if len(parts) == 1:
        parts = [default_namespace, parts[0]]
    if len(parts) != 2 or not all(_PART.fullmatch(p) for p in parts):
        raise InvalidInput(f"Table name {shown(name)} is not allowed: {RULE} (e.g. demo.chat).")
    return parts[0], parts[1]


# Names Podium keeps for its own tables: shell-style patterns over NAMESPACE.TABLE (lower
# case), each with what Podium keeps there. A table a person or a job names as an output
# matches none of them, or it would be taken for Podium's own (an eval set written as
# compare.votes broke every vote; an import as demo.chat__annotations broke Browse of
# demo.chat). The one list: a new kind of table Podium keeps adds its pattern here.
RESERVED_NAMES: dict[str, str] = {
    "*.*__validation": "a table's validation report",
    "*.*__annotations": "a table's labels, ratings and notes",
    "*.*__sig_*": "a table's signals (podium signals run)",
    "compare.votes": "the votes of every comparison",
    "compare.judge_verdicts": "the verdicts of every judge (podium judge run)",
    "compare.judge_scores": "the rubric scores of every comparison's answers (podium judge run)",
    "vibes.prompts": "the vibe-check submissions",
}


def reserved_for(name: str) -> str | None:
    """What Podium keeps under `name` (a bare name is in the default namespace), or None
    when the name is free. Letters compare without case, as the catalog's names do."""
    pattern = _reserved_pattern(name)
    return None if pattern is None else RESERVED_NAMES[pattern]


def _reserved_pattern(name: str) -> str | None:
    name = name.strip()  # any name a catalog lists, even one outside the rule (ext.bad-name)
    full = (name if "." in name else f"{get_settings().default_namespace}.{name}").lower()
    return next((p for p in RESERVED_NAMES if fnmatch.fnmatchcase(full, p)), None)


def check_not_reserved(name: str, allowed: str | None = None) -> str:
    """`name`, unless Podium keeps it for its own tables; `allowed`, a pattern of
    RESERVED_NAMES, is one the writer may use (a validation report is named as reports
    are). Every output table name comes through here: `TableName` fields of job configs
    and the writers that take a name without one (an eval set)."""
    pattern = _reserved_pattern(name)
    if pattern is not None and pattern != allowed:
        raise InvalidInput(
            f"Table name {shown(name)} is a name Podium keeps for {RESERVED_NAMES[pattern]}; "
            "choose another name."
        )
    return name


def _checked(name: str, allowed: str | None = None) -> str:
    split_table_name(name, get_settings().default_namespace)
    return check_not_reserved(name, allowed)


def _checked_report(name: str) -> str:
    return _checked(name, allowed="*.*__validation")


# A config field that names a table a job writes: checked (the naming rule, then the
# reserved names) when the config is built (a command's options, a card, a form), so a
# bad name is refused before any job exists. InvalidInput is not a ValueError, so
# pydantic lets it through as it is.
TableName = Annotated[str, AfterValidator(_checked)]
# The same for a validation report, which may be named as reports are (`T__validation`).
ReportName = Annotated[str, AfterValidator(_checked_report)]

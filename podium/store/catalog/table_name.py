"""The one rule for namespace and table names, checked wherever a name enters.

Every name reaches the catalog through `podium.store.catalog.catalog.parse_name`, so a name
typed on the command line, written in a run card, picked in a form or derived by a job
is held to the same rule. The rule keeps names usable as they are in DuckDB, Spark and
Trino SQL, in file paths of the warehouse and in the shell, without quoting.
"""

from __future__ import annotations

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


# Endings of the tables Podium keeps beside another table (its validation report, its
# annotations): a name a person chooses for a new table may not end so, or it would be
# taken for that table's bookkeeping (Browse and `podium label` of the table then broke).
RESERVED_SUFFIXES = ("__validation", "__annotations")


def check_not_reserved(name: str) -> str:
    """`name`, unless its table part ends in a suffix Podium keeps for its own tables."""
    table = name.strip().rpartition(".")[2].lower()
    for suffix in RESERVED_SUFFIXES:
        if table.endswith(suffix):
            raise InvalidInput(
                f"Table name {shown(name)} ends in {suffix!r}, which Podium keeps for the "
                "tables it writes beside a table; choose another name."
            )
    return name


def _checked(name: str) -> str:
    split_table_name(name, get_settings().default_namespace)
    return name


# A config field that names a table a job writes: checked when the config is built (a
# command's options, a card, a form), so a bad name is refused before any job exists.
# InvalidInput is not a ValueError, so pydantic lets it through as it is.
TableName = Annotated[str, AfterValidator(_checked)]

"""What the Code-exec build page links, without Streamlit."""

from __future__ import annotations

from podium.store.catalog import load_table, table_exists
from podium.store.schema import PROP_KIND


def sft_table_of(results_table: str) -> str | None:
    """The SFT table a build wrote beside its results (`OUT_sft`, the build's default
    `sft_out`), when it exists: the page links it next to the results table."""
    name = f"{results_table}_sft"
    if table_exists(name) and load_table(name).properties.get(PROP_KIND) == "sft":
        return name
    return None

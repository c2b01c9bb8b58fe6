"""Table names are unique whatever their case: DuckDB, Trino and case-insensitive file
systems would take demo.Chat and demo.chat for one table."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from podium.errors import InvalidInput
from podium.store.catalog.catalog import list_tables
from podium.store.schema import SFT_ARROW_SCHEMA
from podium.store.write.replace import replace_batches
from podium.store.write.write import write_table

ROWS = pa.Table.from_pylist(
    [{"id": "a", "messages": [{"role": "user", "content": "hi"}]}], schema=SFT_ARROW_SCHEMA
)


def test_a_name_differing_only_in_case_is_refused(podium_home: Path) -> None:
    write_table("demo.chat", ROWS)
    for other in ("demo.Chat", "Demo.CHAT"):
        with pytest.raises(InvalidInput, match=f"Table demo.chat exists; {other} differs"):
            write_table(other, ROWS)
        with pytest.raises(InvalidInput, match="only in case"):
            replace_batches(other, ROWS.to_batches(), schema=ROWS.schema)
    assert list_tables() == ["demo.chat"]
    write_table("demo.chat", ROWS, mode="append")  # the table itself is written as before
    replace_batches("demo.chat", ROWS.to_batches(), schema=ROWS.schema)
    write_table("demo.chat_2", ROWS)
    assert list_tables() == ["demo.chat", "demo.chat_2"]

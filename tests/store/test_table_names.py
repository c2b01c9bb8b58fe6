"""`table_names` on the SQLite catalog: the same names as pyiceberg's listing, read with
the standard library. Browse asks for them for every open sample (a table's signals are
the tables named beside it); a SQLAlchemy engine made and inspected per ask was 6.2% of
the app's samples with ten sessions (docs/faults.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa

from podium.store.catalog.catalog import list_tables
from podium.store.catalog.names import table_names
from podium.store.write.write import write_table

PROBE = """
import json, sys
from podium.store.catalog.names import table_names
print(json.dumps([table_names(), "sqlalchemy" in sys.modules]))
"""


def test_sqlite_catalog_names_need_no_sqlalchemy(podium_home: Path) -> None:
    assert table_names() == []  # no catalog file yet
    write_table("b.two", pa.table({"x": [1]}), mode="create")
    write_table("a.one", pa.table({"x": [1]}), mode="create")
    write_table("a.one__sig_lang", pa.table({"x": [1]}), mode="create")
    expected = ["a.one", "a.one__sig_lang", "b.two"]
    assert table_names() == list_tables() == expected
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [expected, False]  # before: SQLAlchemy loaded

"""I6: the SQL console spills only into a private directory, and `max_rows` is pushed
into the query, so a huge result is never built before it is cut."""

from __future__ import annotations

import stat
from pathlib import Path

from podium.store.read.connections import connect
from podium.store.read.sql_console import run_sql


def test_duckdb_spills_into_a_0700_directory_under_the_home(
    podium_home: Path, tmp_path: Path
) -> None:
    con = connect()
    spill = Path(con.execute("SELECT current_setting('temp_directory')").fetchone()[0])
    assert spill == podium_home / "tmp" / "duckdb"
    assert stat.S_IMODE(spill.stat().st_mode) == 0o700
    assert stat.S_IMODE(spill.parent.stat().st_mode) == 0o700


def test_a_query_that_spills_works_and_leaves_no_world_readable_tmp(
    podium_home: Path, tmp_path: Path
) -> None:
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        out = run_sql(
            "SELECT count(*) AS n FROM (SELECT DISTINCT i, md5(i::VARCHAR) AS h "
            "FROM range(3000000) t(i))",
            memory_limit="60MB",
        )
    finally:
        os.chdir(cwd)
    assert out.to_pylist() == [{"n": 3000000}]
    assert not (tmp_path / ".tmp").exists()


def test_max_rows_is_pushed_into_the_query(podium_home: Path) -> None:
    # 2,000,000 rows of 1 KB (~2 GB) under a 64 MB cap: only a LIMIT inside the query
    # lets this finish; building the result first would exceed the cap.
    out = run_sql(
        "SELECT i, repeat('x', 1000) AS s FROM range(2000000) t(i)",
        max_rows=3,
        memory_limit="64MB",
    )
    assert out.num_rows == 3

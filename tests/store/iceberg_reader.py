"""Reads a table with DuckDB's own Iceberg extension (run by .venv-duckdb-iceberg's
python, not the app's): prints the snapshot's rows as JSON, sorted by id."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import sys

import duckdb


def extension(name: str) -> str:
    spec = importlib.util.find_spec(f"duckdb_extension_{name}")
    assert spec is not None and spec.origin is not None
    root = pathlib.Path(spec.origin).parent
    return str(next(root.glob(f"extensions/*/{name}.duckdb_extension")))


def main() -> None:
    metadata, columns = sys.argv[1], sys.argv[2]
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    for name in ("avro", "iceberg"):
        con.load_extension(extension(name))
    rows = con.execute(f"SELECT {columns} FROM iceberg_scan($1) ORDER BY id", [metadata]).fetchall()
    names = [c.strip() for c in columns.split(",")]
    print(json.dumps([dict(zip(names, r, strict=True)) for r in rows], default=str))


if __name__ == "__main__":
    main()

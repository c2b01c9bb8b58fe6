"""Iceberg storage: the catalog, the SFT schema, import/export and DuckDB queries."""

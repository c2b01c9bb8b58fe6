"""The shared deployment's store for the benchmark: PostgreSQL as catalog and moto's S3
server as warehouse, started exactly as the shared-deployment tests start them
(tests/integration/postgres.py and s3_store.py), and gone when the run ends."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


@contextmanager
def shared_store() -> Iterator[dict[str, str]]:
    """Start both servers; yields the settings that point `podium` at them."""
    # its helpers import from tests/ (the forked CLI) as well
    sys.path[:0] = [str(REPO / "tests" / "integration"), str(REPO / "tests")]
    helpers: Any = __import__("shared_stack")  # the tests' own helpers, not a copy of them
    with helpers.postgres_server() as url, helpers.s3_server() as s3:
        yield {
            "PODIUM_CATALOG_URI": url,
            "PODIUM_WAREHOUSE": f"s3://{s3.bucket}/warehouse",
            "PODIUM_CATALOG_PROPERTIES": json.dumps(s3.catalog_properties),
        }

"""The SQL page's runner over a real catalog: `podium sql`'s guards and limits, nested
values as JSON text, refusals as clear errors."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from podium.app.views.sql.model import MOST_ROWS, run_query
from podium.errors import InvalidInput

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "review"))
from review_data import make_table  # noqa: E402

T = "sq.rows"


def test_count_grid_and_refusals(podium_home: Path) -> None:
    make_table(T, 5)
    counted = run_query(f"SELECT count(*) AS n FROM {T}")
    assert counted.value == ("n", 5)
    assert counted.caption == "1 row · 1 column"

    rows = run_query(f"SELECT id, messages FROM {T} ORDER BY id", max_rows=3)
    assert list(rows.frame.columns) == ["id", "messages"]
    assert rows.caption.startswith("3 rows · 2 columns (the first 3")
    assert rows.frame["messages"][0].startswith('[{"role": "user", "content": "question 0"}')
    assert rows.value is None

    with pytest.raises(InvalidInput, match="Only a single SELECT"):
        run_query(f"DELETE FROM {T}")
    with pytest.raises(InvalidInput, match="Write a SELECT first"):
        run_query("  ")
    with pytest.raises(InvalidInput, match="between 1 and"):
        run_query(f"SELECT 1 FROM {T}", max_rows=MOST_ROWS + 1)

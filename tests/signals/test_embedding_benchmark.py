"""benchmarks/map.py at a small size, so it never rots: every stage runs and the figures
it reports hold (recall of the index, the clusters against the known topics). No
timing is asserted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_map_benchmark_reports_recall_and_the_adjusted_rand_index(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "map.py"), "--rows", "800", "--json"],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout)
    assert set(report["seconds"]) == {"embedding", "topics", "projection", "total"}
    assert report["recall_at_10"] >= 0.95
    assert report["adjusted_rand_index"] >= 0.8
    assert report["search_ms_warm"]["median"] > 0 and report["peak_rss_mb"] > 0

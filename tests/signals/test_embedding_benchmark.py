"""benchmarks/map.py at a small size, so it never rots: every stage runs and the figures
it reports hold (recall of the index, the clusters against the known topics). No
timing is asserted."""

from __future__ import annotations

from pathlib import Path

from signal_tables import benchmark_report


def test_the_map_benchmark_reports_recall_and_the_adjusted_rand_index(tmp_path: Path) -> None:
    report = benchmark_report("map.py", 800, tmp_path)
    assert set(report["stages"]) == {"embedding", "topics", "projection"}
    assert all(s["peak_rss_mb"] > 0 and s["seconds"] > 0 for s in report["stages"].values())
    assert report["recall_at_10"] >= 0.95
    assert report["adjusted_rand_index"] >= 0.8
    assert report["search_ms_warm"]["median"] > 0 and report["search_peak_rss_mb"] > 0

"""benchmarks/signals.py at a small size, so it never rots: it completes, every signal has
its figures, and the corpus's known truth is found. No timing is asserted."""

from __future__ import annotations

from pathlib import Path

from signal_tables import benchmark_report


def test_the_benchmark_measures_every_signal_against_its_truth(tmp_path: Path) -> None:
    report = benchmark_report("signals.py", 600, tmp_path)
    signals = report["signals"]
    assert set(signals) >= {"near-dup", "exact-dup", "contamination", "private-data", "language"}
    near = signals["near-dup"]
    assert near["recall"] >= 0.95 and near["precision"] >= 0.95 and near["true"] > 10
    assert near["datasketch"]["rows_per_s"] > 0 and near["speedup_vs_datasketch"] > 0
    assert signals["contamination"]["recall_on_pasted"] == 1.0
    assert signals["contamination"]["clean_rows_flagged"] == 0
    for kind in ("email", "phone", "ip_address", "card_number", "iban", "secret"):
        found = signals["private-data"][kind]
        assert found["true"] > 0 and found["recall"] >= 0.95 and found["precision"] >= 0.9, kind
    assert signals["exact-dup"]["recall"] == 1.0
    for engine in ("language", "language (lingua)"):  # fastText, the default, and lingua
        for lang, found in signals[engine]["per_language"].items():
            assert found["true"] > 0 and found["recall"] >= 0.95, (engine, lang)
            assert found["precision"] >= 0.95, (engine, lang)


def test_the_scale_benchmark_measures_each_signal_in_its_own_process(tmp_path: Path) -> None:
    report = benchmark_report("signals_scale.py", 300, tmp_path, "--signals", "exact-dup,near-dup")
    assert set(report["signals"]) == {"exact-dup", "near-dup"}
    for measured in report["signals"].values():
        assert measured["returncode"] == 0 and not measured["timed_out"]
        assert measured["seconds"] > 0 and measured["peak_rss_mb"] > 50
    browse = report["browse_near_dup_first_page"]
    assert browse["shown"] == min(50, browse["rows_in_filter"]) and browse["rows_in_filter"] > 0

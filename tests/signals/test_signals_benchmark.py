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

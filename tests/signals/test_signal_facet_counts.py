"""Facet counts kept by the run that wrote a signal are the counts a fresh read of its
rows gives; a signal table whose rows changed since is counted afresh, and a stale
signal is still named stale with no facets (Browse's cold open reads the kept ones)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from signal_tables import GSM_PROBLEM, write_chat

from podium.signals.facet_counts import counted_facets, kept_facets
from podium.signals.job import SignalsConfig, compute_signals
from podium.signals.store import signal_table_name
from podium.signals.values import facets, stale_notes
from podium.store.catalog.catalog import load_table

SIGNALS = ("exact-dup", "near-dup", "contamination", "private-data", "language")


def test_kept_facet_counts_match_a_fresh_count_and_stale_stays_stale(podium_home: Path) -> None:
    texts = [
        "same words again and again " * 5,
        "same words again and again " * 5,
        "SAME words  again and again " * 5,
        "mail a.b@example.com or call +44 20 7946 0958 today",
        "Please solve: " + GSM_PROBLEM,
        "Le chat dort sur le canapé pendant que la pluie tombe doucement dehors.",
    ]
    write_chat("t.kept", texts)
    write_chat("t.gsm", [GSM_PROBLEM], prefix="g")
    compute_signals(
        SignalsConfig.model_validate(
            {
                "table": {"name": "t.kept"},
                "signals": [",".join(SIGNALS)],
                "contamination": {"evals": ["t.gsm"]},
            }
        )
    )
    table = load_table("t.kept")
    sid = table.current_snapshot().snapshot_id  # type: ignore[union-attr]
    for signal in SIGNALS:
        stored = load_table(signal_table_name("t.kept", signal))
        kept = kept_facets(signal, stored)
        assert kept is not None and kept == counted_facets(signal, stored), signal
    found = {(f.signal, f.value): f.rows for f in facets(table, sid)}
    assert found[("exact-dup", "member")] == 3 and found[("exact-dup", "duplicate")] == 2
    assert found[("contamination", "contaminated")] == 1
    assert found[("private-data", "any")] == 1 and found[("private-data", "email")] == 1

    # rows written to the signal table after its run: the kept counts no longer hold
    stored = load_table(signal_table_name("t.kept", "exact-dup"))
    extra = {"id": "r0005", "cluster": "r0000", "size": 4, "is_canonical": False}
    stored.append(pa.Table.from_pylist([extra], schema=stored.schema().as_arrow()))
    stored = load_table(signal_table_name("t.kept", "exact-dup"))
    assert kept_facets("exact-dup", stored) is None
    found = {(f.signal, f.value): f.rows for f in facets(table, sid)}
    assert found[("exact-dup", "member")] == 4 and found[("exact-dup", "duplicate")] == 3

    write_chat("t.kept", ["a new row"], prefix="n", mode="append")  # the table moved on
    table = load_table("t.kept")
    now = table.current_snapshot().snapshot_id  # type: ignore[union-attr]
    assert facets(table, now) == []
    notes = stale_notes(table, now)
    assert len(notes) == len(SIGNALS) and all("stale: computed for snapshot" in n for n in notes)

"""Training leaves out rows by signal, as it leaves out malformed ones (`only_valid`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from signal_tables import write_chat

from podium.errors import InvalidInput
from podium.signals.job import SignalsConfig, compute_signals
from podium.store.read.refs import TableRef
from trainers.data import load_training_data


def test_training_data_leaves_out_what_current_signals_name(podium_home: Path) -> None:
    write_chat("t.train", ["same answer", "same answer", "mail bob@example.com", "fine"])
    compute_signals(
        SignalsConfig.model_validate(
            {"table": {"name": "t.train"}, "signals": ["exact-dup,private-data"]}
        )
    )
    every = load_training_data(TableRef(name="t.train"))
    assert {c.id for c in every.train} == {"r0000", "r0001", "r0002", "r0003"}
    kept = load_training_data(TableRef(name="t.train"), exclude_signals=["exact-dup"])
    assert {c.id for c in kept.train} == {"r0000", "r0002", "r0003"}
    kept = load_training_data(
        TableRef(name="t.train"), exclude_signals=["exact-dup", "private-data=email"]
    )
    assert {c.id for c in kept.train} == {"r0000", "r0003"}
    write_chat("t.train", ["new"], prefix="n", mode="append")
    with pytest.raises(InvalidInput, match="stale"):
        load_training_data(TableRef(name="t.train"), exclude_signals=["exact-dup"])

"""Signals over a real catalog: values, lineage and currency of the signal tables, and
bad input refused with nothing written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from signal_tables import GSM_PROBLEM, PROSE, chat_rows, write_chat

from podium.errors import InvalidInput, NotFound
from podium.signals.job import SignalsConfig, compute_signals
from podium.signals.listing import signals_for
from podium.signals.store import (
    PROP_SETTINGS_HASH,
    PROP_SNAPSHOT,
    PROP_TABLE,
    signal_table_name,
)
from podium.store.catalog.catalog import load_table, table_exists
from podium.store.read.read import read_small
from podium.store.write.write import write_table

TEXTS = [
    PROSE * 3,
    (PROSE * 3).replace("quick", "quack"),  # a near-duplicate of r0000
    "Rockets and the moon landing of 1969, told with many details of the crew. " * 3,
    "Mail jane.doe@example.com or call +44 20 7946 0958; key AKIAIOSFODNN7EXAMPLE.",
    "Please solve: " + GSM_PROBLEM,  # contaminated
    "Bonjour tout le monde, je suis très heureux de vous voir aujourd'hui dans cette ville.",
    PROSE * 3,  # an exact duplicate of r0000
]


def config(*signals: str, **settings: Any) -> SignalsConfig:
    return SignalsConfig.model_validate(
        {"table": {"name": "t.chat"}, "signals": list(signals), **settings}
    )


def values(signal: str) -> list[dict[str, Any]]:
    return read_small(signal_table_name("t.chat", signal))[0].to_pylist()


@pytest.fixture
def chat(podium_home: Path) -> None:
    write_chat("t.chat", TEXTS)
    write_chat("t.gsm", [GSM_PROBLEM], prefix="g")


def test_every_signal_finds_what_was_planted(chat: None) -> None:
    compute_signals(
        config(
            "length,language,private-data,exact-dup,near-dup,contamination",
            contamination={"evals": ["t.gsm"]},
        )
    )
    length = {r["id"]: r for r in values("length")}
    assert length["r0003"]["turn_chars"] == [len("Answer this."), len(TEXTS[3])]
    assert length["r0003"]["words"] == 2 + len(TEXTS[3].split())
    languages = {r["id"]: r["language"] for r in values("language")}
    assert languages["r0000"] == "en" and languages["r0005"] == "fr"
    found = {(r["id"], r["kind"], TEXTS[3][r["start"] : r["end"]]) for r in values("private-data")}
    assert found == {
        ("r0003", "email", "jane.doe@example.com"),
        ("r0003", "phone", "+44 20 7946 0958"),
        ("r0003", "secret", "AKIAIOSFODNN7EXAMPLE"),
    }
    exact = {r["id"]: (r["cluster"], r["is_canonical"]) for r in values("exact-dup")}
    assert exact == {"r0000": ("r0000", True), "r0006": ("r0000", False)}
    near = {r["id"]: (r["cluster"], r["is_canonical"]) for r in values("near-dup")}
    assert near == {
        "r0000": ("r0000", True),
        "r0001": ("r0000", False),
        "r0006": ("r0000", False),
    }
    (hit,) = values("contamination")
    assert (hit["id"], hit["turn"], hit["eval_table"], hit["eval_id"]) == (
        "r0004",
        1,
        "t.gsm",
        "g0000",
    )
    assert TEXTS[4][hit["start"] : hit["end"]] == GSM_PROBLEM.rstrip("?")


def test_a_signal_table_names_what_it_describes_and_goes_stale(chat: None) -> None:
    compute_signals(config("exact-dup"))
    table = load_table("t.chat")
    sid = table.current_snapshot().snapshot_id  # type: ignore[union-attr]
    props = load_table("t.chat__sig_exact_dup").properties
    assert props[PROP_TABLE] == "t.chat" and props[PROP_SNAPSHOT] == str(sid)
    (status,) = signals_for("t.chat")
    assert status.current and status.summary["duplicates"] == 1
    write_chat("t.chat", ["one more row"], prefix="new", mode="append")
    (status,) = signals_for("t.chat")
    assert not status.current and str(sid) in status.stale
    (old,) = signals_for("t.chat", sid)  # time travel: still current for the old snapshot
    assert old.current
    compute_signals(config("exact-dup", exact_dup={}))
    assert signals_for("t.chat")[0].current


def test_other_settings_have_another_hash(chat: None) -> None:
    compute_signals(config("near-dup"))
    first = load_table("t.chat__sig_near_dup").properties[PROP_SETTINGS_HASH]
    compute_signals(config("near-dup", near_dup={"threshold": 0.9}))
    assert load_table("t.chat__sig_near_dup").properties[PROP_SETTINGS_HASH] != first


def test_a_table_without_messages_is_refused_and_nothing_written(podium_home: Path) -> None:
    write_table("t.plain", pa.table({"id": ["a"], "text": ["hello"]}))
    with pytest.raises(InvalidInput, match="no 'messages' column"):
        compute_signals(
            SignalsConfig.model_validate({"table": {"name": "t.plain"}, "signals": ["length"]})
        )
    assert not table_exists("t.plain__sig_length")


def test_missing_snapshot_and_eval_table_are_refused(chat: None) -> None:
    with pytest.raises(NotFound, match="no snapshot 12345"):
        compute_signals(
            SignalsConfig.model_validate(
                {"table": {"name": "t.chat", "snapshot_id": 12345}, "signals": ["length"]}
            )
        )
    with pytest.raises(InvalidInput, match="Eval table 't.nope' does not exist"):
        compute_signals(config("length,contamination", contamination={"evals": ["t.nope"]}))
    with pytest.raises(InvalidInput, match="needs eval tables"):
        compute_signals(config("contamination"))
    assert not table_exists("t.chat__sig_length")  # checked before the first signal ran


def test_turns_without_text_write_nothing_and_keep_the_old_values(chat: None) -> None:
    compute_signals(config("length"))
    before = load_table("t.chat__sig_length").current_snapshot()
    with pytest.raises(InvalidInput, match="no turn of role tool with text"):
        compute_signals(config("length", roles=["tool"]))
    after = load_table("t.chat__sig_length").current_snapshot()
    assert after is not None and before is not None and after.snapshot_id == before.snapshot_id


def test_a_table_with_a_signal_name_that_is_no_signal_is_never_replaced(chat: None) -> None:
    write_table("t.chat__sig_length", chat_rows(["keep me"]))
    with pytest.raises(InvalidInput, match="is not the length signal"):
        compute_signals(config("length"))
    assert read_small("t.chat__sig_length")[0].column("id").to_pylist() == ["r0000"]


def test_unknown_signal_and_bad_bands_name_the_problem() -> None:
    with pytest.raises(InvalidInput, match="Unknown signal 'dedup'"):
        SignalsConfig.model_validate({"table": {"name": "t.x"}, "signals": ["dedup"]})
    with pytest.raises(InvalidInput, match="does not divide num_perm"):
        SignalsConfig.model_validate(
            {"table": {"name": "t.x"}, "signals": ["near-dup"], "near_dup": {"bands": 5}}
        )


def test_signal_table_names_are_reserved_and_kept_out_of_dataset_pickers(chat: None) -> None:
    from podium.store.catalog.kinds import group_of
    from podium.store.catalog.table_name import check_not_reserved

    with pytest.raises(InvalidInput, match="Podium keeps for a table's signals"):
        check_not_reserved("t.chat__sig_near_dup")
    compute_signals(config("length"))
    assert group_of(load_table("t.chat__sig_length").properties["podium.kind"]) == "reports"


def test_near_dup_verified_in_several_scans_finds_the_same_clusters(
    chat: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from podium.signals import near_dup

    compute_signals(config("near-dup"))
    once = sorted((r["id"], r["cluster"]) for r in values("near-dup"))
    monkeypatch.setattr(near_dup, "VERIFY_ROWS", 2)  # one pair a scan
    compute_signals(config("near-dup"))
    assert sorted((r["id"], r["cluster"]) for r in values("near-dup")) == once
    assert len(once) == 3


def test_rows_without_ids_and_eval_tables_without_messages_are_refused(chat: None) -> None:
    write_table(
        "t.noid", chat_rows(["a", "b"]).set_column(0, "id", pa.array([None, "x"], pa.string()))
    )
    with pytest.raises(InvalidInput, match="1 row\\(s\\) of this table have no 'id'"):
        compute_signals(
            SignalsConfig.model_validate({"table": {"name": "t.noid"}, "signals": ["length"]})
        )
    assert not table_exists("t.noid__sig_length")
    write_table("t.flat", pa.table({"id": ["a"], "text": ["hello"]}))
    with pytest.raises(InvalidInput, match="Eval table t.flat has no 'id' and 'messages'"):
        compute_signals(config("contamination", contamination={"evals": ["t.flat"]}))

"""Acting on a signal: "keep one per cluster" removes exactly the non-canonical members
in one snapshot that Review's history names, time travel undoes it, and facets and
filters read only current signals."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from signal_tables import write_chat

from podium.errors import InvalidInput
from podium.review.history import row_history
from podium.signals.actions import remove_by_signal
from podium.signals.job import SignalsConfig, compute_signals
from podium.signals.values import facets, ids_for
from podium.store.catalog.catalog import load_table
from podium.store.read.read import read_small


def sentence(rng: random.Random) -> str:
    words = ["alpha", "bravo", "delta", "gamma", "kilo", "lima", "oscar", "tango", "zulu"]
    return " ".join(rng.choice(words) + str(rng.randint(0, 999)) for _ in range(12)) + "."


@pytest.mark.parametrize("injected", [40, 1000])
def test_keep_one_per_cluster(podium_home: Path, injected: int) -> None:
    """The issue's done-when at 1,000 injected near-duplicates (and a small case that
    reads quickly when it fails)."""
    rng = random.Random(3)
    texts: list[str] = []
    copies: dict[int, int] = {}  # copy -> original
    while len(copies) < injected:
        original = " ".join(sentence(rng) for _ in range(8))
        texts.append(original)
        for _ in range(min(rng.randint(0, 2), injected - len(copies))):
            sentences = original.split(". ")
            rng.shuffle(sentences)  # the same sentences, reordered
            copies[len(texts)] = texts.index(original)
            texts.append(". ".join(sentences))
    rng_order = list(range(len(texts)))
    rng.shuffle(rng_order)  # canonical = smallest id, not first written
    shuffled = [texts[i] for i in rng_order]
    write_chat("t.dups", shuffled)
    compute_signals(
        SignalsConfig.model_validate({"table": {"name": "t.dups"}, "signals": ["near-dup"]})
    )
    groups: dict[int, list[str]] = {}
    for position, i in enumerate(rng_order):
        groups.setdefault(copies.get(i, i), []).append(f"r{position:04d}")
    expected = {rid for members in groups.values() for rid in sorted(members)[1:]}
    assert len(expected) == len(copies) == injected

    preview = remove_by_signal("t.dups", "near-dup", preview=True)
    assert preview["rows"] == len(expected) and preview["snapshot_id"] is None
    table = load_table("t.dups")
    before = table.current_snapshot().snapshot_id  # type: ignore[union-attr]
    done = remove_by_signal("t.dups", "near-dup")
    assert done["parent_id"] == before
    kept = set(read_small("t.dups")[0].column("id").to_pylist())
    assert kept == {f"r{i:04d}" for i in range(len(texts))} - expected
    removed = sorted(expected)[0]
    (event,) = [
        e for e in row_history(load_table("t.dups"), None, removed) if e["kind"] == "delete"
    ]
    assert "near-dup" in event["detail"] and event["snapshot_id"] == done["snapshot_id"]
    old = set(read_small("t.dups", before)[0].column("id").to_pylist())
    assert len(old) == len(texts)  # time travel: the snapshot before still has every row
    with pytest.raises(InvalidInput, match="stale"):  # the table moved on: never act twice
        remove_by_signal("t.dups", "near-dup")


def test_facets_and_filters_of_current_signals(podium_home: Path) -> None:
    write_chat(
        "t.mix",
        ["same text here " * 10, "same text here " * 10, "mail a.b@example.com now", "other"],
    )
    compute_signals(
        SignalsConfig.model_validate(
            {"table": {"name": "t.mix"}, "signals": ["exact-dup,private-data,language"]}
        )
    )
    table = load_table("t.mix")
    sid = table.current_snapshot().snapshot_id  # type: ignore[union-attr]
    found = {(f.signal, f.value): f.rows for f in facets(table, sid)}
    assert found[("exact-dup", "member")] == 2 and found[("exact-dup", "duplicate")] == 1
    assert found[("private-data", "email")] == 1
    assert sum(n for (s, _), n in found.items() if s == "language") == 4
    assert ids_for(table, sid, "private-data", "email") == {"r0002"}
    assert ids_for(table, sid, "exact-dup", "duplicate") == {"r0001"}
    write_chat("t.mix", ["new"], prefix="n", mode="append")
    table = load_table("t.mix")
    assert facets(table, table.current_snapshot().snapshot_id) == []  # type: ignore[union-attr]
    with pytest.raises(InvalidInput, match="No contamination signal"):
        ids_for(table, sid, "contamination", "contaminated")


def test_redact_replaces_each_span_in_one_edit_snapshot(podium_home: Path) -> None:
    from podium.signals.actions import redact_private_data

    key = "AKIAIOSFODNN7EXAMPLE"
    texts = [f"use {key} and mail bob@example.com", "nothing here", f"again {key}"]
    write_chat("t.pii", texts)
    compute_signals(
        SignalsConfig.model_validate({"table": {"name": "t.pii"}, "signals": ["private-data"]})
    )
    before = load_table("t.pii").current_snapshot().snapshot_id  # type: ignore[union-attr]
    preview = redact_private_data("t.pii", kinds=["secret"], preview=True)
    assert (preview["rows"], preview["spans"], preview["snapshot_id"]) == (2, 2, None)
    done = redact_private_data("t.pii", kinds=["secret"])
    rows = {r["id"]: r["messages"][1]["content"] for r in read_small("t.pii")[0].to_pylist()}
    assert rows == {
        "r0000": "use [SECRET] and mail bob@example.com",  # only the kind asked for
        "r0001": "nothing here",
        "r0002": "again [SECRET]",
    }
    assert done["parent_id"] == before
    old = {r["id"]: r["messages"][1]["content"] for r in read_small("t.pii", before)[0].to_pylist()}
    assert old["r0000"] == texts[0]  # time travel keeps the original text


def test_redacted_spans_never_overlap() -> None:
    from podium.signals.actions import redacted

    assert redacted("abcdefgh", [(1, 3, "x"), (2, 5, "y"), (6, 8, "z")]) == "a[X]def[Z]"


def test_label_tags_every_row_a_signal_names(podium_home: Path) -> None:
    from podium.review.annotations import latest, load_annotations
    from podium.signals.actions import label_by_signal

    write_chat("t.tag", ["key AKIAIOSFODNN7EXAMPLE", "plain", "mail bob@example.com"])
    compute_signals(
        SignalsConfig.model_validate({"table": {"name": "t.tag"}, "signals": ["private-data"]})
    )
    assert label_by_signal("t.tag", "private-data", preview=True)["rows"] == 2
    label_by_signal("t.tag", "private-data", value="secret", tags=["has-secret"])
    found = {(a.row_id, tuple(a.tags)) for a in latest(load_annotations("t.tag"))}
    assert found == {("r0000", ("has-secret",))}
    with pytest.raises(InvalidInput, match="Say which language value"):
        label_by_signal("t.tag", "language", tags=["x"])


def test_evidence_of_one_row(podium_home: Path) -> None:
    from podium.signals.evidence import evidence

    key = "AKIAIOSFODNN7EXAMPLE"
    problem = "How many clips did Natalia sell in April and May if she sold forty eight in April?"
    write_chat("t.ev", [f"key {key} here. Question: {problem}", "plain text row"])
    write_chat("t.evals", [problem], prefix="g")
    compute_signals(
        SignalsConfig.model_validate(
            {
                "table": {"name": "t.ev"},
                "signals": ["private-data,contamination,language"],
                "contamination": {"evals": ["t.evals"]},
            }
        )
    )
    table = load_table("t.ev")
    sid = table.current_snapshot().snapshot_id  # type: ignore[union-attr]
    (row,) = [r for r in read_small("t.ev")[0].to_pylist() if r["id"] == "r0000"]
    found = dict(evidence(table, sid, row))
    (secret,) = found["private-data"]
    assert "secret (AWS Access Key) 'AKIA…LE'" in secret and key not in secret
    (hit,) = found["contamination"]
    assert "match t.evals row g0000" in hit and "Natalia" in hit
    assert found["language"] == ["en"]


def test_browse_signal_actions_follow_the_edit_branch(podium_home: Path) -> None:
    """With Browse's edits going to a branch, "keep one per cluster" and "redact" land on
    that branch and main stays as it was, as every other review change there does."""
    from podium.app.views.browse.signal_acts import done_text, offered
    from podium.review.refs import create_branch
    from podium.store.state.users import acting_user

    key = "AKIAIOSFODNN7EXAMPLE"
    text = " ".join(sentence(random.Random(5)) for _ in range(8))
    texts = [text, text.upper(), f"use {key} please", "nothing here"]
    write_chat("t.branchy", texts)
    compute_signals(
        SignalsConfig.model_validate(
            {"table": {"name": "t.branchy"}, "signals": ["near-dup", "private-data"]}
        )
    )
    main_before = load_table("t.branchy").current_snapshot().snapshot_id  # type: ignore[union-attr]
    create_branch("t.branchy", "review", acting_user())
    acts = {a.key: a for a in offered(["near-dup", "private-data"], [])}

    removed = acts["keep.near-dup"].run("t.branchy", preview=False, branch="review")
    redacted = acts["redact"].run("t.branchy", preview=False, branch="review")

    table = load_table("t.branchy")
    assert table.current_snapshot().snapshot_id == main_before  # type: ignore[union-attr]
    assert len(read_small("t.branchy")[0]) == len(texts)  # main: every row, unredacted
    on_branch = {
        r["id"]: r["messages"][1]["content"]
        for r in read_small("t.branchy", "review")[0].to_pylist()
    }
    assert set(on_branch) == {"r0000", "r0002", "r0003"} and removed["rows"] == 1
    assert "on branch review" in done_text(acts["redact"], redacted)
    assert on_branch["r0002"] == "use [SECRET] please" and redacted["rows"] == 1

"""`podium signals similar|topics|coverage` end to end: the real CLI process over a real
catalog, after `podium signals run --signal embedding,topics`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import cli_fork
from signal_tables import write_chat
from topic_corpus import topic_rows

from podium.store.read.read import read_small


def podium(*args: str) -> subprocess.CompletedProcess[str]:
    return cli_fork.run(
        [sys.executable, "-m", "podium.cli", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=300,
    )


def test_similar_topics_and_coverage_from_the_cli(podium_home: Path) -> None:
    write_chat("t.chat", [text for text, _ in topic_rows(40, k=4)])
    write_chat("t.vibes", ["What do vaccines do to a virus?", "Who scored the goal?"], "v")
    out = podium("signals", "similar", "t.chat", "--text", "bread")
    assert out.returncode != 0 and "has no embeddings" in out.stderr, out.stderr
    run = podium(
        "signals",
        "run",
        "t.chat",
        "--signal",
        "embedding,topics",
        "--roles",
        "assistant",
        "--set",
        "topics.clusters=4",
        "--set",
        "topics.categories=2",
    )
    assert run.returncode == 0, run.stderr
    out = podium(
        "signals",
        "similar",
        "t.chat",
        "--text",
        "the oven and the sourdough loaf",
        "-k",
        "3",
        "--json",
    )
    assert out.returncode == 0, out.stderr
    hits = json.loads(out.stdout)
    assert len(hits) == 3 and all(int(h["id"][1:]) % 4 == 0 for h in hits)  # baking rows
    assert "oven" in hits[0]["text"] or "dough" in hits[0]["text"] or "bake" in hits[0]["text"]
    out = podium("signals", "similar", "t.chat", "--row", "r0001", "-k", "2", "--approximate")
    assert out.returncode == 0 and "r0001 " not in out.stdout, out.stdout
    out = podium("signals", "topics", "t.chat", "--json")
    topics = json.loads(out.stdout)
    assert len(topics) == 4 and sum(t["rows"] for t in topics) == 40
    vibes = podium("signals", "run", "t.vibes", "--signal", "embedding", "--roles", "assistant")
    assert vibes.returncode == 0, vibes.stderr
    out = podium("signals", "coverage", "t.vibes", "--train", "t.chat", "--json")
    assert out.returncode == 0, out.stderr
    assert [f["id"] for f in json.loads(out.stdout)] == ["v0000"], out.stdout
    out = podium("signals", "coverage", "t.vibes", "--train", "t.chat", "--write", "t.gaps")
    assert out.returncode == 0 and "wrote 1 prompts to t.gaps@" in out.stderr, out.stderr
    assert "v0000" in out.stdout
    assert [r["id"] for r in read_small("t.gaps")[0].to_pylist()] == ["v0000"]

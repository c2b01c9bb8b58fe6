"""A real two-checkpoint comparison: the base and a cpu-smoke SFT checkpoint, real vLLM.

The session's vLLM serves the base; the trained checkpoint's server is started by the
compare job and stopped by it afterwards. A second comparison with the same key sends
no request to any server and writes nothing to the samples tables.
"""

from __future__ import annotations

import json
import os
import re
import sys
import uuid

import cli_fork
import httpx
import pyarrow as pa
import pytest

from podium.compare.job import CompareConfig, run_compare
from podium.compare.ratings import ratings_report
from podium.compare.table import load_comparison
from podium.compare.votes import blind_pair, cast_vote, list_votes
from podium.identity import User
from podium.models import get_model, list_servers
from podium.reporting import Reporter
from podium.store.catalog.catalog import load_table
from podium.store.read.refs import TableRef
from podium.store.schema import SFT_ARROW_SCHEMA
from podium.store.write.demo import load_demo
from podium.store.write.write import write_table

pytestmark = [pytest.mark.vllm, pytest.mark.train]
PODIUM = [sys.executable, "-m", "podium.cli"]
# Before torch starts its thread pool: spinning threads make training 4x slower on a busy machine.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def reviewer(name: str) -> User:
    return User(name=name, role="reviewer", source="oidc")


def _requests_served(base_url: str) -> float:
    """Finished requests as the server counts them (vLLM's Prometheus metrics)."""
    text = httpx.get(base_url.removesuffix("/v1") + "/metrics", timeout=10).text
    return sum(
        float(m) for m in re.findall(r"^vllm:request_success_total\{[^}]*\} (\S+)$", text, re.M)
    )


@pytest.fixture
def trained(vllm_model: str) -> str:
    """A cpu-smoke SFT checkpoint of the base, registered in the session home."""
    from trainers.config import SftConfig
    from trainers.sft import run_sft

    name = f"cmp-smoke-{uuid.uuid4().hex[:6]}"
    table = f"t.{name.replace('-', '_')}"
    pairs = [(f"Give colour number {i} as JSON.", f'{{"colour": "c{i}"}}') for i in range(8)]
    rows = [
        {
            "id": f"r{i}",
            "messages": [{"role": "user", "content": q}, {"role": "assistant", "content": a}],
        }
        for i, (q, a) in enumerate(pairs)
    ]
    write_table(table, pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA))
    # No split column and no held-out share: nothing to evaluate, only two steps.
    cfg = SftConfig(
        model=vllm_model,
        table={"name": table},
        out=name,
        preset="cpu-smoke",
        max_steps=2,
        batch_size=2,
        eval_fraction=0.0,
    )
    run_sft(cfg, Reporter({"podium.lineage.job_id": f"job-{name}"}))
    return name


@pytest.mark.timeout(2400)  # a shared 2-core machine: training and two servers start
def test_base_vs_trained_end_to_end_with_reuse(vllm_server, vllm_model, trained, unique_table):
    base = get_model(vllm_model).name
    out = unique_table + "_cmp"
    load_demo()
    # The done-when path: the CLI over the demo prompts.
    proc = cli_fork.run(
        [
            *PODIUM,
            "compare",
            "--models",
            f"base,{trained}",
            "--table",
            "demo.chat",
            "--out",
            out,
            "--limit",
            "3",
            "--max-tokens",
            "8",
            "--check",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    comparison = load_comparison(out)
    assert comparison.models == [base, trained] and len(comparison.items) == 3
    tables = comparison.sample_tables
    for model in (base, trained):
        rows = load_table(tables[model]).scan().to_arrow().to_pylist()
        assert len(rows) == 3 and {r["checkpoint"] for r in rows} == {model}
        assert all(r["error"] is None and 0 < r["completion_tokens"] <= 8 for r in rows)
        assert all(
            it.answer_of(model).sample_id in {r["id"] for r in rows} for it in comparison.items
        )
    assert not any(s.model == trained and s.alive for s in list_servers())  # stopped after

    snapshots = {t: len(load_table(t).snapshots()) for t in tables.values()}
    served = _requests_served(vllm_server.base_url)
    cfg = CompareConfig(
        models=[base, trained],
        input=TableRef(name="demo.chat"),
        out=out + "_again",
        limit=3,
        max_tokens=8,
        checks=["json"],
    )
    result = run_compare(cfg, Reporter())
    assert result.summary["sample_tables"] == tables
    assert _requests_served(vllm_server.base_url) == served  # no request for an existing key
    assert {t: len(load_table(t).snapshots()) for t in tables.values()} == snapshots
    assert not any(s.model == trained for s in list_servers())  # never started again

    before = ratings_report(comparison, list_votes(out), bootstrap=20)
    for item in comparison.items:
        pair = blind_pair(comparison, item, "ann")
        cast_vote(comparison, pair, "A" if pair.model_a == trained else "B", reviewer("ann"))
    after = ratings_report(comparison, list_votes(out), bootstrap=20)
    assert before["votes"] == 0 and after["votes"] == 3
    assert after["ratings"][0]["model"] == trained
    assert json.dumps(after)  # what `podium compare ratings --json` prints

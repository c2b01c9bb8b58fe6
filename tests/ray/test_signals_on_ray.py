"""Near-duplicate, exact-duplicate and contamination signals computed on a real local Ray
cluster (one task per group of data files; near-dup's LSH buckets shuffled by band) give
the same values as on one machine."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from conftest import RayCluster

from podium.reporting import Reporter
from podium.signals.job import SignalsConfig, compute_signals
from podium.store.read.read import read_small
from podium.store.schema import SFT_ARROW_SCHEMA, SFT_SCHEMA
from podium.store.write.write import write_batches

pytestmark = pytest.mark.ray

TABLE = "t.dups_on_ray"


class Logged(Reporter):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def log(self, message: str) -> None:
        self.lines.append(message)


EVALS = "t.evals_on_ray"
ON_RAY = ["near-dup", "exact-dup", "contamination"]


def _table_of_many_files() -> None:
    rng = random.Random(5)
    texts: list[str] = []
    problems = [" ".join(f"q{rng.randrange(10**6)}" for _ in range(30)) for _ in range(5)]
    for n in range(120):
        words = [f"w{rng.randrange(10**6)}" for _ in range(150)]
        if n % 10 == 0:  # an eval problem pasted in
            words[40:40] = problems[n % 5].split()
        texts.append(" ".join(words))
        for _ in range(rng.randint(0, 3)):  # near-copies: a few words replaced
            copy = list(words)
            for at in rng.sample(range(len(copy)), rng.randint(0, 6)):  # 0: an exact copy
                copy[at] = f"v{rng.randrange(10**6)}"
            texts.append(" ".join(copy))
    order = list(range(len(texts)))
    rng.shuffle(order)  # copies land in other data files than their originals
    for part in range(4):  # one data file each
        rows = [
            {"id": f"r{i:04d}", "messages": [{"role": "user", "content": texts[i]}]}
            for i in order[part::4]
        ]
        write_batches(
            TABLE,
            iter([pa.RecordBatch.from_pylist(rows, schema=SFT_ARROW_SCHEMA)]),
            schema=SFT_SCHEMA,
            mode="create" if part == 0 else "append",
        )
    evals = [
        {"id": f"e{i}", "messages": [{"role": "user", "content": p}]}
        for i, p in enumerate(problems)
    ]
    write_batches(
        EVALS, iter([pa.RecordBatch.from_pylist(evals, schema=SFT_ARROW_SCHEMA)]), schema=SFT_SCHEMA
    )


def _signals(reporter: Reporter, **config: Any) -> dict[str, list[dict[str, Any]]]:
    compute_signals(
        SignalsConfig.model_validate(
            {
                "table": {"name": TABLE},
                "signals": ON_RAY,
                "batch_rows": 50,
                "contamination": {"evals": [EVALS]},
                **config,
            }
        ),
        reporter,
    )
    found = {}
    for signal in ON_RAY:
        rows = read_small(f"{TABLE}__sig_{signal.replace('-', '_')}")[0].to_pylist()
        found[signal] = sorted(rows, key=lambda r: sorted(r.items()))
    return found


@pytest.fixture(autouse=True)
def _leave_no_ray_in_this_process() -> Iterator[None]:
    """compute_signals joins the cluster from this test's own process (ray_module): the
    next test of this worker calls ray.init itself ("ray.init twice")."""
    yield
    import ray

    if ray.is_initialized():
        ray.shutdown()


def test_signals_on_ray_give_the_values_of_one_machine(
    ray_home: Path, ray_cluster: RayCluster
) -> None:
    _table_of_many_files()
    local = _signals(Reporter())
    on_ray_log = Logged()
    on_ray = _signals(on_ray_log, nodes=2)
    for what in ("near-dup: signatures of", "exact-dup: hashes of", "contamination: hits in"):
        assert any(
            line.startswith(what) and "groups of data files in Ray tasks" in line
            for line in on_ray_log.lines
        ), what
    assert any("by band" in line for line in on_ray_log.lines)
    assert len({r["cluster"] for r in local["near-dup"]}) > 30 and len(local["near-dup"]) > 100
    assert len({r["cluster"] for r in local["exact-dup"]}) > 5
    assert len({r["id"] for r in local["contamination"]}) >= 12
    assert on_ray == local

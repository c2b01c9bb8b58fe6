"""A near-duplicate signal computed on a real local Ray cluster (signatures in one task
per group of data files, LSH buckets shuffled by band) gives the same clusters as on one
machine."""

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


def _table_of_many_files() -> None:
    rng = random.Random(5)
    texts: list[str] = []
    for _ in range(120):
        words = [f"w{rng.randrange(10**6)}" for _ in range(150)]
        texts.append(" ".join(words))
        for _ in range(rng.randint(0, 3)):  # near-copies: a few words replaced
            copy = list(words)
            for at in rng.sample(range(len(copy)), rng.randint(1, 6)):
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


def _clusters(reporter: Reporter, **config: Any) -> list[dict[str, Any]]:
    compute_signals(
        SignalsConfig.model_validate(
            {"table": {"name": TABLE}, "signals": ["near-dup"], "batch_rows": 50, **config}
        ),
        reporter,
    )
    rows: list[dict[str, Any]] = read_small(f"{TABLE}__sig_near_dup")[0].to_pylist()
    return sorted(rows, key=lambda r: r["id"])


@pytest.fixture(autouse=True)
def _leave_no_ray_in_this_process() -> Iterator[None]:
    """compute_signals joins the cluster from this test's own process (ray_module): the
    next test of this worker calls ray.init itself ("ray.init twice")."""
    yield
    import ray

    if ray.is_initialized():
        ray.shutdown()


def test_near_dup_on_ray_gives_the_clusters_of_one_machine(
    ray_home: Path, ray_cluster: RayCluster
) -> None:
    _table_of_many_files()
    local = _clusters(Reporter())
    on_ray_log = Logged()
    on_ray = _clusters(on_ray_log, nodes=2)
    assert any("Ray tasks" in line and "groups of data files" in line for line in on_ray_log.lines)
    assert any("by band" in line for line in on_ray_log.lines)
    assert len({r["cluster"] for r in local}) > 30 and len(local) > 100
    assert on_ray == local

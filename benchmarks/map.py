"""The map of a table, measured: embed, index, cluster (both levels) and project N rows,
then search by meaning (warm latency, recall@10 of the index against exact search in
the same run) and score the clusters against the known topics of the corpus.

    .venv/bin/python benchmarks/map.py --rows 20000 --json

The corpus (tests/signals/topic_corpus.py) is K topic templates: each ~1 KiB row is
sentences of one topic, so the topic a row came from is the truth; the adjusted Rand
index of the clusters (topics.clusters = K) against it is reported. Every stage runs
as `podium signals run` does (scan the Iceberg snapshot, compute, write the signal
table; the index is written beside the embeddings). Titles are a model job and not
measured here.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "signals"))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--topics", type=int, default=8, help="K topic templates.")
    parser.add_argument("--queries", type=int, default=200, help="Queries for recall@10.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="Print one JSON document.")
    args = parser.parse_args()

    home = tempfile.mkdtemp(prefix="podium-bench-map-")
    atexit.register(shutil.rmtree, home, True)
    os.environ["PODIUM_HOME"] = home
    import numpy as np
    import pyarrow as pa
    from sklearn.metrics import adjusted_rand_score
    from topic_corpus import topic_rows

    from podium.signals.job import SignalsConfig, compute_signals
    from podium.signals.similar import similar
    from podium.signals.store import signal_table_name
    from podium.signals.vector_index import load_index
    from podium.signals.vectors import embedding_signal, stored_vectors
    from podium.store.read.read import iter_batches
    from podium.store.schema import SFT_ARROW_SCHEMA, SFT_SCHEMA
    from podium.store.write.write import write_batches

    corpus = topic_rows(args.rows, k=args.topics, seed=args.seed, sentences=16)

    def batches() -> Any:
        for at in range(0, len(corpus), 5000):
            yield pa.RecordBatch.from_pylist(
                [
                    {"id": f"r{i:08d}", "messages": [{"role": "user", "content": text}]}
                    for i, (text, _) in enumerate(corpus[at : at + 5000], start=at)
                ],
                schema=SFT_ARROW_SCHEMA,
            )

    write_batches("bench.map", batches(), schema=SFT_SCHEMA, mode="create")  # type: ignore[arg-type]
    report: dict[str, Any] = {
        "rows": args.rows,
        "topics": args.topics,
        "mean_chars": round(sum(len(t) for t, _ in corpus) / max(1, len(corpus))),
        "seconds": {},
    }
    config = {"topics": {"clusters": args.topics, "categories": max(1, args.topics // 2)}}
    for stage in ("embedding", "topics", "projection"):
        started = time.perf_counter()
        compute_signals(
            SignalsConfig.model_validate(
                {"table": {"name": "bench.map"}, "signals": [stage], **config}
            )
        )
        report["seconds"][stage] = round(time.perf_counter() - started, 2)
    report["seconds"]["total"] = round(sum(report["seconds"].values()), 2)

    # search: warm latency through the same path as the CLI, by the index
    similar("bench.map", text="how long should the bread bake", k=10, exact=False)
    latencies = []
    for text in ("the striker scored", "python dictionary keys", "a galaxy of stars") * 10:
        started = time.perf_counter()
        similar("bench.map", text=text, k=10, exact=False)
        latencies.append((time.perf_counter() - started) * 1000)
    report["search_ms_warm"] = {
        "median": round(float(np.median(latencies)), 2),
        "max": round(float(np.max(latencies)), 2),
    }
    # recall@10 of the index against exact search over the same vectors
    found = stored_vectors("bench.map")
    _, stored, _ = embedding_signal("bench.map")
    index = load_index(stored)
    rng = np.random.default_rng(args.seed)
    picks = rng.choice(len(found.ids), min(args.queries, len(found.ids)), replace=False)
    queries = found.vectors[picks]
    exact = np.argsort(-(queries @ found.vectors.T), axis=1)[:, :10]
    approx = np.asarray(index.graph.search(queries, 10).keys, np.int64)
    exact_ids = found.ids.to_numpy(zero_copy_only=False)
    index_ids = index.ids.to_numpy(zero_copy_only=False)
    recalls = [
        len(set(exact_ids[e]) & set(index_ids[a])) / 10 for e, a in zip(exact, approx, strict=True)
    ]
    report["recall_at_10"] = round(float(np.mean(recalls)), 4)

    truth = {f"r{i:08d}": topic for i, (_, topic) in enumerate(corpus)}
    ids: list[str] = []
    clusters: list[int] = []
    for batch in iter_batches(signal_table_name("bench.map", "topics"), columns=["id", "cluster"]):
        ids.extend(batch.column("id").to_pylist())
        clusters.extend(batch.column("cluster").to_pylist())
    report["adjusted_rand_index"] = round(
        float(adjusted_rand_score([truth[i] for i in ids], clusters)), 4
    )
    report["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

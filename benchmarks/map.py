"""The map of a table, measured: embed, index, cluster (both levels) and project N rows,
then search by meaning (warm latency, recall@10 of the index against exact search in
the same run) and score the clusters against the known topics of the corpus.

    .venv/bin/python benchmarks/map.py --rows 20000 --json

The corpus (tests/signals/topic_corpus.py) is K topic templates: each ~1 KiB row is
sentences of one topic, so the topic a row came from is the truth; the adjusted Rand
index of the clusters (topics.clusters = K) against it is reported. The corpus is
generated and written a batch at a time. Every stage runs as `podium signals run` does
(scan the Iceberg snapshot, compute, write the signal table; the index is written beside
the embeddings), each in a fresh Python process (`signals_scale.child`): its wall time
(imports included) and its own peak RSS are reported apart, with the load average, as are
the search's and this script's own (the corpus writer's). Titles are a model job and not
measured here.
"""

from __future__ import annotations

import argparse
import atexit
import itertools
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
sys.path.insert(0, str(ROOT / "benchmarks"))


STAGE = """
import json, sys
from podium.signals.job import SignalsConfig, compute_signals
compute_signals(SignalsConfig.model_validate(json.loads(sys.argv[1])))
"""

SEARCH = """
import json, sys, time
import numpy as np
from podium.signals.similar import similar
from podium.signals.vector_index import load_index
from podium.signals.vectors import embedding_signal, stored_batches
queries_n, seed = int(sys.argv[1]), int(sys.argv[2])
report = {}
# warm latency through the same path as the CLI, by the index
similar("bench.map", text="how long should the bread bake", k=10, exact=False)
latencies = []
for text in ("the striker scored", "python dictionary keys", "a galaxy of stars") * 10:
    started = time.perf_counter()
    similar("bench.map", text=text, k=10, exact=False)
    latencies.append((time.perf_counter() - started) * 1000)
report["search_ms_warm"] = {
    "median": round(float(np.median(latencies)), 2), "max": round(float(np.max(latencies)), 2)}
# recall@10 of the index against exact search over the same vectors, a batch at a time
found = stored_batches("bench.map")
queries = found.sample(min(queries_n, found.count), seed)
best = np.full((len(queries), 10), -np.inf, np.float32)
best_ids = np.full((len(queries), 10), "", object)
for ids, vectors in found.batches():
    scores = np.concatenate([best, queries @ vectors.T], axis=1)
    names = np.concatenate([best_ids, np.broadcast_to(
        ids.to_numpy(zero_copy_only=False), (len(queries), len(ids)))], axis=1)
    top = np.argpartition(-scores, 9, axis=1)[:, :10]
    best = np.take_along_axis(scores, top, axis=1)
    best_ids = np.take_along_axis(names, top, axis=1)
_, stored, _ = embedding_signal("bench.map")
index = load_index(stored)
approx = np.asarray(index.graph.search(queries, 10).keys, np.int64)
index_ids = index.ids.to_numpy(zero_copy_only=False)
recalls = [len(set(e) & set(index_ids[a])) / 10 for e, a in zip(best_ids, approx, strict=True)]
report["recall_at_10"] = round(float(np.mean(recalls)), 4)
print(json.dumps(report))
"""


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--topics", type=int, default=8, help="K topic templates.")
    parser.add_argument("--queries", type=int, default=200, help="Queries for recall@10.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=3600, help="Seconds a stage may run.")
    parser.add_argument("--json", action="store_true", help="Print one JSON document.")
    args = parser.parse_args()

    home = tempfile.mkdtemp(prefix="podium-bench-map-")
    atexit.register(shutil.rmtree, home, True)
    os.environ["PODIUM_HOME"] = home
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    import pyarrow as pa
    from signals_scale import child, load, progress
    from sklearn.metrics import adjusted_rand_score
    from topic_corpus import iter_topic_rows

    from podium.signals.store import signal_table_name
    from podium.store.read.read import iter_batches
    from podium.store.schema import SFT_ARROW_SCHEMA, SFT_SCHEMA
    from podium.store.write.write import write_batches

    chars = 0

    def batches() -> Any:
        nonlocal chars
        rows = iter_topic_rows(args.rows, k=args.topics, seed=args.seed, sentences=16)
        for at in range(0, args.rows, 5000):
            texts = [text for text, _ in itertools.islice(rows, 5000)]
            chars += sum(map(len, texts))
            yield pa.RecordBatch.from_pylist(
                [
                    {"id": f"r{i:08d}", "messages": [{"role": "user", "content": text}]}
                    for i, text in enumerate(texts, start=at)
                ],
                schema=SFT_ARROW_SCHEMA,
            )

    started, load_before = time.perf_counter(), load()
    write_batches("bench.map", batches(), schema=SFT_SCHEMA, mode="create")  # type: ignore[arg-type]
    report: dict[str, Any] = {
        "rows": args.rows,
        "topics": args.topics,
        "mean_chars": round(chars / max(1, args.rows)),
        "corpus": {
            "seconds": round(time.perf_counter() - started, 1),
            "load_before": load_before,
            "load_after": load(),
        },
        "stages": {},
    }
    progress({"corpus": report["corpus"]})
    config = {"topics": {"clusters": args.topics, "categories": max(1, args.topics // 2)}}
    for stage in ("embedding", "topics", "projection"):
        card = {"table": {"name": "bench.map"}, "signals": [stage], **config}
        ran = child(STAGE, [json.dumps(card)], env, args.timeout)
        if ran["returncode"] != 0:
            raise SystemExit(f"the {stage} stage failed: {ran['stderr']}")
        report["stages"][stage] = {k: v for k, v in ran.items() if k not in ("stdout", "stderr")}
        progress({stage: report["stages"][stage]})
    stages = report["stages"].values()
    report["seconds_total"] = round(sum(s["seconds"] for s in stages), 1)
    report["peak_rss_mb_stages"] = max(s["peak_rss_mb"] for s in stages)

    searched = child(SEARCH, [str(args.queries), str(args.seed)], env, args.timeout)
    if searched["returncode"] != 0:
        raise SystemExit(f"the search failed: {searched['stderr']}")
    report.update(json.loads(searched["stdout"]))
    report["search_peak_rss_mb"] = searched["peak_rss_mb"]

    # row r{i} came from topic i % K (topic_corpus's rule)
    truth: list[int] = []
    clusters: list[int] = []
    for batch in iter_batches(signal_table_name("bench.map", "topics"), columns=["id", "cluster"]):
        truth.extend(int(i[1:]) % args.topics for i in batch.column("id").to_pylist())
        clusters.extend(batch.column("cluster").to_pylist())
    report["adjusted_rand_index"] = round(float(adjusted_rand_score(truth, clusters)), 4)
    report["corpus"]["peak_rss_mb"] = round(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    )
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

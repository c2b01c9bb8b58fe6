"""Compare speed: a comparison whose samples exist, and ratings from many votes.

    python benchmarks/compare.py [--prompts 500] [--votes 10000] [--bootstrap 200]

In a temporary Podium home: two checkpoints whose samples of a prompt set already
exist (endpoints on a closed port, so any generation would fail), then
- `run_compare` (find the samples by key, check every answer with the json rule,
  write the comparison table) against the floor: reading both samples tables and
  writing one table of the same size;
- `ratings_report` (Bradley-Terry fit + bootstrap intervals) against one fit alone.
Printed as ratios against the baseline measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def _timed(fn):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompts", type=int, default=500)
    parser.add_argument("--votes", type=int, default=10_000)
    parser.add_argument("--bootstrap", type=int, default=200)
    args = parser.parse_args()
    os.environ["PODIUM_HOME"] = tempfile.mkdtemp(prefix="podium-bench-compare-")

    import compare_data
    import pyarrow as pa

    from podium.compare.job import CompareConfig, run_compare
    from podium.compare.ratings import _counts, bradley_terry, fit_bradley_terry
    from podium.reporting import Reporter
    from podium.store.read.read import clear_cache, read_arrow
    from podium.store.read.refs import TableRef
    from podium.store.schema import SFT_ARROW_SCHEMA
    from podium.store.write.write import write_table

    rows = [
        {"id": f"p{i}", "messages": [{"role": "user", "content": f"Colour {i} as JSON."}]}
        for i in range(args.prompts)
    ]
    write_table("evals.bench", pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA))
    models = [compare_data.register_dead("alpha"), compare_data.register_dead("omega")]
    cfg = CompareConfig(
        models=models, table=TableRef(name="evals.bench"), out="cmp.bench", checks=["json"]
    )
    answers = {f"p{i}": json.dumps({"colour": f"c{i}"}) for i in range(args.prompts)}
    for m in models:
        compare_data.write_samples(f"gen.{m}", m, "evals.bench", cfg, answers)

    clear_cache()
    compare_s, _ = _timed(lambda: run_compare(cfg, Reporter()))

    def floor() -> None:
        clear_cache()
        data = pa.concat_tables([read_arrow(f"gen.{m}")[0] for m in models])
        write_table("cmp.floor", data)

    floor_s, _ = _timed(floor)
    print(
        f"compare with existing samples ({args.prompts} prompts x 2): {compare_s:.2f} s; "
        f"read + write floor {floor_s:.2f} s; ratio {compare_s / floor_s:.1f}x"
    )

    rng = random.Random(0)
    votes = [
        (a, b, float(rng.random() < 0.6))
        for a, b in (rng.sample(range(4), 2) for _ in range(args.votes))
    ]
    names = ["a", "b", "c", "d"]
    one_s, _ = _timed(lambda: fit_bradley_terry(_counts(votes, 4)))
    full_s, _ = _timed(lambda: bradley_terry(names, votes, bootstrap=args.bootstrap))
    print(
        f"ratings from {args.votes} votes with {args.bootstrap} bootstraps: {full_s:.2f} s; "
        f"one fit {one_s * 1000:.1f} ms; ratio {full_s / one_s:.0f}x"
    )


if __name__ == "__main__":
    main()

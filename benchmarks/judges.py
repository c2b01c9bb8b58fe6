"""Judge verdicts on the demo data: how many parse with vLLM's guided decoding.

    python benchmarks/judges.py [--table demo.chat] [--limit N] [--answer-tokens 64]

In a temporary Podium home: the demo tables, the base model served by one real vLLM,
and the demo comparison: every prompt of `--table` answered by the base model and by
the table's own answers ("demo", its last assistant turn, written as a samples table).
Then the base model judges every pair in both orders (`podium judge run`'s function)
and this prints the verdicts that parsed, the problems of the rest, the verdict counts
and the mean request latency.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--table", default="demo.chat")
    parser.add_argument("--limit", type=int, default=None, help="First N prompts only.")
    parser.add_argument("--answer-tokens", type=int, default=64)
    parser.add_argument("--home", default=None, help="Reuse a Podium home (default: a new one).")
    args = parser.parse_args()
    os.environ["PODIUM_HOME"] = args.home or tempfile.mkdtemp(prefix="podium-bench-judges-")

    import compare_data

    from generators.prompts import load_prompts
    from podium.compare.job import CompareConfig, run_compare
    from podium.compare.judge import JudgeConfig, list_verdicts, run_judge
    from podium.models.bootstrap import bootstrap
    from podium.models.serving import ensure_server, stop_server
    from podium.reporting import Reporter
    from podium.store.catalog.catalog import table_exists
    from podium.store.read.read import read_small
    from podium.store.read.refs import TableRef
    from podium.store.write.demo import load_demo

    load_demo()
    base = bootstrap().name
    ensure_server(base)
    try:
        demo = compare_data.register_dead("demo")
        cfg = CompareConfig(
            models=[base, demo],
            table=TableRef(name=args.table),
            out="cmp.demo",
            max_tokens=args.answer_tokens,
            limit=args.limit,
            stop_servers=False,
        )
        if not table_exists("cmp.demo"):
            prompts = {p.prompt_id for p in load_prompts(cfg.table, limit=args.limit)[0]}
            rows = read_small(args.table)[0].to_pylist()
            answers = {
                r["id"]: [m for m in r["messages"] if m["role"] == "assistant"][-1]["content"]
                for r in rows
                if r["id"] in prompts and any(m["role"] == "assistant" for m in r["messages"])
            }
            compare_data.write_samples("gen.demo", demo, args.table, cfg, answers)
            start = time.perf_counter()
            run_compare(cfg, Reporter())
            print(f"comparison: {len(prompts)} prompts in {time.perf_counter() - start:.0f} s")
        start = time.perf_counter()
        summary = run_judge(JudgeConfig(comparison="cmp.demo", judge=base), Reporter()).summary
        seconds = time.perf_counter() - start
    finally:
        stop_server(base)
    rows = list_verdicts("cmp.demo", base)
    parsed = [r for r in rows if r["verdict"] != "unparsed"]
    problems = collections.Counter(r["problem"] for r in rows if r["problem"])
    print(json.dumps(summary, indent=2, default=str))
    print(
        f"{len(parsed)} of {len(rows)} pairs parsed in both orders "
        f"({100 * len(parsed) / max(len(rows), 1):.1f}%), {2 * len(rows)} requests "
        f"in {seconds:.0f} s"
    )
    reasons = [len(r[k] or "") for r in rows for k in ("reason_ab", "reason_ba")]
    print(f"reason length: mean {sum(reasons) / max(len(reasons), 1):.0f}, max {max(reasons)}")
    for problem, count in problems.most_common(10):
        print(f"{count:5d}  {problem[:200]}")


if __name__ == "__main__":
    main()

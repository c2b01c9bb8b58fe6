"""Validation throughput against a bare `orjson.loads` loop over the same strings.

    .venv/bin/python benchmarks/validate.py                 # 1M assistant turns
    .venv/bin/python benchmarks/validate.py --n 100000      # quicker
    .venv/bin/python benchmarks/validate.py --table-rows 0  # skip the whole-table runs

Measures, in one run over the same synthetic turns (0.1% malformed):
- the bare loop: `orjson.loads` on every string, catching errors;
- `json` and `json-schema` through `podium.validate.batch.check_texts`, the loop every
  table run uses (the schema is the demo's: 5 properties, required, no extras);
- whole-table runs (`validate_table`: Iceberg scan, check, report write) with one
  process and with one per core, for json + json-schema and for the costlier `python`
  rule, to show what worker processes buy.
Each figure is the best of `--repeat` passes. Targets: json >= 0.5x the bare loop;
json-schema >= 20k samples/s. `--check` exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable

import orjson


def make_texts(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    names = ["Alice Silva", "Chen Wang", "Dara Okafor", "Elif Yilmaz", "Hiro Tanaka"]
    skills = ["Python", "SQL", "Rust", "Go", "CUDA", "React"]
    texts = []
    for i in range(n):
        record = {
            "name": rng.choice(names),
            "age": rng.randint(18, 80),
            "email": f"user{i}@example.org",
            "city": rng.choice(["Lisbon", "Osaka", "Lima"]),
            "skills": rng.sample(skills, rng.randint(1, 3)),
        }
        text = json.dumps(record, indent=2) if i % 2 else json.dumps(record)
        if i % 1000 == 7:
            text = text[: len(text) // 2]  # truncated
        elif i % 1000 == 11:
            record["age"] = str(record["age"])
            text = json.dumps(record)
        texts.append(text)
    return texts


def best_rate(n: int, run: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return n / best


def bare_loop(texts: list[str]) -> int:
    loads, error, bad = orjson.loads, orjson.JSONDecodeError, 0
    for text in texts:
        try:
            loads(text)
        except error:
            bad += 1
    return bad


def _write_turns(name: str, texts: list[str], properties: dict[str, str]) -> None:
    import pyarrow as pa

    from podium.store.write.write import write_table

    data = pa.table(
        {
            "id": [f"r{i}" for i in range(len(texts))],
            "messages": [
                [{"role": "user", "content": "go"}, {"role": "assistant", "content": t}]
                for t in texts
            ],
        }
    )
    write_table(name, data, properties=properties)


def table_runs(rows: int, repeat: int) -> list[tuple[str, float, str]]:
    """Rows/s of whole-table runs with 1 process and with one per core."""
    os.environ["PODIUM_HOME"] = tempfile.mkdtemp(prefix="podium-bench-")
    from podium.config import reset_settings
    from podium.store.read.refs import TableRef
    from podium.store.write.demo import DEMO_JSON_SCHEMA
    from podium.validate.job import ValidateConfig, validate_table
    from podium.validate.parallel import available_cores

    reset_settings()
    _write_turns(
        "bench.json", make_texts(rows, seed=1), {"podium.json_schema": json.dumps(DEMO_JSON_SCHEMA)}
    )
    code_rows = max(1, rows // 4)
    code = [f"def f{i}(x):\n    return [i * {i} for i in range(x)]\n" for i in range(code_rows)]
    _write_turns("bench.code", code, {})
    out = []
    for table, rules, n in (
        ("bench.json", ["json", "json-schema"], rows),
        ("bench.code", ["python"], code_rows),
    ):
        for workers in sorted({1, available_cores()}):
            config = ValidateConfig(table=TableRef(name=table), rules=rules, workers=workers)
            rate = best_rate(n, lambda c=config: validate_table(c), repeat)
            label = f"table {'+'.join(rules)}, {workers} proc"
            out.append((label, rate, f"{n:,} rows, scan + check + report"))
    return out


def line(label: str, rate: float, unit: str, note: str) -> None:
    print(f"  {label:<26} {rate:>12,.0f} {unit:<10} {note}")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--n", type=int, default=1_000_000, help="assistant turns")
    parser.add_argument("--repeat", type=int, default=3, help="passes; the best counts")
    parser.add_argument("--table-rows", type=int, default=200_000, help="rows for table runs")
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args()

    from podium.store.write.demo import DEMO_JSON_SCHEMA
    from podium.validate.batch import Plan, check_texts
    from podium.validate.rules import parse_rules

    texts = make_texts(args.n)
    props = {"podium.json_schema": json.dumps(DEMO_JSON_SCHEMA)}
    json_plan = Plan.of(parse_rules(["json"]))
    schema_plan = Plan.of(parse_rules(["json-schema"], props))
    bare = best_rate(args.n, lambda: bare_loop(texts), args.repeat)
    json_rate = best_rate(args.n, lambda: check_texts(json_plan, texts), args.repeat)
    schema_rate = best_rate(args.n, lambda: check_texts(schema_plan, texts), args.repeat)
    failures = len(check_texts(schema_plan, texts))

    print(
        f"validate benchmark: {args.n:,} assistant turns, {failures:,} failing, "
        f"{os.cpu_count()} cores, best of {args.repeat}"
    )
    line("bare orjson.loads loop", bare, "samples/s", "1.00x")
    line("rule json", json_rate, "samples/s", f"{json_rate / bare:.2f}x bare")
    line("rule json-schema", schema_rate, "samples/s", f"{schema_rate / bare:.2f}x bare")
    if args.table_rows:
        for label, rate, note in table_runs(args.table_rows, min(args.repeat, 2)):
            line(label, rate, "rows/s", note)
    json_ok, schema_ok = json_rate >= 0.5 * bare, schema_rate >= 20_000
    print(f"target json >= 0.5x bare: {'met' if json_ok else 'MISSED'} ({json_rate / bare:.2f}x)")
    print(f"target json-schema >= 20k/s: {'met' if schema_ok else 'MISSED'} ({schema_rate:,.0f}/s)")
    return 1 if args.check and not (json_ok and schema_ok) else 0


if __name__ == "__main__":
    sys.exit(main())

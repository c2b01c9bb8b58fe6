"""Local vs Ray on this machine, same work, one run: generation and code-exec builds.

    python benchmarks/ray_generate.py [--prompts 48] [--max-tokens 64] [--replicas 2]
    python benchmarks/ray_generate.py --build --functions 1000 [--nodes 2] [--skip-local]

Starts a private Ray head (`ray start --head --block`, loopback, 2 CPUs) and a temporary
Podium home; runs the same greedy `generate` card twice through the CLI: `local` (the
job in this process, one vLLM server) and `ray` (`--launcher ray --replicas N`: the job
as a Ray job, N vLLM replicas as Ray actors, shards pulled from a shared queue, one
commit). Figures are completion tokens per second of the job's own generation wall
time (from its summary) and the command's wall time (vLLM start-up included).
`--build`: a greedy code-exec build of `--functions` distinct small functions
(`generators/code_exec/pipeline_functions.py`), locally (one sandbox pool in the job)
and with `--replicas N` on Ray; functions and sandbox runs per second of the
command's wall time (the vLLM server is started beforehand and shared by both), the
job's own split of its time (proposing vs sandboxes), and whether both builds wrote
the same rows (it exits non-zero when they differ). Everything it started is stopped
at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from podium import processes
from podium.config import reset_settings
from podium.models import get_model
from podium.models.serving import ensure_server, stop_server
from podium.models.vllm_launch import free_port
from podium.store.write.write import write_table


def _podium(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "podium.cli", *args], env=env, capture_output=True, text=True
    )
    if result.returncode:
        raise SystemExit(f"podium {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


def _summary(env: dict[str, str]) -> dict[str, Any]:
    jobs = json.loads(_podium(env, "jobs", "--json").stdout)
    return dict(jobs[0]["outputs"]["summary"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompts", type=int, default=48)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--build", action="store_true", help="Benchmark code-exec builds.")
    parser.add_argument("--functions", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=100, help="Functions per batch.")
    parser.add_argument("--skip-local", action="store_true")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="podray-bench-", dir="/tmp"))
    env = {**os.environ, "PODIUM_HOME": str(tmp / "home"), "RAY_USAGE_STATS_ENABLED": "0"}
    venv_bin = str(Path(sys.executable).parent)
    env["PATH"] = f"{venv_bin}:{env.get('PATH', '')}"
    dash = free_port()
    head = processes.spawn(
        [f"{venv_bin}/ray", "start", "--head", "--block", "--num-cpus=2",
         "--node-ip-address=127.0.0.1", f"--port={free_port()}", "--include-dashboard=true",
         "--dashboard-host=127.0.0.1", f"--dashboard-port={dash}", f"--temp-dir={tmp}",
         "--disable-usage-stats"],
        env=env,
        stdout=(tmp / "head.log").open("ab"),
    )  # fmt: skip
    try:
        address = f"http://127.0.0.1:{dash}"
        processes.wait_until(lambda: _up(address), head, 120)
        env["PODIUM_RAY_ADDRESS"] = address
        _podium(env, "models", "bootstrap")
        if args.build:
            _bench_build(env, args)
        else:
            _bench_generate(env, tmp, args)
    finally:
        processes.stop(head, grace_s=30)


def _bench_generate(env: dict[str, str], tmp: Path, args: argparse.Namespace) -> None:
    data = tmp / "prompts.jsonl"
    with data.open("w") as fh:
        for i in range(args.prompts):
            msg = [{"role": "user", "content": f"Write a short story about the number {i}."}]
            fh.write(json.dumps({"messages": msg}) + "\n")
    _podium(env, "import", str(data), "--table", "b.prompts")
    common = ["generate", "--model", "base", "--table", "b.prompts", "--temperature", "0",
              "--max-tokens", str(args.max_tokens), "--batch-size", "4"]  # fmt: skip
    rows: list[tuple[str, float, float, float]] = []
    for label, extra in (
        ("local, 1 server", []),
        (
            f"ray, {args.replicas} replicas",
            ["--launcher", "ray", "--replicas", str(args.replicas)],
        ),
    ):
        began = time.perf_counter()
        _podium(env, *common, "--out", f"b.out{len(rows)}", *extra)
        wall = time.perf_counter() - began
        summary = _summary(env)
        rows.append((label, summary["tokens_per_s"], summary["completion_tokens"], wall))
        _podium(env, "models", "stop", str(summary["checkpoint"]))  # the next starts cold too
    print(f"{args.prompts} prompts x {args.max_tokens} tokens, greedy, batch 4")
    print("| method | gen tokens/s | completion tokens | command wall s |")
    print("|---|---|---|---|")
    for label, tps, tokens, wall in rows:
        print(f"| {label} | {tps:.1f} | {tokens:.0f} | {wall:.0f} |")
    print(f"ratio ray/local (gen tokens/s): {rows[1][1] / rows[0][1]:.2f}x")


BUILD_KEY = ("id", "function_id", "input", "output", "status")


def _bench_build(env: dict[str, str], args: argparse.Namespace) -> None:
    import pyarrow as pa

    from generators.code_exec.demo_functions import FUNCTIONS_ARROW_SCHEMA
    from generators.code_exec.pipeline_functions import pipeline_function_rows
    from podium.store.catalog.catalog import load_table
    from podium.store.read.read import iter_batches

    fns = pipeline_function_rows(args.functions)
    os.environ.update(env)  # this process writes the functions table into the same home
    reset_settings()
    write_table("b.fns", pa.Table.from_pylist(fns, schema=FUNCTIONS_ARROW_SCHEMA))
    ensure_server("base")  # one server, started once, shared by both builds
    # All of a batch's proposal requests in flight at once: vLLM's continuous batching
    # serves them together (64 streams gave ~2x the functions/s of 16 here), and short
    # answers (one input, 32 tokens) keep a rambling greedy answer from costing more.
    common = ["build", "code-exec", "--table", "b.fns", "--model", "base",
              "--temperature", "0", "--inputs-per-function", "1", "--max-tokens", "32",
              "--concurrency", "64", "--backend", "local", "--workers", "2",
              "--batch-size", str(args.batch_size)]  # fmt: skip
    runs: list[tuple[str, str, float, dict[str, Any]]] = []
    methods: list[tuple[str, list[str]]] = (
        [("local, 1 sandbox pool", [])] if not args.skip_local else []
    )
    methods.append(
        (
            f"ray, {args.nodes} sandbox nodes",
            ["--launcher", "ray", "--replicas", str(args.nodes)],
        )
    )
    print(f"load average before: {os.getloadavg()}", flush=True)
    for label, extra in methods:
        out = f"b.cx{len(runs)}"
        began = time.perf_counter()
        _podium(env, *common, "--out", out, *extra)
        wall = time.perf_counter() - began
        runs.append((label, out, wall, _summary(env)))
        print(f"{label}: {wall:.0f} s, load average {os.getloadavg()}", flush=True)
    print(f"code-exec build, {args.functions} functions, 1 greedy input each")
    print(
        "| method | functions/s | sandbox runs/s | wall s | propose s | sandbox s | runs | rows "
        "| snapshots |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    sets = []
    for label, out, wall, summary in runs:
        # Every row, read here (`podium sql` shows a page of 100).
        rows = [r for b in iter_batches(out, columns=list(BUILD_KEY)) for r in b.to_pylist()]
        sets.append({tuple(r[k] for k in BUILD_KEY) for r in rows})
        runs_n = summary["sandbox_runs"]
        print(
            f"| {label} | {args.functions / wall:.2f} | {runs_n / wall:.2f} | {wall:.0f} | "
            f"{summary['propose_s']:.0f} | {summary['sandbox_s']:.1f} | {runs_n} | {len(rows)} |"
            f" {len(load_table(out).snapshots())} |"
        )
    if len(runs) == 2:
        ratio = runs[0][2] / runs[1][2]
        print(f"ratio ray/local (functions/s): {ratio:.2f}x")
        print(f"same rows ({', '.join(BUILD_KEY)}): {sets[0] == sets[1]}")
    stop_server(get_model("base").name)
    if len(sets) == 2 and sets[0] != sets[1]:
        raise SystemExit(f"the builds differ in {len(sets[0] ^ sets[1])} rows")


def _up(address: str) -> bool:
    try:
        return httpx.get(f"{address}/api/version", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


if __name__ == "__main__":
    main()

"""Local vs Ray on this machine, same work, one run: generation and code-exec builds.

    python benchmarks/ray_generate.py [--prompts 48] [--max-tokens 64] [--replicas 2]
    python benchmarks/ray_generate.py --build --functions 1000 [--nodes 2] [--skip-local]

Starts a private Ray head (`ray start --head --block`, loopback, 2 CPUs) and a temporary
Podium home; runs the same greedy `generate` card twice through the CLI: `local` (the
job in this process, one vLLM server) and `ray` (`--launcher ray --replicas N`: the job
as a Ray job, N vLLM replicas as Ray actors, shards pulled from a shared queue, one
commit). Figures are completion tokens per second of the job's own generation wall
time (from its summary) and the command's wall time (vLLM start-up included).
`--build`: a greedy code-exec build of `--functions` small functions, locally (one
sandbox pool in the job) and with `--sandbox-nodes N` on Ray; functions per second of
the command's wall time (the vLLM server is started beforehand and shared), and
whether both builds produced the same rows. Everything it started is stopped at the end.
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
from podium.store.write import write_table


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
    rows = []
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


def _bench_build(env: dict[str, str], args: argparse.Namespace) -> None:
    import pyarrow as pa

    codes = [f"def f{i}(n):\n    return n * {i % 7 + 1} + {i % 3}" for i in range(args.functions)]
    table = pa.table(
        {
            "id": [f"fn{i:05d}" for i in range(args.functions)],
            "code": codes,
            "entry_point": [f"f{i}" for i in range(args.functions)],
        }
    )
    os.environ.update(env)  # this process writes the functions table into the same home
    reset_settings()
    write_table("b.fns", table)
    ensure_server("base")  # one server, started once, shared by both builds
    common = ["build", "code-exec", "--functions", "b.fns", "--model", "base",
              "--temperature", "0", "--inputs-per-function", "1", "--max-tokens", "24",
              "--backend", "local", "--batch-size", "50"]  # fmt: skip
    runs = []
    methods = [("local, 1 sandbox pool", [])] if not args.skip_local else []
    methods.append(
        (
            f"ray, {args.nodes} sandbox nodes",
            ["--launcher", "ray", "--sandbox-nodes", str(args.nodes)],
        )
    )
    for label, extra in methods:
        began = time.perf_counter()
        _podium(env, *common, "--out", f"b.cx{len(runs)}", *extra)
        runs.append((label, f"b.cx{len(runs)}", time.perf_counter() - began))
    print(f"code-exec build, {args.functions} functions, 1 greedy input each")
    print("| method | functions/s | wall s | rows |")
    print("|---|---|---|---|")
    sets = []
    for label, out, wall in runs:
        rows = json.loads(
            _podium(env, "sql", f"SELECT id, input, output, status FROM {out}", "--json").stdout
        )
        sets.append({json.dumps(r, sort_keys=True) for r in rows})
        print(f"| {label} | {args.functions / wall:.2f} | {wall:.0f} | {len(rows)} |")
    if len(sets) == 2:
        print(f"same rows: {sets[0] == sets[1]}")
    stop_server(get_model("base").name)


def _up(address: str) -> bool:
    try:
        return httpx.get(f"{address}/api/version", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


if __name__ == "__main__":
    main()

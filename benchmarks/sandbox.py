"""Sandbox throughput: executions/s of 1,000 CRUXEval-sized function calls per backend.

    .venv/bin/python benchmarks/sandbox.py [--calls 1000] [--workers N] [--skip-docker]

Each call is one demo function (`generators.code_exec.demo_functions`) run with its
example input through the same harness a code-exec build uses. Three pools run the
same calls in the same process, interleaved, best of 3 rounds: `bare` (the same fork server as a
plain process: no namespaces, no limits: the baseline), `local` (bubblewrap workers)
and `docker` (warm containers; a private dockerd is started when DOCKER_HOST is unset
and we are root). Printed: executions/s and the ratio to the bare baseline. Targets
(issue 6): local >= 100/s and >= 0.8x bare.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generators.code_exec.demo_functions import demo_function_rows, example_args  # noqa: E402
from generators.code_exec.harness import program  # noqa: E402
from generators.sandbox import Job, Sandbox  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
WARMUP = 20


def calls(n: int) -> list[Job]:
    rows = demo_function_rows()
    return [
        Job(program(row["code"], row["entry_point"], example_args(row)))
        for row in (rows[i % len(rows)] for i in range(n))
    ]


def timed(box: Sandbox, jobs: list[Job]) -> tuple[float, list[str], set[str]]:
    start = time.perf_counter()
    results = box.run_many(jobs)
    elapsed = time.perf_counter() - start
    return elapsed, [r.stdout for r in results], {r.status for r in results}


def measure(pools: dict[str, Sandbox], jobs: list[Job], rounds: int) -> list[dict[str, object]]:
    """Best of `rounds` per backend, the backends interleaved within each round so that
    load from other processes on the machine hits them alike."""
    for box in pools.values():
        box.run_many(jobs[:WARMUP])
    best: dict[str, float] = {}
    outputs: dict[str, list[str]] = {}
    statuses: dict[str, set[str]] = {}
    for _ in range(rounds):
        for name, box in pools.items():
            elapsed, outputs[name], seen = timed(box, jobs)
            best[name] = min(best.get(name, elapsed), elapsed)
            statuses[name] = statuses.get(name, set()) | seen
    return [
        {
            "backend": name,
            "calls": len(jobs),
            "seconds": round(best[name], 3),
            "per_s": round(len(jobs) / best[name], 1),
            "statuses": sorted(statuses[name]),
            "outputs": outputs[name],
        }
        for name in pools
    ]


def docker_options(stack: ExitStack) -> dict[str, object] | None:
    if os.environ.get("DOCKER_HOST"):
        return {}
    if os.geteuid() != 0:
        return None
    from generators.sandbox.dockerd import PrivateDockerd, sweep_dead_engines

    base = REPO / ".cache" / "dockerd"
    sweep_dead_engines(base)
    engine = PrivateDockerd(base / f"bench{os.getpid()}")
    stack.callback(shutil.rmtree, engine.root, ignore_errors=True)
    stack.enter_context(engine)
    return {"base_url": engine.host}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--rounds", type=int, default=3, help="Best of this many runs.")
    parser.add_argument("--skip-docker", action="store_true")
    parser.add_argument("--json", action="store_true", help="Print the figures as JSON.")
    opts = parser.parse_args()
    jobs = calls(opts.calls)
    with ExitStack() as stack:
        pools = {
            "bare": stack.enter_context(Sandbox("bare", workers=opts.workers)),
            "local": stack.enter_context(Sandbox("local", workers=opts.workers)),
        }
        docker = None if opts.skip_docker else docker_options(stack)
        if docker is not None:
            pools["docker"] = stack.enter_context(
                Sandbox("docker", workers=opts.workers, **docker)  # type: ignore[arg-type]
            )
        figures = measure(pools, jobs, opts.rounds)
    baseline = figures[0]
    same = all(f["outputs"] == baseline["outputs"] for f in figures)
    for f in figures:
        f["ratio_to_bare"] = round(float(f["per_s"]) / float(baseline["per_s"]), 2)  # type: ignore[arg-type]
        f.pop("outputs")
    local = next(f for f in figures if f["backend"] == "local")
    targets = {
        "local_at_least_100_per_s": float(local["per_s"]) >= 100,  # type: ignore[arg-type]
        "local_at_least_0.8x_bare": float(local["ratio_to_bare"]) >= 0.8,  # type: ignore[arg-type]
        "identical_outputs": same,
    }
    if opts.json:
        print(json.dumps({"workers": opts.workers, "figures": figures, "targets": targets}))
    else:
        print(
            f"{opts.calls} calls, {opts.workers} workers, CPUs: {os.cpu_count()}, "
            f"best of {opts.rounds} interleaved rounds"
        )
        print(f"{'backend':8} {'calls/s':>9} {'seconds':>8} {'x bare':>7}  statuses")
        for f in figures:
            print(
                f"{f['backend']:8} {f['per_s']:>9} {f['seconds']:>8} {f['ratio_to_bare']:>7}  "
                f"{','.join(f['statuses'])}"
            )  # type: ignore[arg-type]
        for name, ok in targets.items():
            print(f"target {name}: {'met' if ok else 'NOT met'}")
    return 0 if all(targets.values()) else 1


if __name__ == "__main__":
    sys.exit(main())

"""What the job system costs, against baselines measured in the same run.

    .venv/bin/python benchmarks/jobs_overhead.py            # ~1 minute
    .venv/bin/python benchmarks/jobs_overhead.py --jobs 3 --units 20000

- Reporting: a loop of `--units` units that each call `progress()` and
  `check_cancelled()`, with the bare `Reporter` (baseline) and with the worker's
  `JobReporter` (throttled writes to the state DB); also `metric()` calls per second.
- Launch: wall time from `submit` to `succeeded` for an empty job run by a live
  `podium worker` (claim, new process group, imports, DB records), against starting a
  bare `python -c pass` (baseline) and a `python -c "import podium.jobs.execute"`.
Runs in a throwaway PODIUM_HOME; prints ratios.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel

from podium.jobs.kinds import JobKind, register
from podium.reporting import JobOutputs, Reporter


class NoopConfig(BaseModel):
    """No fields: the job does nothing, so its wall time is pure overhead."""


def run_noop(config: NoopConfig, reporter: Reporter) -> JobOutputs:
    reporter.progress(1, 1, "done")
    return JobOutputs()


register(JobKind("bench-noop", f"{__name__}:NoopConfig", f"{__name__}:run_noop", "Nothing."))


def loop(reporter: Reporter, units: int) -> float:
    start = time.perf_counter()
    for i in range(units):
        reporter.progress(i + 1, units, "unit")
        reporter.check_cancelled()
    return units / (time.perf_counter() - start)


def bench_reporting(units: int) -> None:
    from podium.jobs.cards import parse_card
    from podium.jobs.queue import create_job, get_job
    from podium.jobs.reporter import JobReporter

    bare = loop(Reporter(), units)
    job_id = create_job(parse_card("---\nkind: bench-noop\n---\n"), status="running")
    with JobReporter(job_id, get_job(job_id)["log_path"]) as reporter:
        db = loop(reporter, units)
        n = 200
        start = time.perf_counter()
        for step in range(n):
            reporter.metric(step, {"loss": 1.0, "lr": 0.1})
        metrics = n / (time.perf_counter() - start)
    print(
        f"reporting: bare Reporter {bare:,.0f} units/s, JobReporter {db:,.0f} units/s "
        f"({db / bare:.2f}x of bare); metric() {metrics:,.0f} calls/s (2 values each)"
    )


def timed_subprocess(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def bench_launch(jobs: int) -> None:
    from podium.jobs.cards import parse_card
    from podium.jobs.launch import submit
    from podium.jobs.queue import get_job

    bare = min(timed_subprocess("pass") for _ in range(3))
    imports = min(timed_subprocess("import podium.jobs.execute") for _ in range(3))
    worker = subprocess.Popen(
        [sys.executable, "-m", "podium.cli", "worker", "--poll", "0.05"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        times = []
        for _ in range(jobs + 1):  # the first one also waits for the worker to start
            start = time.perf_counter()
            job_id = submit(parse_card("---\nkind: bench-noop\n---\n"))
            while get_job(job_id)["status"] not in ("succeeded", "failed"):
                time.sleep(0.02)
            assert get_job(job_id)["status"] == "succeeded", get_job(job_id)["error"]
            times.append(time.perf_counter() - start)
        job = min(times[1:])
    finally:
        worker.terminate()
        worker.wait()
    print(
        f"launch: python -c pass {bare:.3f}s, import podium.jobs.execute {imports:.3f}s, "
        f"submit->succeeded via worker {job:.3f}s ({job / bare:.1f}x bare python, "
        f"{job / imports:.1f}x the imports)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=50_000)
    parser.add_argument("--jobs", type=int, default=5)
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="podium-bench-jobs-")
    os.environ.update(
        PODIUM_HOME=home,
        PODIUM_JOB_PLUGINS=Path(__file__).stem,
        PYTHONPATH=os.pathsep.join(
            filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")])
        ),
    )
    sys.modules.setdefault(Path(__file__).stem, sys.modules[__name__])
    bench_reporting(args.units)
    bench_launch(args.jobs)


if __name__ == "__main__":
    main()

"""Small job kinds for the job-system tests, loaded through PODIUM_JOB_PLUGINS.

`test-steps` does `steps` units of `sleep` seconds each, reporting progress, a metric
and a sample per step, checking for cancel, then (if `table` is set) writes one table
with the job's lineage. `fail_at` makes it raise at that step, after logging.
"""

from __future__ import annotations

import atexit
import signal
import subprocess
import sys
import threading
import time

import pyarrow as pa
from pydantic import BaseModel, Field

from podium.jobs.kinds import JobKind, register
from podium.reporting import JobOutputs, Reporter
from podium.store.catalog.catalog import table_exists
from podium.store.catalog.table_name import TableName
from podium.store.read.refs import TableRef
from podium.store.write.write import write_table


class StepsConfig(BaseModel):
    steps: int = Field(3, ge=1, description="Units of work.")
    sleep: float = Field(0.0, ge=0, description="Seconds per unit.")
    table: TableName | None = Field(None, description="Table to write at the end (NS.NAME).")
    write_first: bool = Field(
        False,
        description="Write the table before the steps (a cancel then leaves it; a second "
        "run appends to it).",
    )
    source: TableRef | None = Field(None, description="An input table (only recorded).")
    fail_at: int | None = Field(None, description="Raise at this step.")
    outage_at: int | None = Field(
        None, description="Raise at this step what SQLite raises when its database went away."
    )
    keep: str | None = Field(
        None, description="Kept in the job's record however it ends (`Reporter.keep`)."
    )
    mode: str = Field("fast", description="Free label.")
    warn: str | None = Field(None, description="A warning to report after the first step.")
    nan_at: int | None = Field(None, description="Report a NaN loss at this step.")
    helper: bool = Field(
        False,
        description="Start a process in the job's group that stands in for a private Ray's "
        "agent (its command line says ray::).",
    )
    linger: bool = Field(
        False,
        description="Keep the process alive after the job has ended, deaf to SIGTERM (a "
        "library's exit handler stuck in C).",
    )
    slow_exit: bool = Field(
        False,
        description="Leave a thread the interpreter's teardown would wait for (as torch's "
        "and TRL's teardown held a training job's process for seconds).",
    )


def run_steps(config: StepsConfig, reporter: Reporter) -> JobOutputs:
    if config.helper:
        stand_in = ["import time; time.sleep(600)", "ray::RuntimeEnvAgent"]
        helper = subprocess.Popen([sys.executable, "-c", *stand_in])
        reporter.log(f"helper pid {helper.pid}")
    if config.table and config.write_first:  # a second run appends, as a resume does
        first = not table_exists(config.table)
        write_table(
            config.table,
            pa.table({"step": [0]}),
            mode="create" if first else "append",
            properties=reporter.lineage if first else None,
        )
    if config.keep is not None:
        reporter.keep("where", config.keep)
    for step in range(config.steps):
        reporter.check_cancelled()
        if config.fail_at is not None and step == config.fail_at:
            reporter.log(f"about to fail at step {step}")
            raise RuntimeError(f"planted failure at step {step}")
        if config.outage_at is not None and step == config.outage_at:
            import sqlite3

            raise sqlite3.OperationalError("unable to open database file")
        time.sleep(config.sleep)
        loss = float("nan") if step == config.nan_at else 1.0 / (step + 1)
        reporter.metric(step, {"loss": loss})
        reporter.sample(step, {"text": f"sample {step}"})
        reporter.progress(step + 1, config.steps, f"step {step + 1}")
        reporter.log(f"step {step + 1}/{config.steps}")
        if config.warn and step == 0:
            reporter.warn(config.warn)
    outputs = JobOutputs(summary={"steps": config.steps})
    if config.table and not config.write_first:
        data = pa.table({"step": list(range(config.steps))})
        write_table(config.table, data, mode="create", properties=reporter.lineage)
    if config.table:
        outputs.tables.append(config.table)
    if config.linger:
        atexit.register(_deaf_sleep)
    if config.slow_exit:
        threading.Thread(target=time.sleep, args=(600,), name="teardown").start()
    return outputs


def _deaf_sleep() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(600)


register(JobKind("test-steps", f"{__name__}:StepsConfig", f"{__name__}:run_steps", "Test steps."))
register(
    JobKind(
        "test-steps-resumable",
        f"{__name__}:StepsConfig",
        f"{__name__}:run_steps",
        "Test steps that can be resumed.",
        resumable=True,
    )
)
register(
    JobKind(
        "test-steps-heavy",
        f"{__name__}:StepsConfig",
        f"{__name__}:run_steps",
        "Test steps in the heavy lane, like training.",
        heavy=True,
    )
)


class NoisyConfig(BaseModel):
    requests: int = Field(3, ge=1, description="HTTP requests to a local server.")


def run_noisy(config: NoisyConfig, reporter: Reporter) -> JobOutputs:
    """What libraries do inside real jobs: an HTTP request per sample (httpx, as the
    vLLM client does) and a tqdm bar (datasets, checkpoint shards, TRL)."""
    import http.server
    import threading

    import httpx
    from tqdm import tqdm

    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    for _ in tqdm(range(config.requests), desc="requests"):
        httpx.get(url, timeout=10)
    server.shutdown()
    reporter.log(f"made {config.requests} requests")
    return JobOutputs()


register(JobKind("test-noisy", f"{__name__}:NoisyConfig", f"{__name__}:run_noisy", "Noisy."))


class SamplingConfig(BaseModel):
    """Like a generation: `rows` values drawn from `seed` (unset: drawn when pinned)."""

    rows: int = Field(4, ge=1, description="Values to draw.")
    table: TableName = Field(description="Table to write (NS.NAME).")
    seed: int | None = Field(None, description="Sampling seed.")


def run_sampling(config: SamplingConfig, reporter: Reporter) -> JobOutputs:
    import random

    rng = random.Random(config.seed)  # None: from the OS, as an unseeded sampler would
    data = pa.table(
        {
            "id": [f"r{i}" for i in range(config.rows)],
            "value": [rng.random() for _ in range(config.rows)],
        }
    )
    write_table(config.table, data, mode="create", properties=reporter.lineage)
    return JobOutputs(tables=[config.table])


register(
    JobKind("test-sampling", f"{__name__}:SamplingConfig", f"{__name__}:run_sampling", "Samples.")
)


PREFLIGHT_LOG = "preflights.log"  # in the home: one line per preflight of `test-counted`


def count_preflight(config: StepsConfig) -> StepsConfig:
    """A preflight that leaves a line in the home each time it runs (in whichever process
    it runs), so a test can count how often one submission is checked."""
    from podium.config import get_settings

    with (get_settings().home / PREFLIGHT_LOG).open("a", encoding="utf-8") as log:
        log.write(f"{config.steps}\n")
    return config


register(
    JobKind(
        "test-counted",
        f"{__name__}:StepsConfig",
        f"{__name__}:run_steps",
        "Test steps whose preflight counts its runs.",
        preflight_path=f"{__name__}:count_preflight",
    )
)

"""How long work reports progress, metrics and logs, and learns it was cancelled.

Library code (import, validation, generation, training) takes a `Reporter` and never
knows whether it runs under the CLI (a rich progress bar), the worker (rows in the
state database) or a test (`Reporter()` records nothing). This sits at the bottom
layer so that every package can use it without importing `podium.jobs`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from podium.errors import Cancelled

log = logging.getLogger("podium")

# Libraries that log every migration plugin (alembic) or HTTP request (httpx, to vLLM)
# at INFO: in a job's log or `podium up`'s output they buried what the job said.
QUIET_LOGGERS = ("alembic", "httpx", "httpcore", "urllib3", "filelock")
# Progress bars (tqdm: datasets' map, checkpoint shards, TRL's steps) written to a log
# file are one line per redraw; the job's own progress is in the Logbook.
QUIET_ENV = {
    "TQDM_DISABLE": "1",
    "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
}


def quiet_libraries() -> None:
    """For processes whose output is a log people read (a job, `podium up`): library
    INFO chatter to WARNING, progress bars off (here and in the processes it starts)."""
    for name, value in QUIET_ENV.items():
        os.environ.setdefault(name, value)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)


class Reporter:
    """Base reporter: does nothing but keep lineage and answer "not cancelled"."""

    def __init__(self, lineage: Mapping[str, str] | None = None) -> None:
        # Properties written on every table this work creates (job id, card, inputs).
        self.lineage: dict[str, str] = dict(lineage or {})
        # What a run stopped part-way left registered (`stopped_with`), for its job's record.
        self.partial_outputs: JobOutputs | None = None
        # Facts the job's record keeps however the run ends (`keep`).
        self.kept: dict[str, Any] = {}

    def progress(self, done: int, total: int | None = None, message: str = "") -> None:
        """Report that `done` of `total` units are finished."""

    def phase(self, message: str) -> None:
        """Say what the work is doing while it has nothing to count (starting a server,
        evaluating); the last count stays. Never a number dressed as a count."""

    def metric(self, step: int, values: Mapping[str, float]) -> None:
        """Record numeric metrics (loss, reward, tokens/s) at a step."""

    def sample(self, step: int, values: Mapping[str, Any]) -> None:
        """Record an example output (a completion, a failing row) worth showing."""

    def warn(self, message: str) -> None:
        """Say something the person who started the work must know while it runs (a
        run that cannot learn, a setting ignored): a sentence naming what and why."""
        log.warning(message)

    def log(self, message: str) -> None:
        log.info(message)

    def is_cancelled(self) -> bool:
        return False

    def stopped_with(self, outputs: JobOutputs) -> None:
        """Say what a run that is being stopped before its end leaves behind (checkpoints
        registered so far, marked partial; `summary["partial"]` says where it stopped): a
        cancelled job records these as its outputs."""
        self.partial_outputs = outputs

    def keep(self, key: str, value: Any) -> None:
        """A fact about the run that its job's record keeps in its outputs' summary
        however the run ends (where each of its parts ran): a failed run's too, which
        returns no outputs. The run's own summary, when it finishes, wins on a clash."""
        self.kept[key] = value

    def check_cancelled(self) -> None:
        """Call between units of work; raises `Cancelled` if a stop was requested."""
        if self.is_cancelled():
            raise Cancelled("cancelled by user")


def cancelled_at(done: int | None, total: int | None, unit: str = "") -> str:
    """What marks an output of a run cancelled part-way: "cancelled at step 3 of 10"
    (a count it never reported reads "cancelled")."""
    return stopped_at("cancelled", done, total, unit)


def stopped_at(how: str, done: int | None, total: int | None, unit: str = "") -> str:
    """ "failed at 40 of 100", "cancelled at step 3 of 10"; `how` alone without a count."""
    if done is None:
        return how
    where = f"{unit} {done}" if unit else str(done)
    return f"{how} at {where}" + (f" of {total}" if total else "")


@dataclass
class JobOutputs:
    """What a piece of work produced; the logbook records and links it."""

    tables: list[str] = field(default_factory=list)
    checkpoints: list[str] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)

"""What the app shows of an async GRPO run (`rollout: async`), without Streamlit.

The Train page's live panel and the Logbook's run card both draw `async_view(job)`:
the learner's and each replica's weight version over the learner's steps, the
staleness histogram (how many policy versions lay between the weights that generated a
sample and the step that trained on it), every weight sync with its seconds and its
checksum verdict per replica, and the rollouts table. While the run is going these
come from its per-step metrics (trainers/async_rl/run.py reports them through the job
reporter, so they are live); once it finished, the histogram and the syncs come from
its outputs' summary (`staleness`, `syncs`), which is the whole record. Lags count
samples (completions), as `podium sql` over the rollouts table counts them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from podium.jobs.logbook import metrics_frame
from podium.jobs.queue import Job

# Per-step metric names the async run reports (trainers/async_rl/run.py).
REWARD = "reward"
LEARNER_VERSION = "policy_version"  # the learner's version after the step
SYNC_SECONDS = "sync_seconds"  # the latest push's seconds
# The latest push's seconds a replica could not generate (mean over the replicas).
REPLICA_IDLE = "replica_idle_seconds"
# The version each replica holds: "policy_version/0", "policy_version/1", ...
_VERSION = re.compile(r"^policy_version/(\d+)$")
# Samples trained at the step with lag K: "staleness/0", "staleness/1", ...
_STALENESS = re.compile(r"^staleness/(\d+)$")
FINISHED = ("succeeded", "failed", "cancelled")


@dataclass(frozen=True)
class SyncRow:
    """One weight push as the page lists it."""

    version: int
    backend: str
    megabytes: float
    seconds: float
    verdict: str  # "2/2 match" or "MISMATCH on replica 1 (expected ab12…, got cd34…)"
    ok: bool
    why: str = "step"  # "step": after a learner step; "replica N joined": a replacement
    idle_seconds: float | None = None  # mean over the replicas; None: not recorded

    def as_row(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "why": self.why,
            "backend": self.backend,
            "MB": round(self.megabytes, 1),
            "seconds": round(self.seconds, 3),
            "replica idle s": None if self.idle_seconds is None else round(self.idle_seconds, 3),
            "checksums": self.verdict,
        }


@dataclass
class AsyncView:
    """Everything the async panel draws; empty frames and lists when nothing is known yet."""

    replicas: int
    max_staleness: int
    weight_sync: str
    rollouts: str | None  # the rollouts table (NAMESPACE.TABLE)
    reward: pd.DataFrame  # index step, column "reward"
    versions: pd.DataFrame  # index step; "learner", "replica 0", "replica 1", ...
    current_versions: dict[int, int] = field(default_factory=dict)  # replica -> version
    staleness: pd.DataFrame = field(default_factory=pd.DataFrame)  # columns lag, samples
    finished: bool = False
    syncs: list[SyncRow] = field(default_factory=list)
    sync_seconds: pd.DataFrame = field(default_factory=pd.DataFrame)  # index step
    idle_seconds: pd.DataFrame = field(default_factory=pd.DataFrame)  # index step
    weight_swap: str = "barrier"
    rollouts_note: str = ""  # where they go, and that a default lands in the input's namespace

    @property
    def sync_failed(self) -> bool:
        return any(not s.ok for s in self.syncs)

    def headline(self) -> str:
        """One line over the panel: mode, replicas, bound, transport, versions now."""
        now = ", ".join(f"replica {r}: v{v}" for r, v in sorted(self.current_versions.items()))
        return (
            f"async rollout · {self.replicas} replica(s) · max staleness {self.max_staleness}"
            f" · weight sync {self.weight_sync} · {self.weight_swap} swaps"
            + (f" · {now}" if now else "")
        )

    def sync_rows(self) -> list[dict[str, Any]]:
        return [s.as_row() for s in self.syncs]

    def staleness_text(self) -> str:
        """'412 samples: lag 0 300 (73%), lag 1 112 (27%)' — what the histogram says."""
        if self.staleness.empty:
            return ""
        counts = dict(zip(self.staleness["lag"], self.staleness["samples"], strict=True))
        total = sum(int(n) for n in counts.values())
        parts = [
            f"lag {int(lag)} {int(n)} ({100 * int(n) / total:.0f}%)"
            for lag, n in counts.items()
            if total
        ]
        where = "" if self.finished else " so far"
        return f"{total} samples{where}: " + ", ".join(parts)


def job_config(job: Job) -> dict[str, Any]:
    try:
        value = json.loads(job["config"] or "{}")
    except (TypeError, json.JSONDecodeError):
        return {}
    return value if isinstance(value, dict) else {}


def is_async(job: Job) -> bool:
    """An async GRPO run (its card says `rollout: async`)."""
    return job["kind"] == "grpo" and job_config(job).get("rollout") == "async"


def _summary(job: Job) -> dict[str, Any]:
    outputs = job.get("outputs") or {}
    if isinstance(outputs, str):
        outputs = json.loads(outputs or "{}")
    summary = outputs.get("summary") or {}
    return summary if isinstance(summary, dict) else {}


def version_frame(metrics: pd.DataFrame) -> pd.DataFrame:
    """The learner's and each replica's weight version by learner step ("learner",
    "replica 0", "replica 1", ...)."""
    replicas = {int(m.group(1)): c for c in metrics.columns if (m := _VERSION.match(str(c)))}
    columns = {f"replica {r}": c for r, c in sorted(replicas.items())}
    if LEARNER_VERSION in metrics.columns:
        columns = {"learner": LEARNER_VERSION, **columns}
    if not columns:
        return pd.DataFrame()
    frame = metrics[list(columns.values())].dropna(how="all")
    return frame.rename(columns={c: name for name, c in columns.items()})


def staleness_frame(counts: dict[Any, Any]) -> pd.DataFrame:
    """{lag: samples} as rows (lag, samples), lag ascending, every lag up to the largest
    shown (a zero bar says "none" where a missing bar would say nothing)."""
    clean = {int(k): int(v) for k, v in counts.items()}
    if not clean:
        return pd.DataFrame(columns=["lag", "samples"])
    lags = range(0, max(clean) + 1)
    return pd.DataFrame({"lag": list(lags), "samples": [clean.get(k, 0) for k in lags]})


def live_staleness(metrics: pd.DataFrame) -> dict[int, int]:
    """{lag: samples} summed over the steps reported so far."""
    found = {int(m.group(1)): c for c in metrics.columns if (m := _STALENESS.match(str(c)))}
    return {lag: int(metrics[c].fillna(0).sum()) for lag, c in sorted(found.items())}


def sync_row(record: dict[str, Any]) -> SyncRow:
    """A SyncRecord.as_dict() as a row with its verdict: every replica's checksum must
    equal the learner's."""
    replicas = record.get("replicas") or []
    bad = [r for r in replicas if not r.get("match")]
    if not replicas:
        verdict, ok = "no replica reported", False
    elif bad:
        verdict = "MISMATCH on " + "; ".join(
            f"replica {r.get('replica')} (expected {str(r.get('expected'))[:8]}…, "
            f"got {str(r.get('checksum'))[:8]}…)"
            for r in bad
        )
        ok = False
    else:
        verdict, ok = f"{len(replicas)}/{len(replicas)} match", True
    joined = record.get("joined")
    idle = record.get("replica_idle_s")
    return SyncRow(
        version=int(record.get("version", 0)),
        backend=str(record.get("backend", "")),
        megabytes=float(record.get("bytes", 0)) / 1e6,
        seconds=float(record.get("seconds", 0.0)),
        verdict=verdict,
        ok=ok,
        why="step" if joined is None else f"replica {joined} joined",
        idle_seconds=None if idle is None else float(idle),
    )


def _column(metrics: pd.DataFrame, name: str) -> pd.DataFrame:
    return metrics[[name]].dropna() if name in metrics.columns else pd.DataFrame()


def rollouts_name(job: Job) -> str | None:
    """The run's rollouts table: its summary's, the card's, or the default the run
    derives from the training table and `out`."""
    config = job_config(job)
    named = _summary(job).get("rollouts") or config.get("rollouts")
    if named:
        return str(named)
    out = config.get("out")
    if not out:
        return None
    from trainers.async_rl.rollouts import default_rollouts_name

    return default_rollouts_name(str(out))


def rollouts_note_of(job: Job) -> str:
    """Where the run's samples go ("... in the rollouts namespace by default ..." when
    the card named no table), or "" while that is unknown."""
    name = rollouts_name(job)
    if name is None:
        return ""
    from trainers.async_rl.rollouts import rollouts_note

    return rollouts_note(name, named=bool(job_config(job).get("rollouts")))


def async_view(job: Job, metrics: pd.DataFrame | None = None) -> AsyncView | None:
    """The async panel's content for `job`, or None when it is not an async run."""
    if not is_async(job):
        return None
    config = job_config(job)
    summary = _summary(job)
    metrics = metrics_frame(job["id"]) if metrics is None else metrics
    versions = version_frame(metrics)
    current = {
        int(str(c).split()[-1]): int(versions[c].dropna().iloc[-1])
        for c in versions.columns
        if str(c).startswith("replica ") and not versions[c].dropna().empty
    }
    final = summary.get("staleness")
    counts = final if isinstance(final, dict) else live_staleness(metrics)
    return AsyncView(
        replicas=int(config.get("replicas") or 1),
        max_staleness=int(config.get("max_staleness") or 0),
        weight_sync=str(config.get("weight_sync") or ""),
        rollouts=rollouts_name(job),
        rollouts_note=rollouts_note_of(job),
        reward=_column(metrics, REWARD),
        versions=versions,
        current_versions=current,
        staleness=staleness_frame(counts),
        finished=job["status"] in FINISHED,
        syncs=[sync_row(r) for r in summary.get("syncs") or [] if isinstance(r, dict)],
        sync_seconds=_column(metrics, SYNC_SECONDS),
        idle_seconds=_column(metrics, REPLICA_IDLE),
        weight_swap=str(config.get("weight_swap") or "barrier"),
    )


def async_metric(name: str) -> bool:
    """Metrics the async panel draws itself (generic metric panels leave them out)."""
    matched = _VERSION.match(name) or _STALENESS.match(name)
    return bool(matched) or name in (LEARNER_VERSION, SYNC_SECONDS, REPLICA_IDLE)


def other_metrics(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` without the metrics the async panel draws."""
    return frame.drop(columns=[c for c in frame.columns if async_metric(str(c))])

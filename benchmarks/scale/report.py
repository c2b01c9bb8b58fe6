"""The scale benchmark's figures: each step's Podium run beside what it is compared
with, the ratio, and the issue's goal for it (met, or missed by how much); printed as a
Markdown table and written as JSON."""

from __future__ import annotations

import datetime
import json
import math
import os
import platform
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.scale.measure import Run


@dataclass
class Check:
    """One goal: `value op limit` (e.g. time ratio <= 0.5)."""

    what: str
    value: float
    op: str  # "<=" or ">="
    limit: float

    @property
    def met(self) -> bool:
        return self.value <= self.limit if self.op == "<=" else self.value >= self.limit

    @property
    def verdict(self) -> str:
        if math.isnan(self.value):
            return "not measured"
        if self.met:
            return "met"
        off = self.value / self.limit if self.op == "<=" else self.limit / max(self.value, 1e-12)
        return f"missed by {off:.2f}x"

    def shown(self) -> str:
        return f"{self.what} {self.op} {self.limit:g}: {_num(self.value)} ({self.verdict})"


@dataclass
class Figure:
    """One step: Podium's run, what it is compared with, and the ratio of the two."""

    step: str
    podium: Run
    against: str  # what the baseline is: "DuckDB", "cold first page", "local run", ...
    baseline: Run | None = None
    ratio: float = math.nan  # time ratio (Podium / baseline) unless `ratio_of` says else
    ratio_of: str = "time"  # "time": lower is better; "rows/s": higher is better
    checks: list[Check] = field(default_factory=list)
    extra: dict[str, float] = field(default_factory=dict)

    @staticmethod
    def timed(
        step: str,
        podium: Run,
        baseline: Run,
        against: str,
        goal: float | None = None,
        *,
        throughput: bool = False,
    ) -> Figure:
        """A figure whose ratio is the time ratio, or the rows/s ratio (`throughput`:
        baseline time / Podium time, higher is better), with an optional goal on it."""
        if throughput:
            ratio, of, op = baseline.wall / podium.wall, "rows/s", ">="
        else:
            ratio, of, op = podium.wall / baseline.wall, "time", "<="
        checks = [Check(f"{of} ratio", ratio, op, goal)] if goal is not None else []
        return Figure(step, podium, against, baseline, ratio, of, checks)


def machine() -> dict[str, Any]:
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {
        "cpu": platform.machine(),
        "cores": os.cpu_count(),
        "ram_gib": round(mem, 1),
        "load_average": round(os.getloadavg()[0], 1),
        "python": platform.python_version(),
    }


def header(info: dict[str, Any]) -> str:
    m = info["machine"]
    return (
        f"{info['date']}: {info['rows']:,} rows, JSONL {info['jsonl_bytes'] / 2**30:.2f} GiB "
        f"(mean row {info['mean_row_bytes']:,.0f} B), Parquet "
        f"{info['parquet_bytes'] / 2**20:,.0f} MiB in {info['data_files']} data files; "
        f"{m['cpu']}, {m['cores']} cores, {m['ram_gib']:.0f} GiB, load {m['load_average']}; "
        f"median of {info['repeat']}"
    )


def table(figures: list[Figure]) -> str:
    lines = [
        "| step (cold command) | Podium s / MiB | compared with | its s / MiB | ratio | goal |",
        "|---|---|---|---|---|---|",
    ]
    for f in figures:
        base = _shown(f.baseline) if f.baseline else "—"
        ratio = "—" if math.isnan(f.ratio) else f"{f.ratio:.2f} ({f.ratio_of})"
        goals = "; ".join(c.shown() for c in f.checks) or "—"
        extra = ", ".join(f"{k} {_num(v)}" for k, v in f.extra.items())
        step = f"{f.step} ({extra})" if extra else f.step
        lines.append(f"| {step} | {_shown(f.podium)} | {f.against} | {base} | {ratio} | {goals} |")
    return "\n".join(lines)


def as_json(info: dict[str, Any], figures: list[Figure], s3: list[Figure] | None) -> str:
    def one(f: Figure) -> dict[str, Any]:
        out = asdict(f)
        out["checks"] = [{**asdict(c), "met": c.met, "verdict": c.verdict} for c in f.checks]
        return out

    body = {**info, "figures": [one(f) for f in figures]}
    if s3 is not None:
        body["s3_postgres"] = [one(f) for f in s3]
    return json.dumps(_nulls(body), indent=2, allow_nan=False)


def write(
    path: Path | None, info: dict[str, Any], figures: list[Figure], s3: list[Figure] | None
) -> None:
    print(f"\n{header(info)}\n")
    print(table(figures))
    if s3 is not None:
        print("\nS3 (moto) + PostgreSQL catalog against the local run, Podium on both:\n")
        print(table(s3))
    if path:
        path.write_text(as_json(info, figures, s3))


def now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _nulls(value: Any) -> Any:
    """NaN (a figure not measured) as JSON null."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _nulls(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_nulls(v) for v in value]
    return value


def _num(v: float) -> str:
    if math.isnan(v):
        return "n/a"
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"


def _shown(run: Run) -> str:
    if math.isnan(run.wall):
        return "not run"
    wall = f"{run.wall:.2f} s" if run.wall >= 1 else f"{run.wall * 1000:.0f} ms"
    return wall if math.isnan(run.rss) else f"{wall} / {run.rss:,.0f}"

"""Which vLLM servers a comparison uses, starts and stops, decided before any starts.

A model whose server is already running (Generate's, say) is reused and never stopped;
the others are started by the job. Cold starts cost about a minute each on CPU, so the
servers the job starts are started at once when their engines fit in memory side by
side, and one after another (each stopped before the next) when they do not.

    plan = plan_serving(models, list_servers(), engine_sizes, usable_bytes())
    plan.reuse, plan.start, plan.together
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from podium.models.registry import ModelInfo
from podium.models.server_records import ServerInfo
from podium.models.serving import server_choice


@dataclass(frozen=True)
class ServingPlan:
    reuse: list[str]  # a live server already serves these: used as is, never stopped
    start: list[str]  # the job starts these (endpoints need no server: in neither)
    together: bool  # start them all at once (they fit in memory side by side)
    reason: str  # one sentence for the job's log


def plan_serving(
    models: Sequence[ModelInfo],
    servers: Sequence[ServerInfo],
    engine_sizes: Mapping[str, int | None],
    usable: int,
) -> ServingPlan:
    """`models` still to generate with, `servers` running now, each model's engine size
    in bytes (None: unknown) and the memory usable now."""
    by_model = {s.model: s for s in servers}
    reuse, start = [], []
    for model in models:
        if model.kind == "endpoint":
            continue
        if server_choice(by_model.get(model.name), model.path) == "reuse":
            reuse.append(model.name)
        else:
            start.append(model.name)
    sizes = [engine_sizes.get(name) for name in start]
    if len(start) < 2:
        return ServingPlan(reuse, start, False, "at most one server to start")
    if any(size is None for size in sizes):
        return ServingPlan(reuse, start, False, "an engine's size is unknown: one at a time")
    need = sum(size or 0 for size in sizes)
    if need > usable:
        return ServingPlan(
            reuse,
            start,
            False,
            f"{len(start)} engines need {need / 1e9:.1f} GB, {usable / 1e9:.1f} GB is "
            "free: one at a time",
        )
    return ServingPlan(
        reuse, start, True, f"{len(start)} engines ({need / 1e9:.1f} GB) fit: starting at once"
    )

"""A worker's two lanes, and why a queued job is still waiting.

Every worker has `concurrency` slots for any kind (the heavy lane: training runs only
here) and, while training holds them, `light_slots` more for light kinds (validation,
compare, generation, import, export, builds): a one-minute job queued behind a
ten-minute training run starts at once instead of waiting for it. Without training
running, jobs take the `concurrency` slots one after another as before (two vLLM-backed
jobs side by side would not fit a small machine). Oldest first within what a free slot
may take.

    podium worker                      # 1 slot for anything + 1 for light jobs beside training
    podium worker --light-slots 0      # strictly one job at a time
"""

from __future__ import annotations

from collections.abc import Iterable

from podium.jobs.kinds import KINDS
from podium.jobs.plugins import load_plugins
from podium.jobs.queue import Job

LIGHT_SLOTS_HELP = (
    "Jobs of light kinds (not training) run beside training while it holds the other "
    "slots, so a validation or a compare never waits behind a training run."
)


def is_heavy(kind: str) -> bool:
    """True for kinds that take the heavy lane (training); unknown kinds are light."""
    load_plugins()
    found = KINDS.get(kind)
    return bool(found and found.heavy)


def heavy_kinds() -> list[str]:
    load_plugins()
    return sorted(name for name, kind in KINDS.items() if kind.heavy)


def may_claim(running_kinds: Iterable[str], concurrency: int, light_slots: int) -> str | None:
    """What a worker running jobs of `running_kinds` may start now: "any", "light"
    (only light kinds, in a light slot beside training), or None (no free slot)."""
    kinds = list(running_kinds)
    if len(kinds) < concurrency:
        return "any"
    if any(is_heavy(k) for k in kinds) and len(kinds) < concurrency + light_slots:
        return "light"
    return None


def _named(job: Job) -> str:
    return f"job {job['id']} ({job['kind']})"


def waiting_reason(job: Job, active: Iterable[Job]) -> str | None:
    """Why queued `job` has not started, from the jobs now queued or running (any
    user's); None for a job that is not queued."""
    if job["status"] != "queued":
        return None
    active = list(active)
    running = [j for j in active if j["status"] in ("running", "cancelling")]
    key = (job["created_at"], job["id"])
    ahead = [j for j in active if j["status"] == "queued" and (j["created_at"], j["id"]) < key]
    heavy_running = [j for j in running if is_heavy(j["kind"])]
    if heavy_running and not is_heavy(job["kind"]):
        # Heavy jobs queued earlier wait for the heavy lane; a light one passes them.
        ahead = [j for j in ahead if not is_heavy(j["kind"])]
    if is_heavy(job["kind"]) and heavy_running:
        return f"waiting for the heavy lane: {_named(heavy_running[0])} is running"
    if ahead:
        first = min(ahead, key=lambda j: (j["created_at"], j["id"]))
        more = f" and {len(ahead) - 1} more" if len(ahead) > 1 else ""
        return f"waiting behind {_named(first)}{more}, queued earlier"
    if heavy_running and not is_heavy(job["kind"]):
        # Training holds the heavy lane only: a light job waits only for the light lane.
        light_running = [j for j in running if not is_heavy(j["kind"])]
        if light_running:
            return f"waiting for the light lane: {_named(light_running[0])} is running"
        return (
            f"next in the light lane, which is free beside {_named(heavy_running[0])} "
            "(a worker started with --light-slots 0 runs it after that job)"
        )
    if running:
        names = ", ".join(_named(j) for j in running[:3])
        return f"waiting for a free slot: {names} running"
    return "waiting for a worker (is `podium up` or `podium worker` running?)"

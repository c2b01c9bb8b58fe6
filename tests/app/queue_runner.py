"""Run what the pages queued, as `podium up`'s worker would: a real worker, until the
queue is empty."""

from __future__ import annotations

from podium.jobs.worker import Worker


def run_queued() -> None:
    Worker(poll=0.2, say=lambda _m: None).run(once=True)

"""The one Ray fan-out driver: a job's work cut into pieces that run on a Ray cluster.

Code-exec builds and verifications (sandbox runs on one actor per node) and validation
(one task per group of data files) run through it. Each piece stages its output as one
Parquet file (`podium.store.write.staged`, in the folder `staging_key` names) and the job
commits them together, so a job that dies resumes from what is staged. Generation
spreads its shards over vLLM replicas rather than Ray tasks, but stages the same way.

Each piece goes to a free slot (an actor, or room for one more task), so no more than
`len(slots)` pieces run at once. `pieces` is read lazily: the driver prepares piece k+1
(a code-exec batch's proposed inputs) while piece k runs. A cancelled job or a failed
piece cancels whatever is still running.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from podium.ray_join import ray_module
from podium.reporting import Reporter

Piece = TypeVar("Piece")
Slot = TypeVar("Slot")

SPREAD = "SPREAD"  # Ray's placement that puts pieces on as many nodes as it can
_WAIT_S = 1.0  # how often a wait for results looks at cancellation


def fan_out(
    pieces: Iterable[Piece],
    slots: Sequence[Slot],
    start: Callable[[Slot, Piece], Any],  # submits the piece in the slot: a Ray object ref
    done: Callable[[Any], None],  # takes each piece's result, in the order they finish
    reporter: Reporter,
) -> None:
    """Run every piece, at most one per slot at a time, handing each result to `done`."""
    ray = ray_module()
    free = list(slots)
    running: dict[Any, Slot] = {}

    def collect() -> None:
        ready: list[Any] = []
        while not ready:
            reporter.check_cancelled()
            ready, _ = ray.wait(list(running), num_returns=1, timeout=_WAIT_S)
        free.append(running.pop(ready[0]))
        done(ray.get(ready[0]))

    try:
        for piece in pieces:
            reporter.check_cancelled()
            if not free:
                collect()
            slot = free.pop()
            running[start(slot, piece)] = slot
        while running:
            collect()
    except BaseException:
        for ref in running:
            # An actor's task cannot be force-cancelled; its owner kills the actor.
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
        raise

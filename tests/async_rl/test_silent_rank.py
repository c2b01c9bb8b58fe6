"""A learner rank cut off by a network partition (its node unreachable, not dead, so
neither Ray nor the OS reports it lost) ends the run within the rank time-out
(`learner_rank_timeout_s`) as a lost rank, naming it, wherever rank 0 waits on it: in a
collective of the step, or for the digests of its rows in a push (issue 49, point 4)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from learner_steps import step_both

from trainers.async_rl.learner import LearnerSettings
from trainers.async_rl.protocols import LearnerLost

# Short enough for a test, long enough that a loaded machine's step never takes it.
SILENT_TIMEOUT_S = 20.0
# What "never a hang" means here: far past the time-out, far below gloo's old 1,800 s.
HANG_LIMIT_S = 240.0


def ended_within(
    call: Callable[[], Any], limit_s: float, on_hang: Callable[[], Any]
) -> list[BaseException]:
    """Run `call` on a thread; what it raised. Still waiting after `limit_s` (the hang
    fixed here), `on_hang` ends the wait and the test fails."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as exc:  # noqa: BLE001 - the test reads it
            raised.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(limit_s)
    if thread.is_alive():
        on_hang()
        thread.join(60)
        pytest.fail(f"still waiting on the silent follower after {limit_s} s")
    return raised


def test_a_follower_silent_in_a_collective_fails_the_step_naming_it(
    tiny_checkpoint: Path, tmp_path: Path
) -> None:
    """A follower silent in the step's collective used to hold rank 0 for gloo's
    1,800 s. SIGSTOP gives rank 0 a partition's view: the follower's process is there,
    silent, and not seen lost. The step now fails after the rank time-out as a lost rank
    (LearnerLost: the job keeps its checkpoints), naming the followers and the card's
    setting, not with gloo's error. The followers here are processes, not Ray actors:
    rank 0's wait is the same gloo collective either way, and a stopped process, like an
    unreachable actor, is not reported lost."""
    import os
    import signal
    import time

    raised: list[BaseException] = []
    took: list[float] = []

    def silence_then_step(sharded: Any, samples: Any) -> None:
        follower = sharded.followers.procs[0]
        os.kill(follower.pid, signal.SIGSTOP)  # between commands, as a partition may fall
        began = time.monotonic()
        # A killed follower breaks the old wait, so a failing test ends too.
        raised.extend(ended_within(lambda: sharded.step(samples), HANG_LIMIT_S, follower.kill))
        took.append(time.monotonic() - began)

    step_both(
        tiny_checkpoint,
        tmp_path,
        LearnerSettings(learning_rate=1e-2, temperature=0.7),
        "cpu",
        then=silence_then_step,
        rank_timeout_s=SILENT_TIMEOUT_S,
    )
    assert len(raised) == 1 and isinstance(raised[0], LearnerLost), raised
    line = str(raised[0])
    assert line.startswith("a learner rank did not answer rank 0 within 20 s"), line
    assert "learner_rank_timeout_s" in line and "rank 1 on node " in line, line
    assert "Timed out waiting" in line and "Traceback" not in line, line
    print(f"from the silence to the step's failure: {took[0]:.1f} s")


def test_a_follower_that_never_sends_its_digests_fails_the_push_naming_it() -> None:
    """Rank 0 verifies a push against every rank's digests, which each follower puts in
    the store as its push starts; a silent follower's never come. The wait watched only
    for a follower reported lost, so it lasted the store's 900 s; it now ends after the
    rank time-out, naming the rank and where it ran. A real TCPStore, as the sync's."""
    import datetime

    from torch.distributed import TCPStore

    from podium.models.vllm_launch import free_port
    from trainers.async_rl.rank_workers import WatchedStore

    store = TCPStore("127.0.0.1", free_port(), 1, True, timeout=datetime.timedelta(seconds=900))
    where = [{"rank": 1, "node": "10.0.0.2", "cuda_visible_devices": "1"}]
    watched = WatchedStore(store, lambda: None, patience_s=2.0, where=where)
    store.set("push1/digests/rank1", "[]")
    assert watched.get("push1/digests/rank1") == b"[]"  # sent: read at once

    raised = ended_within(
        lambda: watched.get("push2/digests/rank1"),
        HANG_LIMIT_S,
        lambda: store.set("push2/digests/rank1", "[]"),
    )
    assert len(raised) == 1 and isinstance(raised[0], LearnerLost), raised
    line = str(raised[0])
    assert line.startswith("learner rank 1 did not send the digests of its rows"), line
    assert "within 2 s (learner_rank_timeout_s)" in line, line
    assert "node 10.0.0.2, CUDA_VISIBLE_DEVICES=1" in line, line

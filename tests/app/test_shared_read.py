"""A read shared by the app's sessions for a few seconds (the job tray's poll)."""

from __future__ import annotations

import threading

from podium.app.shared_read import SharedRead


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_one_read_serves_every_session_until_the_interval_ends() -> None:
    reads: list[str] = []
    clock = Clock()

    def read(user: str) -> int:
        reads.append(user)
        return len(reads)

    shared = SharedRead(1.0, read, clock)
    assert [shared.get("ann") for _ in range(5)] == [1] * 5
    assert shared.get("bob") == 2  # each key its own read
    clock.now += 0.99
    assert shared.get("ann") == 1
    clock.now += 0.02
    assert shared.get("ann") == 3 and reads == ["ann", "bob", "ann"]
    assert shared.fresh("ann") == 4  # a session's own run reads afresh...
    assert shared.get("ann") == 4  # ...and the others get what it read


def test_sessions_asking_at_once_wait_for_the_one_read_in_flight() -> None:
    started, release = threading.Event(), threading.Event()
    reads: list[int] = []

    def read(_: str) -> int:
        reads.append(1)
        started.set()
        release.wait(30)
        return len(reads)

    shared = SharedRead(60.0, read)
    got: list[int] = []
    first = threading.Thread(target=lambda: got.append(shared.get("ann")))
    first.start()
    assert started.wait(30)
    others = [threading.Thread(target=lambda: got.append(shared.get("ann"))) for _ in range(8)]
    for t in others:
        t.start()
    release.set()
    for t in [first, *others]:
        t.join(30)
    assert reads == [1] and got == [1] * 9

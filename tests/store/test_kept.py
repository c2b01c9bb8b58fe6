"""`Kept`: what many sessions ask for at once is made once. After a label, every Browse
session asks for the new annotations snapshot in the same second; each used to read it."""

from __future__ import annotations

import threading
import time

import pytest

from podium.store.read.kept import Kept


def test_threads_asking_for_one_key_at_once_wait_for_one_make() -> None:
    kept: Kept[str, int] = Kept(4)
    started, release = threading.Event(), threading.Event()
    made: list[str] = []

    def make() -> int:
        made.append("notes@2")
        started.set()
        release.wait(30)
        return 42

    answers: list[int] = []

    def ask() -> None:
        answers.append(kept.get("notes@2", make))

    first = threading.Thread(target=ask)
    first.start()
    assert started.wait(30)
    others = [threading.Thread(target=ask) for _ in range(7)]
    for thread in others:
        thread.start()
    time.sleep(0.2)  # room for the others to reach get() while the first still makes
    release.set()
    for thread in [first, *others]:
        thread.join(30)
    assert answers == [42] * 8
    assert made == ["notes@2"]  # made once, not once a thread
    assert kept.get("other", lambda: 7) == 7  # another key is made at once


def test_a_failed_make_leaves_the_key_to_the_next_caller() -> None:
    kept: Kept[str, int] = Kept(4)

    def broken() -> int:
        raise OSError("the file went away")

    with pytest.raises(OSError):
        kept.get("k", broken)
    assert kept.get("k", lambda: 3) == 3
    assert kept._making == {}  # nothing left behind

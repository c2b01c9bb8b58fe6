"""The controller's staleness rule over many seeded random interleavings of replica
admissions, completions, replica deaths, learner steps and weight pushes: every sample
is trained within max_staleness versions of the weights that made it, exactly once,
and the run always finishes (over-stale work waits, nothing is dropped)."""

from __future__ import annotations

import random
import threading
import time

import pytest

from trainers.async_rl.controller import Admission, Controller, StalenessError, Ticket


def simulate(seed: int, eta: int, groups: int, steps: int, replicas: int) -> Admission:
    rng = random.Random(seed)
    adm = Admission(max_staleness=eta, groups_per_step=groups, steps=steps)
    held = [0] * replicas  # each replica's weight version
    flying: dict[int, list[Ticket]] = {r: [] for r in range(replicas)}
    trained: list[tuple[int, int, int]] = []  # (slot, version, step)
    for _ in range(100_000):
        if adm.finished:
            break
        action = rng.choice(["admit", "admit", "complete", "complete", "learn", "push", "kill"])
        r = rng.randrange(replicas)
        if action == "admit":
            # Sometimes with other replicas waiting too: yielding to them never stalls
            # the run nor breaks the bound.
            rivals = {o: held[o] for o in range(replicas) if o != r and rng.random() < 0.5}
            ticket = adm.try_admit(r, held[r], rivals)
            if ticket is not None:
                flying[r].append(ticket)
        elif action == "complete" and flying[r]:
            ticket = flying[r].pop(rng.randrange(len(flying[r])))
            # A push may land between admission and generation: the replica then
            # reports the newer version it generated with.
            version = held[r] if rng.random() < 0.3 else None
            assert adm.complete(ticket, None, version)
        elif action == "learn":
            batch = adm.try_take_batch()
            if batch is not None:
                step = adm.version
                trained += [(c.ticket.slot, c.ticket.version, step) for c in batch]
                adm.commit_step()
        elif action == "push":
            held[r] = adm.version  # the replica now holds the learner's latest weights
        elif action == "kill" and rng.random() < 0.1:
            lost = adm.release_replica(r)
            assert sorted(t.ticket for t in lost) == sorted(t.ticket for t in flying[r])
            for t in flying[r]:
                assert not adm.complete(t, None)  # a late answer is refused
            flying[r] = []
    assert adm.finished, "the run stalled"
    slots = [s for s, _, _ in trained]
    assert sorted(slots) == list(range(steps * groups))  # every slot once, none dropped
    for _, version, step in trained:
        assert 0 <= step - version <= eta
    assert sum(adm.lags.values()) == steps * groups
    return adm


@pytest.mark.parametrize("eta", [0, 1, 2])
def test_random_interleavings_keep_the_bound(eta: int) -> None:
    seen_lags: set[int] = set()
    for seed in range(60):
        adm = simulate(seed, eta, groups=1 + seed % 3, steps=6, replicas=1 + seed % 3)
        seen_lags |= set(adm.lags)
    assert seen_lags == set(range(eta + 1))  # the bound is reached, not just respected


def test_on_policy_generation_waits_for_the_update() -> None:
    adm = Admission(max_staleness=0, groups_per_step=2, steps=3)
    a, b = adm.try_admit(0, 0), adm.try_admit(1, 0)
    assert a and b and adm.try_admit(0, 0) is None  # a third group would be stale
    adm.complete(a, "a")
    assert adm.try_take_batch() is None  # half a batch
    adm.complete(b, "b")
    assert [c.payload for c in adm.try_take_batch() or []] == ["a", "b"]
    adm.commit_step()
    assert adm.try_admit(0, 0) is None  # still the old weights: waits for the push
    assert adm.try_admit(0, 1) is not None


def test_one_step_off_policy_starts_the_next_batch_early() -> None:
    adm = Admission(max_staleness=1, groups_per_step=1, steps=3)
    first, second = adm.try_admit(0, 0), adm.try_admit(1, 0)
    assert first and second and adm.try_admit(0, 0) is None
    adm.complete(second, "second")
    assert adm.try_take_batch() is None  # step 0 trains slot 0: it waits for `first`
    adm.complete(first, "first")
    assert [c.payload for c in adm.try_take_batch() or []] == ["first"]
    adm.commit_step()
    third = adm.try_admit(0, 1)  # the replica holding version 1 may start slot 2
    assert third and third.slot == 2 and adm.try_admit(0, 1) is None
    assert [c.payload for c in adm.try_take_batch() or []] == ["second"]  # lag 1
    adm.commit_step()
    assert adm.lags == {0: 1, 1: 1}


def test_a_dead_replicas_slot_is_generated_again_under_its_number() -> None:
    adm = Admission(max_staleness=1, groups_per_step=2, steps=1)
    a, b = adm.try_admit(0, 0), adm.try_admit(1, 0)
    assert a and b
    assert adm.release_replica(0) == [a]
    again = adm.try_admit(1, 0)
    assert again and again.slot == a.slot and again.ticket != a.ticket
    assert not adm.complete(a, "late answer of the dead replica")
    assert adm.complete(again, "x") and adm.complete(b, "y")
    assert sorted(c.ticket.slot for c in adm.try_take_batch() or []) == [0, 1]


def test_a_replica_ahead_of_the_learner_is_an_error() -> None:
    adm = Admission(max_staleness=1, groups_per_step=1, steps=2)
    with pytest.raises(StalenessError, match="ahead of the learner"):
        adm.try_admit(0, 1)


def test_nothing_beyond_the_run_is_generated() -> None:
    adm = Admission(max_staleness=5, groups_per_step=2, steps=2)
    tickets = [adm.try_admit(0, 0) for _ in range(6)]
    assert sum(t is not None for t in tickets) == 4


def test_a_waiting_replica_admitted_fewer_times_gets_the_slot() -> None:
    adm = Admission(max_staleness=1, groups_per_step=1, steps=8)
    assert [adm.try_admit(0, 0) is not None for _ in range(3)] == [True, True, False]
    for _ in range(2):  # two steps trained and pushed to replica 0
        adm.complete(adm._in_flight[min(adm._in_flight)], None)
        assert adm.try_take_batch() is not None
        adm.commit_step()
    # Replica 1 joins at version 2 beside replica 0: it was admitted fewer times.
    assert adm.try_admit(0, 2, rivals={1: 2}) is None
    assert adm.try_admit(1, 2, rivals={0: 2}) is not None
    # A rival whose weights the bound does not yet allow is passed over.
    assert adm.try_admit(0, 2, rivals={1: 0}) is not None
    # Equal counts: the lower index first.
    adm = Admission(max_staleness=0, groups_per_step=1, steps=2)
    assert adm.try_admit(1, 0, rivals={0: 0}) is None
    assert adm.try_admit(0, 0, rivals={1: 0}) is not None


def race_for_an_opened_slot() -> dict[int, Ticket | None]:
    """Replica 0 has had every slot; replica 1 has just joined. Both wait; the learner
    steps and pushes; what each replica got."""
    ctl = Controller(max_staleness=0, groups_per_step=1, steps=3)
    held = {0: 0, 1: 0}
    first = ctl.admit(0, lambda: held[0], timeout=0)
    assert first is not None
    got: dict[int, Ticket | None] = {}

    def wait_for_a_slot(r: int) -> None:
        got[r] = ctl.admit(r, lambda: held[r], timeout=5)

    waiters = [threading.Thread(target=wait_for_a_slot, args=(r,)) for r in (0, 1)]
    for t in waiters:
        t.start()
    deadline = time.monotonic() + 10
    while len(ctl._waiting) < 2:
        assert time.monotonic() < deadline, "the replicas never waited"
        time.sleep(0.001)
    ctl.complete(first, None)
    assert ctl.take_batch(timeout=0) is not None
    held.update({0: 1, 1: 1})
    ctl.commit_step()
    for t in waiters:
        t.join(10)
    return got


def test_the_controller_hands_an_opened_slot_to_the_replica_that_joined() -> None:
    for _ in range(20):  # however the threads are scheduled
        got = race_for_an_opened_slot()
        assert got[1] is not None and got[0] is None, got

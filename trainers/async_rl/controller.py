"""The single controller's bookkeeping: the policy version and bounded staleness.

The work is cut into *slots*: slot k is one prompt group (a prompt and its
`num_generations` completions); the learner trains on `groups_per_step` slots a step,
so a run of `steps` steps needs exactly `steps * groups_per_step` slots, and no more
are ever generated.

Versions: the learner's weights after `v` optimizer steps are version `v`; step `s`
(0-based) starts from version `s` and makes version `s + 1`. A sample made by a replica
holding version `v` and trained in step `s` has lag `s - v` (the rollouts table's
`trained_step - policy_version`). The bound `lag <= max_staleness` (eta) holds by two
rules (AReaL's admission rule, with batches in slot order):

- admission: a replica holding version `v` may start a slot only while fewer than
  `(v + eta + 1) * groups_per_step` slots are started (in flight, buffered or
  trained), and it gets the lowest slot not started. Work it may not start *waits*
  (for the learner to step and the new weights to arrive); nothing is generated and
  then dropped.
- batches: step `s` trains slots `s*B .. s*B+B-1` (B = groups_per_step) and waits
  until they are all generated. Slot `k` was started at a version `v` with
  `k < (v + eta + 1) * B`, so it is trained at step `k // B <= v + eta`.
  (Oldest-version-first batches over whatever has finished are *not* enough: a step
  that trains newer samples while older ones are still generating leaves too many old
  ones for later steps; the property test found that.)

When several replicas wait for the same slot, the one admitted fewest times so far gets
it (ties: the lower index), so a replica added mid-run (a scale-out) takes its share from
the first slot that opens instead of racing the others for it. The count belongs to the
replica's index: a replacement carries on its predecessor's.

A replica that dies gives its slots back (`release`): they are generated again, first,
under the same slot number, and a late answer for a given-back ticket is refused, so
every slot is trained and written exactly once. This module is pure logic (no Ray, no
vLLM, no torch); `Controller` adds the lock and waiting that threads need.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any


class StalenessError(RuntimeError):
    """The controller's invariant broke: a sample would be trained too stale."""


@dataclass(frozen=True)
class Ticket:
    """Permission for one replica to generate one slot with the weights it holds."""

    ticket: int  # unique per admission; a slot given back gets a new ticket
    slot: int  # which prompt group: the rollout id, stable across retries
    version: int  # the policy version of the weights that generate it
    replica: int


@dataclass
class Completed:
    """A generated slot waiting for the learner; `payload` is run.py's samples."""

    ticket: Ticket
    payload: Any


@dataclass
class Admission:
    """The pure state machine. Not thread-safe: `Controller` wraps it in a lock."""

    max_staleness: int
    groups_per_step: int
    steps: int
    version: int = 0  # the learner's committed version = the next step's index
    started: int = 0  # slots admitted and not given back
    _next_slot: int = 0
    _next_ticket: int = 0
    _retry: list[int] = field(default_factory=list)  # slots given back, generated first
    _in_flight: dict[int, Ticket] = field(default_factory=dict)  # ticket id -> ticket
    _buffer: dict[int, Completed] = field(default_factory=dict)  # slot -> generated
    _done_slots: set[int] = field(default_factory=set)  # completed (buffered or trained)
    lags: Counter[int] = field(default_factory=Counter)  # lag -> samples trained at it
    admitted: Counter[int] = field(default_factory=Counter)  # replica -> tickets it got

    def __post_init__(self) -> None:
        if self.max_staleness < 0 or self.groups_per_step < 1 or self.steps < 1:
            raise ValueError("max_staleness >= 0, groups_per_step >= 1 and steps >= 1")

    @property
    def total_slots(self) -> int:
        return self.steps * self.groups_per_step

    @property
    def finished(self) -> bool:
        return self.version >= self.steps

    def limit(self, replica_version: int) -> int:
        """How many slots may be started while a replica holds `replica_version`."""
        bound = (replica_version + self.max_staleness + 1) * self.groups_per_step
        return min(bound, self.total_slots)

    def may_start(self, replica_version: int) -> bool:
        """Whether the bound lets a replica holding `replica_version` start a slot."""
        return self.started < self.limit(replica_version)

    def try_admit(
        self, replica: int, replica_version: int, rivals: Mapping[int, int] | None = None
    ) -> Ticket | None:
        """A ticket for the next slot, or None: over the staleness bound, all started,
        or one of `rivals` (other waiting replicas -> the version each holds) may take
        it and was admitted fewer times."""
        if replica_version > self.version:
            raise StalenessError(
                f"replica {replica} reports version {replica_version}, ahead of the "
                f"learner's {self.version}"
            )
        if not self.may_start(replica_version):
            return None
        mine = (self.admitted[replica], replica)
        for rival, version in (rivals or {}).items():
            if self.may_start(version) and (self.admitted[rival], rival) < mine:
                return None
        if self._retry:  # the lowest free slot: below it every slot is live
            slot = self._retry.pop(0)
        else:
            slot = self._next_slot
            self._next_slot += 1
        ticket = Ticket(self._next_ticket, slot, replica_version, replica)
        self._next_ticket += 1
        self.started += 1
        self.admitted[replica] += 1
        self._in_flight[ticket.ticket] = ticket
        return ticket

    def complete(self, ticket: Ticket, payload: Any, version: int | None = None) -> bool:
        """Buffer a generated slot; False (and nothing kept) for a ticket given back.

        `version` is the one the replica reports having generated with, when a push
        landed between admission and generation: newer than the ticket's, which only
        tightens the bound (the slot number fixed when it is trained).
        """
        if self._in_flight.pop(ticket.ticket, None) is None:
            return False
        if version is not None:
            if version < ticket.version:
                raise StalenessError(
                    f"slot {ticket.slot} generated with version {version}, older than the "
                    f"version {ticket.version} its replica held when admitted"
                )
            ticket = replace(ticket, version=version)
        if ticket.slot in self._done_slots:  # cannot happen: a slot has one live ticket
            raise StalenessError(f"slot {ticket.slot} completed twice")
        self._done_slots.add(ticket.slot)
        self._buffer[ticket.slot] = Completed(ticket, payload)
        return True

    def release(self, ticket: Ticket) -> None:
        """Give a ticket back (its replica died): the slot is generated again, first."""
        if self._in_flight.pop(ticket.ticket, None) is None:
            return
        self.started -= 1
        self._retry.append(ticket.slot)
        self._retry.sort()

    def release_replica(self, replica: int) -> list[Ticket]:
        """Give back every ticket a replica holds; the tickets given back."""
        lost = [t for t in self._in_flight.values() if t.replica == replica]
        for t in lost:
            self.release(t)
        return lost

    def try_take_batch(self) -> list[Completed] | None:
        """Step `s`'s samples, slots `s*B .. s*B+B-1`; None while one is not generated.

        Slots are trained in their order: admission hands out the lowest free slot and
        only while `slot < (v + eta + 1) * B` for the replica's version `v`, so slot `k`
        is trained at step `k // B <= v + eta`: within the bound by construction.
        """
        if self.finished:
            return None
        step = self.version
        wanted = range(step * self.groups_per_step, (step + 1) * self.groups_per_step)
        if any(k not in self._buffer for k in wanted):
            return None
        batch = [self._buffer.pop(k) for k in wanted]
        for c in batch:
            lag = step - c.ticket.version
            if not 0 <= lag <= self.max_staleness:  # the rule above makes this impossible
                raise StalenessError(
                    f"step {step}: slot {c.ticket.slot} of version {c.ticket.version} is "
                    f"outside 0..{self.max_staleness} versions old"
                )
            self.lags[lag] += 1
        return batch

    def commit_step(self) -> int:
        """The learner finished a step: the new policy version."""
        self.version += 1
        return self.version

    def outstanding(self) -> tuple[int, int]:
        """(slots in flight, slots buffered)."""
        return len(self._in_flight), len(self._buffer)


class Controller:
    """`Admission` shared by replica threads and the learner: one lock, and waits that
    wake when anything changes (a completion, a step, a replica's new weights)."""

    def __init__(self, max_staleness: int, groups_per_step: int, steps: int) -> None:
        self.state = Admission(max_staleness, groups_per_step, steps)
        self._cond = threading.Condition()
        self._closed = False
        self._waiting: dict[int, Callable[[], int]] = {}  # replica -> its version_of

    def admit(
        self, replica: int, version_of: Callable[[], int], timeout: float = 1.0
    ) -> Ticket | None:
        """Wait up to `timeout` s for a ticket; `version_of()` gives the replica's
        current version (it changes when a push lands). None: not yet, or finished."""
        with self._cond:
            self._waiting[replica] = version_of
            try:
                ticket = self._try(replica)
                if ticket is None and not self._closed:
                    self._cond.wait(timeout)
                    ticket = self._try(replica)
            finally:
                del self._waiting[replica]
            return ticket

    def _try(self, replica: int) -> Ticket | None:
        rivals = {r: of() for r, of in self._waiting.items() if r != replica}
        version = self._waiting[replica]()
        ticket = self.state.try_admit(replica, version, rivals)
        if ticket is None and self.state.may_start(version):
            self._cond.notify_all()  # it yielded: wake the rival that takes the slot
        return ticket

    def complete(self, ticket: Ticket, payload: Any, version: int | None = None) -> bool:
        with self._cond:
            kept = self.state.complete(ticket, payload, version)
            self._cond.notify_all()
            return kept

    def release_replica(self, replica: int) -> list[Ticket]:
        with self._cond:
            lost = self.state.release_replica(replica)
            self._cond.notify_all()
            return lost

    def take_batch(self, timeout: float = 1.0) -> list[Completed] | None:
        with self._cond:
            batch = self.state.try_take_batch()
            if batch is None and not self._closed:
                self._cond.wait(timeout)
                batch = self.state.try_take_batch()
            return batch

    def commit_step(self) -> int:
        with self._cond:
            version = self.state.commit_step()
            self._cond.notify_all()
            return version

    def weights_changed(self) -> None:
        """A replica's weights moved on: admissions waiting on it may now pass."""
        with self._cond:
            self._cond.notify_all()

    @property
    def version(self) -> int:
        with self._cond:
            return self.state.version

    @property
    def all_started(self) -> bool:
        with self._cond:
            return self.state.started >= self.state.total_slots

    def staleness(self) -> dict[int, int]:
        with self._cond:
            return dict(sorted(self.state.lags.items()))

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

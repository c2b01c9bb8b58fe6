"""The review queue, without Streamlit: a cursor over the rows the reviewer holds, which
the queue hands out (claims live in the state database, so a reload resumes where it
was), and the keys 1-3 that label."""

from __future__ import annotations

from typing import Any

from pyiceberg.table import Table

from podium.app.rows.filters import LABEL_KEYS
from podium.identity import User
from podium.review import annotations as ann
from podium.review import queues
from podium.store.read.snapshots import resolve_snapshot


def queues_of(name: str) -> list[queues.Queue]:
    """The review queues started on table `name`, oldest first."""
    return queues.list_queues(name)


def queue_of(name: str, queue: str) -> queues.Queue:
    """Queue `queue` of table `name`, with its progress."""
    return queues.get_queue(name, queue)


def head_snapshot(table: Table) -> int | None:
    """The snapshot a label from the queue is made on: the table as it is now (the
    queue hands out rows as they are now)."""
    return resolve_snapshot(table, None)


def start_queue(
    name: str,
    size: int,
    user: User,
    *,
    sampled: bool,
    seed: int = 0,
    search: str | None = None,
    where: str | None = None,
    queue: str = "default",
) -> queues.Queue:
    return queues.create_queue(
        name,
        size,
        user,
        name=queue,
        seed=seed if sampled else None,
        search=search or None,
        where=where or None,
    )


def queue_step(name: str, user: User, cursor: int | None, queue: str = "default") -> queues.Step:
    """The row at `cursor` on `user`'s way through the queue (the rows they reviewed,
    then the ones they hold, claiming more as needed), with its place among the queue's
    rows now and whether there is a next one. `cursor` None: their first row not yet
    reviewed (a reload resumes there)."""
    return queues.step(name, user, cursor, name=queue)


def queue_row(name: str, user: User, cursor: int, queue: str = "default") -> dict[str, Any] | None:
    """The row at `cursor` (see `queue_step`); None when the queue has nothing for them."""
    return queue_step(name, user, cursor, queue).row


def label_keys(table: Table) -> dict[str, str]:
    """{"1": "good", "2": "bad", "3": "needs-fix"}: the Review page's label keys."""
    return {str(i + 1): label for i, label in enumerate(ann.label_set(table)[:LABEL_KEYS])}

"""Review queues: "the next N unreviewed rows" of a table or a filter, for many reviewers.

A queue is a fixed list of rows chosen on one snapshot when it is made: in table
order or sampled with a seed, from the whole table or the rows a search/where keeps,
skipping rows someone already annotated. Only row positions and ids are stored (in
the state database), so making a queue reads the `id` column of the row groups that
hold the chosen positions. Handing rows out reads them by id at the table's head, so a
reviewer sees today's text; rows removed since leave the queue.

Reviewers claim rows: a claim is one conditional UPDATE (the row is open, or its
claim expired), so two reviewers never hold the same row at the same time, on SQLite
or PostgreSQL. A row is done when it is annotated (`annotations.annotate` marks it).
Claims and progress live in the database, so a queue survives a reload.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
from sqlalchemy import (
    and_,
    func,
    or_,
    select,
    update,
)

from podium.errors import InvalidInput, NotFound
from podium.identity import User, require
from podium.review.queue_tables import items, queues
from podium.store.catalog.catalog import full_name, load_table
from podium.store.read import by_position
from podium.store.read.plan import plan_snapshot
from podium.store.read.query import matching_positions, open_view
from podium.store.read.snapshots import resolve_snapshot
from podium.store.state.state import engine

CLAIM_SECONDS = 15 * 60
_DRAW = 4096  # positions looked at per round while filling a queue


@dataclass(frozen=True)
class Queue:
    id: int
    name: str
    table: str
    snapshot_id: int
    description: str
    size: int
    done: int

    @property
    def progress(self) -> str:
        return f"{self.done} of {self.size} reviewed"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "progress": self.progress}


def create_queue(
    table_name: str,
    size: int,
    user: User,
    *,
    name: str = "default",
    seed: int | None = None,
    search: str | None = None,
    where: str | None = None,
    snapshot: int | str | None = None,
) -> Queue:
    """A queue of up to `size` rows nobody has annotated: in order, or sampled with `seed`."""
    from podium.review.annotations import annotated_ids, load_annotations

    require(user, "annotate")
    if size < 1:
        raise InvalidInput("A queue needs at least one row.")
    table_name = full_name(table_name)
    table = load_table(table_name)
    sid = resolve_snapshot(table, snapshot)
    if sid is None:
        raise InvalidInput(f"{table_name} has no rows to review yet.")
    with engine().connect() as con:
        if con.execute(
            select(queues.c.id).where(queues.c.table_name == table_name, queues.c.name == name)
        ).first():
            raise InvalidInput(f"{table_name} already has a queue named {name!r}; pick another.")
    plan = plan_snapshot(table, sid)
    if search or where:
        candidates = matching_positions(open_view(table_name, sid), search=search, where=where)
    else:
        candidates = None  # every position 0..total-1, never materialised
    total = plan.total if candidates is None else len(candidates)
    seen = annotated_ids(load_annotations(table_name))
    rng = np.random.default_rng(seed) if seed is not None else None
    order = rng.permutation(total) if rng is not None else None
    chosen: list[tuple[int, str]] = []
    cursor = 0
    while len(chosen) < size and cursor < total:
        idx = (
            order[cursor : cursor + _DRAW]
            if order is not None
            else np.arange(cursor, min(cursor + _DRAW, total))
        )
        cursor += _DRAW
        positions = np.sort(idx if candidates is None else candidates[idx])
        ids = by_position.read_positions(table, plan, positions, ["id"]).column("id").to_pylist()
        picked = {int(p): i for p, i in zip(positions.tolist(), ids, strict=True)}
        for p in (idx if candidates is None else candidates[idx]).tolist():
            row_id = picked[int(p)]
            if row_id is not None and row_id not in seen:
                chosen.append((int(p), row_id))
                if len(chosen) == size:
                    break
    if not chosen:
        raise InvalidInput(f"Every row of {table_name} that matches is already reviewed.")
    what = " ".join(
        part
        for part in (
            f"search {search!r}" if search else "",
            f"where {where}" if where else "",
            f"sampled (seed {seed})" if seed is not None else "in order",
        )
        if part
    )
    with engine().begin() as con:
        inserted = con.execute(
            queues.insert().values(
                name=name,
                table_name=table_name,
                snapshot_id=sid,
                description=what,
                size=len(chosen),
                created_by=user.name,
                created_at=datetime.now(UTC),
            )
        ).inserted_primary_key
        assert inserted is not None  # an INSERT always has one
        qid = inserted[0]
        con.execute(
            items.insert(),
            [
                {"queue_id": qid, "position": n, "row_pos": pos, "row_id": row_id}
                for n, (pos, row_id) in enumerate(chosen)
            ],
        )
    return get_queue(table_name, name)


def get_queue(table_name: str, name: str = "default") -> Queue:
    table_name = full_name(table_name)
    with engine().connect() as con:
        row = con.execute(
            select(queues).where(queues.c.table_name == table_name, queues.c.name == name)
        ).first()
        if row is None:
            raise NotFound(
                f"{table_name} has no review queue {name!r}; make one with "
                f"`podium review start {table_name} --size N`."
            )
        done = con.execute(
            select(func.count()).where(items.c.queue_id == row.id, items.c.done_by.is_not(None))
        ).scalar_one()
        # Rows removed from the table leave the queue (claim_next drops them).
        size = con.execute(select(func.count()).where(items.c.queue_id == row.id)).scalar_one()
    return Queue(row.id, row.name, row.table_name, row.snapshot_id, row.description, size, done)


def list_queues(table_name: str) -> list[Queue]:
    table_name = full_name(table_name)
    with engine().connect() as con:
        names = con.execute(
            select(queues.c.name).where(queues.c.table_name == table_name).order_by(queues.c.id)
        ).scalars()
        found = list(names)
    return [get_queue(table_name, n) for n in found]


def claim_next(
    table_name: str,
    user: User,
    n: int = 1,
    *,
    name: str = "default",
    claim_seconds: float = CLAIM_SECONDS,
) -> list[dict[str, Any]]:
    """Up to `n` rows for `user`: the ones they already hold, then fresh claims.

    Each row comes back with its queue position, id and content as it is at the
    table's head now (read by id from the row groups that hold it), so an edit made
    since the queue's snapshot shows at once; a row removed since leaves the queue.
    A claim lasts `claim_seconds`; an expired claim is free again.
    """
    require(user, "annotate")
    queue = get_queue(table_name, name)
    now = time.time()
    free = and_(
        items.c.queue_id == queue.id,
        items.c.done_by.is_(None),
        or_(items.c.claimed_by.is_(None), items.c.claim_expires < now),
    )
    mine = and_(
        items.c.queue_id == queue.id,
        items.c.done_by.is_(None),
        items.c.claimed_by == user.name,
        items.c.claim_expires >= now,
    )
    eng = engine()
    while True:
        held = _claim(eng, queue.id, user.name, n, mine, free, now + claim_seconds)
        with eng.connect() as con:
            rows = con.execute(
                select(items.c.position, items.c.row_id)
                .where(items.c.queue_id == queue.id, items.c.position.in_(held))
                .order_by(items.c.position)
            ).all()
        if not rows:
            return []
        current = _rows_at_head(queue.table, [r.row_id for r in rows])
        gone = [r.position for r in rows if r.row_id not in current]
        if not gone:
            return [
                {"queue_position": r.position, "row_position": current[r.row_id][0]}
                | current[r.row_id][1]
                for r in rows
            ]
        # Rows removed since the queue was made leave it, and the reviewer gets others.
        with eng.begin() as con:
            con.execute(
                items.delete().where(items.c.queue_id == queue.id, items.c.position.in_(gone))
            )


@dataclass(frozen=True)
class Step:
    """Where a reviewer stands in a queue: the row at their cursor and its place."""

    row: dict[str, Any] | None  # None: nothing in the queue for them
    cursor: int  # the cursor asked for, kept within the rows they have
    place: int  # 1-based place of the row among the queue's rows now
    size: int  # the queue's rows now (removed rows have left it)
    reviewed: bool  # the reviewer has annotated this row
    has_next: bool  # a row after this one: theirs already, or free to claim

    @property
    def text(self) -> str:
        return f"queue position {self.place} of {self.size}"


def step(
    table_name: str,
    user: User,
    cursor: int | None,
    *,
    name: str = "default",
    claim_seconds: float = CLAIM_SECONDS,
) -> Step:
    """Row `cursor` of `user`'s way through the queue: the rows they reviewed and the
    rows they hold, in queue order, claiming fresh rows when the cursor passes the end.

    `cursor` None: the first row they have not reviewed (where a reload resumes).
    Reviewed rows stay on the way, so Previous goes back to them; a row removed from
    the table leaves the queue when it is reached, and places are counted among the
    rows still in the queue, so "5 of 7" never becomes "8 of 7" after a removal.
    """
    require(user, "annotate")
    queue = get_queue(table_name, name)
    eng = engine()
    while True:
        now = time.time()
        ours = and_(items.c.queue_id == queue.id, items.c.done_by.is_(None))
        free = and_(ours, or_(items.c.claimed_by.is_(None), items.c.claim_expires < now))
        mine = and_(ours, items.c.claimed_by == user.name, items.c.claim_expires >= now)
        with eng.connect() as con:
            reviewed = set(
                con.execute(
                    select(items.c.position).where(
                        items.c.queue_id == queue.id, items.c.done_by == user.name
                    )
                ).scalars()
            )
            held = set(con.execute(select(items.c.position).where(mine)).scalars())
        if cursor is None:
            way = sorted(reviewed | held)
            cursor = next((i for i, p in enumerate(way) if p not in reviewed), len(way))
        cursor = max(cursor, 0)
        if len(reviewed) + len(held) <= cursor:
            wanted = cursor + 1 - len(reviewed)
            held = set(_claim(eng, queue.id, user.name, wanted, mine, free, now + claim_seconds))
        way = sorted(reviewed | held)
        if not way:
            return Step(None, 0, 0, get_queue(table_name, name).size, False, False)
        cursor = min(cursor, len(way) - 1)
        position = way[cursor]
        with eng.connect() as con:
            row_id = con.execute(
                select(items.c.row_id).where(
                    items.c.queue_id == queue.id, items.c.position == position
                )
            ).scalar_one()
            place, size, unclaimed = con.execute(
                select(
                    func.count().filter(items.c.position <= position),
                    func.count(),
                    func.count().filter(free),
                ).where(items.c.queue_id == queue.id)
            ).one()
        current = _rows_at_head(queue.table, [row_id])
        if row_id in current:
            row = {"queue_position": position, "row_position": current[row_id][0]}
            row |= current[row_id][1]
            more = cursor + 1 < len(way) or unclaimed > 0
            return Step(row, cursor, place, size, position in reviewed, more)
        # Removed since the queue was made: the row leaves the queue; look again.
        with eng.begin() as con:
            con.execute(
                items.delete().where(items.c.queue_id == queue.id, items.c.position == position)
            )


def _claim(
    eng: Any, queue_id: int, user: str, n: int, mine: Any, free: Any, expires: float
) -> list[int]:
    """Positions of up to `n` rows `user` holds: the ones held already, then fresh claims."""
    with eng.begin() as con:
        held = list(
            con.execute(select(items.c.position).where(mine).order_by(items.c.position).limit(n))
            .scalars()
            .all()
        )
    while len(held) < n:
        with eng.begin() as con:
            candidates = (
                con.execute(
                    select(items.c.position)
                    .where(free)
                    .order_by(items.c.position)
                    .limit(n - len(held))
                )
                .scalars()
                .all()
            )
            if not candidates:
                break
            for position in candidates:
                # The WHERE repeats the "free" test: of two reviewers racing for a row,
                # exactly one UPDATE matches it.
                got = con.execute(
                    update(items)
                    .where(free, items.c.position == position)
                    .values(claimed_by=user, claim_expires=expires)
                ).rowcount
                if got == 1:
                    held.append(position)
    return held


def _rows_at_head(table_name: str, ids: list[str]) -> dict[str, tuple[int, dict[str, Any]]]:
    """{id: (position, row)} of the rows with `ids` as they are at the table's head now:
    a queue hands out today's text, not the text of the snapshot it was made on."""
    view = open_view(table_name)
    positions = matching_positions(view, ids=ids)
    data = view.canonical(by_position.read_positions(view.table, view.plan, positions)).to_pylist()
    return {str(row["id"]): (int(p), row) for p, row in zip(positions.tolist(), data, strict=True)}

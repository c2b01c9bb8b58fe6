"""Reading stored signals back: the signal tables current for a snapshot, facets (rows
per value) and the ids a filter or an action chooses. What Browse's signal filters and
`podium signals remove` are built on, tested without Streamlit.

Only current signals are read: a stale one describes other rows, and acting on it could
remove a row whose text has changed since.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.table import Table

from podium.errors import InvalidInput
from podium.signals.facet_counts import CLUSTERED as CLUSTERED  # re-exported (Browse)
from podium.signals.facet_counts import Facet as Facet
from podium.signals.facet_counts import facets_of
from podium.signals.listing import current_versions
from podium.signals.store import (
    SignalStatus,
    list_signals,
    signal_status,
    signal_table_name,
    stored_signals,
)
from podium.store.catalog.catalog import load_or_none, name_of
from podium.store.read.read import iter_table_batches

# What each clustered signal's facets mean: (value, label). Language facets are its languages.
CLUSTER_FACETS = (
    ("member", "in a cluster"),
    ("duplicate", "in a cluster, not canonical"),
)


def _column_batches(table: Table, columns: Sequence[str]) -> Iterator[pa.RecordBatch]:
    snapshot = table.current_snapshot()
    if snapshot is None:
        return iter(())
    return iter_table_batches(table, snapshot.snapshot_id, columns=list(columns))


def signal_statuses(table: Table, snapshot_id: int | None) -> list[SignalStatus]:
    return list_signals(table, snapshot_id, current_versions())


def current_signal(table: Table, snapshot_id: int | None, signal: str) -> Table:
    """The stored `signal` of `table` if it is current for `snapshot_id`, else a clear
    error saying what to run."""
    name = signal_table_name(name_of(table), signal)
    stored = load_or_none(name)  # this signal's table alone, not every one of them
    status = (
        None if stored is None else signal_status(stored, table, snapshot_id, current_versions())
    )
    if stored is None or status is None or status.signal != signal:
        raise InvalidInput(
            f"No {signal} signal is stored for {name_of(table)}; run `podium signals run "
            f"{name_of(table)} --signal {signal}` first."
        )
    if not status.current:
        raise InvalidInput(
            f"The {signal} signal of {name_of(table)} is stale ({status.stale}); run it "
            "again for this snapshot first."
        )
    return stored


def ids_for(table: Table, snapshot_id: int | None, signal: str, value: str) -> set[str]:
    """Ids of the rows a facet chooses, from the current signal."""
    stored = current_signal(table, snapshot_id, signal)
    out: set[str] = set()
    if signal in CLUSTERED:
        if value not in ("member", "duplicate"):
            raise InvalidInput(f"{signal} has no facet {value!r}; use member or duplicate.")
        for batch in _column_batches(stored, ["id", "is_canonical"]):
            ids = batch.column("id")
            if value == "duplicate":
                ids = ids.filter(pc.invert(batch.column("is_canonical")))
            out.update(ids.to_pylist())
    elif signal in ("contamination", "private-data"):
        columns = ["id"] if signal == "contamination" else ["id", "kind"]
        for batch in _column_batches(stored, columns):
            ids = batch.column("id")
            if signal == "private-data" and value != "any":
                ids = ids.filter(pc.equal(batch.column("kind"), value))
            out.update(ids.to_pylist())
    elif signal == "language":
        for batch in _column_batches(stored, ["id", "language"]):
            out.update(
                batch.column("id").filter(pc.equal(batch.column("language"), value)).to_pylist()
            )
    elif signal == "rubric":
        keep = _score_test(value)
        for batch in _column_batches(stored, ["id", "score"]):
            ids, scores = batch.column("id").to_pylist(), batch.column("score").to_pylist()
            out.update(i for i, score in zip(ids, scores, strict=True) if keep(score))
    elif signal == "topics":
        level, number = _topic_facet(value)
        for batch in _column_batches(stored, ["id", level]):
            chosen = pc.equal(batch.column(level), pa.scalar(number, pa.int32()))
            out.update(batch.column("id").filter(chosen).to_pylist())
    else:
        raise InvalidInput(f"The {signal} signal has no facets to filter on.")
    return out


TOPIC_LEVELS = ("category", "cluster")


def _topic_facet(value: str) -> tuple[str, int]:
    """A topics facet, `cluster=N` (a topic) or `category=N` (a group of topics)."""
    level, _, number = value.partition("=")
    if level.strip() not in TOPIC_LEVELS or not number.strip().isdigit():
        raise InvalidInput(
            f"topics has no facet {value!r}; use cluster=N (a topic) or category=N "
            "(`podium signals topics TABLE` lists them)."
        )
    return level.strip(), int(number)


def topic_facets(stored: Table) -> list[Facet]:
    """A facet per category and per topic of a topics signal table, titled and counted
    from what the signal stored beside its rows."""
    import json

    from podium.signals.topics import PROP_TOPICS

    topics = json.loads(stored.properties.get(PROP_TOPICS) or "[]")
    categories: dict[int, int] = {}
    for t in topics:
        categories[int(t["category"])] = categories.get(int(t["category"]), 0) + int(t["rows"])
    found = [
        Facet("topics", f"category={c}", f"category {c}", n) for c, n in sorted(categories.items())
    ]
    for t in sorted(topics, key=lambda t: int(t["cluster"])):
        title = f": {t['title']}" if t.get("title") else ""
        found.append(
            Facet("topics", f"cluster={t['cluster']}", f"topic {t['cluster']}{title}", t["rows"])
        )
    return found


def _score_test(value: str) -> Callable[[int | None], bool]:
    """A rubric facet: `>=N` (scored N or more), `<N` (below N, or unparsed: not known to
    be good), `N` (exactly), `unparsed`."""
    value = value.strip()
    if value == "unparsed":
        return lambda score: score is None
    op = ">=" if value.startswith(">=") else "<" if value.startswith("<") else "="
    number = value.removeprefix(op) if op != "=" else value
    if not number.strip().isdigit() or not 1 <= int(number) <= 10:
        raise InvalidInput(
            f"rubric has no facet {value!r}; use >=N, <N or N (N from 1 to 10), or unparsed."
        )
    n = int(number)
    if op == ">=":
        return lambda score: score is not None and score >= n
    if op == "<":
        return lambda score: score is None or score < n
    return lambda score: score == n


def facets(table: Table, snapshot_id: int | None) -> list[Facet]:
    """Every facet of the signals current for `snapshot_id`, with its row count (the
    counts each run kept where they still hold, else counted afresh)."""
    found: list[Facet] = []
    for status, stored in stored_signals(table, snapshot_id, current_versions()):
        if not status.current:
            continue
        if status.signal == "topics":
            found.extend(topic_facets(stored))
        else:
            found.extend(facets_of(status.signal, stored))
    return found


# What `podium signals remove` takes out, per signal.
REMOVES = {
    "near-dup": ("duplicate", "every member of a near-duplicate cluster but its canonical row"),
    "exact-dup": ("duplicate", "every exact duplicate but its cluster's canonical row"),
    "semantic-dup": ("duplicate", "every semantic duplicate but its cluster's canonical row"),
    "contamination": ("contaminated", "every row with an eval table's text"),
    "private-data": ("any", "every row with private data or a secret"),
}


def ids_to_remove(table: Table, snapshot_id: int | None, signal: str) -> set[str]:
    if signal not in REMOVES:
        raise InvalidInput(
            f"Rows cannot be removed by the {signal} signal; remove by one of: "
            f"{', '.join(REMOVES)}."
        )
    return ids_for(table, snapshot_id, signal, REMOVES[signal][0])


# What Browse sorts by: signal -> (its column, what the order says).
SORTABLE = {
    "length": ("chars", "length in characters"),
    "near-dup": ("size", "near-dup cluster size"),
    "exact-dup": ("size", "exact-dup cluster size"),
    "semantic-dup": ("size", "semantic-dup cluster size"),
    "rubric": ("score", "quality score"),
}


def sort_choices(table: Table, snapshot_id: int | None) -> list[str]:
    """The current signals of `snapshot_id` that rows can be sorted by."""
    return [
        s.signal for s in signal_statuses(table, snapshot_id) if s.current and s.signal in SORTABLE
    ]


def ordered_ids(
    table: Table, snapshot_id: int | None, signal: str, *, descending: bool = True
) -> list[str]:
    """Ids of the rows the current `signal` has a value for, by that value; a cluster's
    rows stay together (canonical row first), then by id; unparsed scores come last."""
    if signal not in SORTABLE:
        raise InvalidInput(
            f"Rows cannot be sorted by the {signal} signal; sort by one of: {', '.join(SORTABLE)}."
        )
    column = SORTABLE[signal][0]
    clustered = signal in CLUSTERED
    names = ["id", column, *(["cluster", "is_canonical"] if clustered else [])]
    stored = current_signal(table, snapshot_id, signal)
    parts = list(_column_batches(stored, names))
    if not parts:
        return []
    values = pa.Table.from_batches(parts)
    keys = [(column, "descending" if descending else "ascending", "at_end")]
    if clustered:
        keys += [("cluster", "ascending", "at_end"), ("is_canonical", "descending", "at_end")]
    order = pc.sort_indices(values, sort_keys=[*keys, ("id", "ascending", "at_end")])
    ids: list[str] = values.column("id").take(order).to_pylist()
    return ids


def stale_notes(table: Table, snapshot_id: int | None) -> list[str]:
    """One line per stored signal that does not describe `snapshot_id`."""
    return [
        f"{s.signal} is stale: {s.stale}; run it again to filter on it."
        for s in signal_statuses(table, snapshot_id)
        if not s.current
    ]


def narrowed(
    table: Table, snapshot_id: int | None, chosen: Sequence[Facet], keep: set[str] | None
) -> set[str] | None:
    """`keep` (None: every row) narrowed to the rows every chosen facet names."""
    for facet in chosen:
        ids = ids_for(table, snapshot_id, facet.signal, facet.value)
        keep = ids if keep is None else keep & ids
    return keep


def hits_by_row(
    stored: Table, kinds: Sequence[str] | None = None
) -> dict[str, list[tuple[int, int, int, str]]]:
    """A private-data signal's hits by row id: (turn, start, end, kind) each."""
    found: dict[str, list[tuple[int, int, int, str]]] = {}
    for batch in _column_batches(stored, ["id", "turn", "start", "end", "kind"]):
        columns = [batch.column(c).to_pylist() for c in ("id", "turn", "start", "end", "kind")]
        for row_id, turn, start, end, kind in zip(*columns, strict=True):
            if kinds and kind not in kinds:
                continue
            found.setdefault(row_id, []).append((turn, start, end, kind))
    return found


def excluded_ids(table: Table, snapshot_id: int | None, specs: Sequence[str]) -> set[str]:
    """The rows a training run leaves out by signal: each spec `SIGNAL` (what `remove`
    takes: non-canonical duplicates, contaminated rows, rows with private data) or
    `SIGNAL=VALUE` (a facet, e.g. `private-data=secret`, `language=fr`), from signals
    current for `snapshot_id` (a stale one is refused, as for remove)."""
    from podium.signals.registry import signal_kind

    out: set[str] = set()
    for spec in specs:
        name, _, value = spec.partition("=")
        signal = signal_kind(name).name
        if value.strip():
            out |= ids_for(table, snapshot_id, signal, value.strip())
        else:
            out |= ids_to_remove(table, snapshot_id, signal)
    return out

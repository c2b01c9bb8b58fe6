"""Which tables a picker offers, in which order, without Streamlit.

Every table Podium writes names its kind in the `podium.kind` property; pickers group
tables by it (datasets, samples, functions, reports, votes, comparisons, annotations;
the registry is `podium.store.catalog.kinds`), hide the internal ones (comparison tables, votes,
validation reports, annotations, the vibes log) unless asked, and list the most
recently written first so the default is the table the user just made rather than the
alphabetically first one.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from podium.app.rows.view_state import ref_names
from podium.jobs.partial import partial_note
from podium.review.refs import list_refs
from podium.store.catalog.catalog import list_tables, load_table, open_catalog, parse_name
from podium.store.catalog.kinds import GROUP_OF_KIND, INTERNAL_GROUPS, group_of
from podium.store.catalog.table_name import reserved_for
from podium.store.read.snapshots import SnapshotInfo, list_snapshots, live_rows
from podium.store.schema import PROP_KIND

__all__ = ["GROUP_OF_KIND", "INTERNAL_GROUPS", "TableChoice", "pick", "table_choices"]
INTERNAL_NAMESPACES = frozenset({"cmp", "compare"})
# What each page can read without failing: a conversation table for most jobs.
CONVERSATIONS = ("datasets", "samples")


@dataclass(frozen=True)
class TableChoice:
    name: str
    kind: str  # the table's podium.kind property ("" when it has none)
    updated_ms: int  # when its current snapshot was committed (0: never written)
    rows: int | None = None  # rows in the current snapshot (None: unknown)
    partial: str | None = None  # why its job left it part-written ("failed at 4 of 10; ...")

    @property
    def group(self) -> str:
        return group_of(self.kind)

    @property
    def internal(self) -> bool:
        namespace = self.name.split(".", 1)[0]
        return (
            self.group in INTERNAL_GROUPS
            or namespace in INTERNAL_NAMESPACES
            or reserved_for(self.name) is not None
        )

    @property
    def label(self) -> str:
        return f"{self.name} · {self.group}"


def table_choices() -> list[TableChoice]:
    """Every table in the catalog with its kind and last write time."""
    catalog = open_catalog()
    choices = []
    for name in list_tables(catalog):
        table = catalog.load_table(parse_name(name))
        snapshot = table.current_snapshot()
        summary = snapshot.summary if snapshot else None
        props = summary.additional_properties if summary else {}
        choices.append(
            TableChoice(
                name=name,
                kind=table.properties.get(PROP_KIND, ""),
                updated_ms=snapshot.timestamp_ms if snapshot else 0,
                rows=live_rows(props)
                if "total-records" in props
                else (0 if snapshot is None else None),
                partial=partial_note(table.properties),
            )
        )
    return choices


def pick(
    choices: Sequence[TableChoice],
    groups: Collection[str] | None = CONVERSATIONS,
    include_internal: bool = False,
    exclude: Collection[str] = (),
) -> list[TableChoice]:
    """The tables to offer, most recently written first (ties by name); empty tables
    last, so a default never has nothing to read.

    `groups=None` offers every group; internal tables only with `include_internal`.
    """
    kept = [
        c
        for c in choices
        if (groups is None or c.group in groups)
        and (include_internal or not c.internal)
        and c.name not in exclude
    ]
    return sorted(kept, key=lambda c: (c.rows == 0, -c.updated_ms, c.name))


def ordered_names(
    groups: Collection[str] | None = CONVERSATIONS,
    include_internal: bool = False,
    exclude: Collection[str] = (),
) -> list[str]:
    return [c.name for c in pick(table_choices(), groups, include_internal, exclude)]


def default_of(names: Sequence[str]) -> str | None:
    """The table a picker over `names` starts on: the most recently written conversation
    table (a dataset or samples; the demo's functions table was written last, but a
    newcomer's first look is a chat), else the newest one that is not internal, else
    the first; never simply the alphabetically first."""
    if not names:
        return None
    wanted = set(names)
    known = [c for c in table_choices() if c.name in wanted]
    offered = pick(known, groups=CONVERSATIONS) or pick(known, groups=None)
    return offered[0].name if offered else names[0]


def snapshots_of(name: str) -> list[SnapshotInfo]:
    """Table `name`'s snapshots, oldest first, as a snapshot picker offers them."""
    return list_snapshots(load_table(name))


def snapshot_names_of(name: str) -> dict[int, list[str]]:
    """{snapshot id: ['cleaned (tag)']} of table `name`, for a snapshot picker's labels."""
    return ref_names(list_refs(name))

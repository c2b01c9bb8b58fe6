"""Which rows a bulk action applies to: named ids, search hits, a filter, a label, or
the rows a validation report flags. Returns ids; never reads more than the `id`
column of the rows that match."""

from __future__ import annotations

from collections.abc import Sequence

from podium.errors import InvalidInput
from podium.store.catalog.catalog import load_table
from podium.store.read import by_position, connections, duckdb_views
from podium.store.read.plan import plan_snapshot
from podium.store.read.query import matching_positions, open_view
from podium.store.read.snapshots import resolve_snapshot


def failing_ids(report: str) -> set[str]:
    """Ids of rows with at least one error in validation report table `report`."""
    table = load_table(report)
    plan = plan_snapshot(table, resolve_snapshot(table, None))
    if "id" not in plan.column_names:
        raise InvalidInput(f"{report} is not a validation report: it has no `id` column.")
    con = connections.connect_plans([plan])
    duckdb_views.register_snapshot(con, "report", table, plan, with_pos=False)
    ids = con.sql("SELECT DISTINCT id FROM report WHERE id IS NOT NULL").to_arrow_table()
    return set(ids.column("id").to_pylist())


def select_ids(
    name: str,
    *,
    ids: Sequence[str] = (),
    search: str | None = None,
    where: str | None = None,
    label: str | None = None,
    failing: str | None = None,
    snapshot: int | str | None = None,
) -> list[str]:
    """The ids chosen by every given criterion together (named ids are added)."""
    chosen: set[str] | None = None
    if search or where:
        view = open_view(name, snapshot)
        positions = matching_positions(view, search=search, where=where)
        found = by_position.read_positions(view.table, view.plan, positions, ["id"])
        chosen = set(found.column("id").to_pylist())
    if label:
        from podium.review import annotations  # SQLAlchemy: only when needed

        hits = annotations.annotated_ids(annotations.load_annotations(name), label=label)
        chosen = hits if chosen is None else chosen & hits
    if failing:
        hits = failing_ids(failing)
        chosen = hits if chosen is None else chosen & hits
    out = set(ids) | (chosen or set())
    out.discard(None)  # type: ignore[arg-type,unused-ignore]
    if not out:
        raise InvalidInput("No rows chosen: name ids, or a search/where/label/report that matches.")
    return sorted(out)

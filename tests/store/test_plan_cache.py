"""The on-disk plan cache: a cold `podium show` of a known snapshot needs no pyiceberg,
while every answer stays the one pyiceberg would give (new commits, time travel,
damaged cache files, object stores)."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from store_helpers import write_in_files

from podium.config import get_settings
from podium.errors import NotFound
from podium.store.catalog import catalog, names
from podium.store.read import arrow_rows, by_position, plan_cache, query
from podium.store.read.file_plan import FilePlan, PlannedFile
from podium.store.read.guessed_view import Guess, guess_view
from podium.store.read.plan import clear_plans
from podium.store.read.plan import open_parquet as real_open
from podium.store.read.query import open_view, page
from podium.store.read.snapshots import list_snapshots
from podium.store.schema import PROP_MAPPING
from podium.store.write.write import set_properties, write_batches

ROWS_PER_GROUP = 10

# Runs `podium show` as a person would (a new process) and reports, beside its output,
# which heavy modules the command imported.
SHOW = """
import contextlib, io, json, runpy, sys
sys.argv = ["podium", "show", *sys.argv[1:], "--json"]
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        runpy.run_module("podium.cli", run_name="__main__")
    except SystemExit as exc:
        assert not exc.code, exc.code
heavy = [m for m in ("pyiceberg", "duckdb", "pandas", "sqlalchemy", "typer") if m in sys.modules]
print(json.dumps({"page": json.loads(out.getvalue()), "heavy": heavy}))
"""


def write(name: str, n: int, start: int, mode: str) -> None:
    write_in_files(name, n, start, mode, rows_per_group=ROWS_PER_GROUP)


def show_in_new_process(home: Path, *args: str) -> dict:
    env = {**os.environ, "PODIUM_HOME": str(home)}
    out = subprocess.run(
        [sys.executable, "-c", SHOW, *args], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def entries() -> list[Path]:
    return sorted(plan_cache.cache_dir().glob("*.json"))


def forget_in_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """As a new process would be: no plan in memory, and no way to open the table."""
    clear_plans()

    def no_pyiceberg(*_: object, **__: object) -> None:
        raise AssertionError("the table was opened with pyiceberg")

    monkeypatch.setattr(catalog, "load_table", no_pyiceberg)


@pytest.fixture
def table(podium_home: Path) -> str:
    """50 rows in 5 data files, then 30 more in 3 (two snapshots)."""
    write("t.cached", 50, 0, "create")
    write("t.cached", 30, 50, "append")
    return "t.cached"


def test_the_first_cold_show_after_a_write_needs_no_pyiceberg(
    table: str, podium_home: Path
) -> None:
    shown = show_in_new_process(podium_home, table, "--offset", "75", "--limit", "10")
    assert shown["heavy"] == []  # the write planned its snapshot as it committed
    assert [r["id"] for r in shown["page"]["rows"]] == [f"r{i:04d}" for i in range(75, 80)]


def test_a_second_cold_show_reads_the_cached_plan_without_pyiceberg(
    table: str, podium_home: Path
) -> None:
    for entry in entries():
        entry.unlink()  # as a cache written by an older Podium, or pruned
    first = show_in_new_process(podium_home, table, "--offset", "45", "--limit", "10")
    second = show_in_new_process(podium_home, table, "--offset", "45", "--limit", "10")
    assert "pyiceberg" in first["heavy"]  # nothing cached yet: planned with pyiceberg
    assert second["heavy"] == []  # no pyiceberg, DuckDB, pandas, SQLAlchemy or typer
    assert second["page"] == first["page"]
    assert [r["id"] for r in second["page"]["rows"]] == [f"r{i:04d}" for i in range(45, 55)]
    assert second["page"]["total"] == 80
    assert second["page"]["rows"][0]["created_at"] == "2025-01-01 00:00:00+00:00"


def test_the_cache_answers_pages_and_searches_as_pyiceberg_does(
    table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    planned = [page(table, offset=o, limit=7).to_dict() for o in (0, 48, 75)]
    searched = page(table, search="answer 7", limit=5).to_dict()
    forget_in_memory(monkeypatch)
    assert open_view(table).table is None  # from the cache
    assert [page(table, offset=o, limit=7).to_dict() for o in (0, 48, 75)] == planned
    assert page(table, search="answer 7", limit=5).to_dict() == searched


def test_a_new_commit_is_read_from_its_own_metadata(
    table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert page(table, limit=1).total == 80
    before = len(entries())
    write(table, 20, 80, "append")
    clear_plans()
    got = page(table, offset=95, limit=10)
    assert got.total == 100 and [r["id"] for r in got.rows] == ids(95, 100)
    assert len(entries()) == before + 1  # a new metadata file, a new entry; old ones hold
    forget_in_memory(monkeypatch)
    assert page(table, limit=1).total == 100


def test_time_travel_is_exact_from_the_cache(table: str, monkeypatch: pytest.MonkeyPatch) -> None:
    old, new = (s.snapshot_id for s in list_snapshots(catalog.load_table(table)))
    assert page(table, snapshot_id=old, limit=100).total == 50
    assert page(table, limit=100).total == 80
    forget_in_memory(monkeypatch)
    then = page(table, snapshot_id=str(old), offset=45, limit=10)
    assert then.total == 50 and [r["id"] for r in then.rows] == ids(45, 50)
    assert then.snapshot_id == old
    assert page(table, snapshot_id=new, limit=1).total == 80


def test_a_snapshot_of_another_table_is_refused(
    table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    write("t.other", 5, 0, "create")
    other = list_snapshots(catalog.load_table("t.other"))[0].snapshot_id
    page(table, limit=1)
    clear_plans()
    with pytest.raises(NotFound, match=str(other)):
        page(table, snapshot_id=other)


def test_a_damaged_cache_file_is_ignored_and_rewritten(
    table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for stale in entries():
        stale.unlink()
    clear_plans()
    expected = page(table, offset=33, limit=4).rows
    (entry,) = entries()
    good = entry.read_text()
    for damage in ("{not json", json.dumps({**json.loads(good), "version": 0}), '{"plans": 1}'):
        entry.write_text(damage)
        clear_plans()
        assert page(table, offset=33, limit=4).rows == expected
        assert json.loads(entry.read_text()) == json.loads(good)  # rewritten whole
    # A damaged plan inside a well-formed entry is a miss too, never a wrong read.
    broken = json.loads(good)
    for plan in broken["plans"].values():
        plan["files"] = [["gs://bucket/elsewhere.parquet", 80, 0]]
    entry.write_text(json.dumps(broken))
    clear_plans()
    assert page(table, offset=33, limit=4).rows == expected


def test_mapped_tables_read_under_canonical_names_from_the_cache(
    podium_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = pa.table({"uid": ["a", "b"], "conversations": [[{"from": "human", "value": "hi"}]] * 2})
    write_batches("t.mapped", data.to_batches(), mode="create")
    set_properties(
        "t.mapped",
        {
            PROP_MAPPING: json.dumps(
                {"id": "uid", "messages": "conversations", "role": "from", "content": "value"}
            )
        },
    )
    expected = page("t.mapped").to_dict()
    forget_in_memory(monkeypatch)
    got = page("t.mapped").to_dict()
    assert got == expected
    assert got["rows"][0]["id"] == "a" and got["rows"][0]["messages"][0]["role"] == "human"


def test_s3_plans_are_cached_other_object_stores_and_deletes_are_not(podium_home: Path) -> None:
    def plan(path: str, simple: bool = True) -> FilePlan:
        return FilePlan("t.o", 7, (PlannedFile(path, 10, 0),), pa.schema([]), simple)

    for n, kept in enumerate((plan("gs://bucket/t/0.parquet"), plan("s3://b/t/0.parquet", False))):
        location = f"s3://bucket/t/metadata/{n}.json"
        plan_cache.remember(plan_cache.TableHead("t.o", location, 7, frozenset({7}), None), kept)
        assert plan_cache.lookup("t.o", location, 7) is None
    assert entries() == []
    s3 = plan("s3://bucket/t/data/0.parquet")
    head = plan_cache.TableHead("t.o", "s3://bucket/t/metadata/9.json", 7, frozenset({7}), None)
    plan_cache.remember(head, s3)
    cached = plan_cache.lookup("t.o", head.metadata_location, 7)
    assert cached is not None and cached.plan.files == s3.files


def test_a_deep_page_reads_one_footer_and_one_row_group(
    table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    page(table, limit=1)
    forget_in_memory(monkeypatch)
    opened: list[str] = []
    groups: list[tuple[str, tuple[int, ...]]] = []
    real_read = by_position._read_groups

    def spy_open(table, path, **options):  # type: ignore[no-untyped-def]
        opened.append(path)
        return real_open(table, path, **options)

    def spy_read(path, parquet, wanted, schema):  # type: ignore[no-untyped-def]
        groups.append((path, tuple(wanted)))
        return real_read(path, parquet, wanted, schema)

    monkeypatch.setattr(by_position, "open_parquet", spy_open)
    monkeypatch.setattr(by_position, "_read_groups", spy_read)
    got = page(table, offset=73, limit=4)
    assert [r["id"] for r in got.rows] == ids(73, 77)
    assert len(opened) == 1 and groups == [(opened[0], (0,))]


def test_rows_convert_utc_timestamps_as_pyarrow_does() -> None:
    when = datetime.datetime(2024, 5, 1, 3, 4, 5, 6, tzinfo=datetime.UTC)
    data = pa.table(
        {
            "t": pa.array([None, when], pa.timestamp("us", tz="UTC")),
            "naive": pa.array([None, when.replace(tzinfo=None)], pa.timestamp("us")),
            "s": ["x", None],
        }
    )
    assert arrow_rows.to_rows(data) == data.to_pylist()
    assert arrow_rows.to_rows(data.slice(0, 0)) == []


def ids(start: int, end: int) -> list[str]:
    return [f"r{i:04d}" for i in range(start, end)]


def test_anything_the_catalog_row_cannot_answer_is_a_miss(table: str, podium_home: Path) -> None:
    page(table, limit=1)  # the current snapshot is cached
    assert plan_cache.cached_snapshot(table, None) is not None
    assert plan_cache.cached_snapshot("cached", None) is None  # default namespace: no table
    assert plan_cache.cached_snapshot("t.nope", None) is None
    assert plan_cache.cached_snapshot("a.b.c", None) is None
    assert plan_cache.cached_snapshot(table, "main") is None  # refs go through pyiceberg
    (podium_home / "catalog.db").rename(podium_home / "moved.db")
    assert names.metadata_location("t", "cached") is None


def test_a_plain_page_reads_from_the_last_seen_metadata_while_the_catalog_is_asked(
    table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = page(table, offset=61, limit=4).to_dict()
    forget_in_memory(monkeypatch)
    guesses = spy_guesses(monkeypatch)

    def plain_path(*_: object, **__: object) -> None:
        raise AssertionError("the page waited for the catalog before reading")

    monkeypatch.setattr(query, "open_view", plain_path)
    assert page(table, offset=61, limit=4).to_dict() == expected
    [guess] = guesses
    assert guess.confirmed and guess.location == names.metadata_location("t", "cached")


def test_an_sqlite_catalog_is_asked_on_the_reading_thread(
    table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its row costs less than starting a thread, which in an app of ten sessions waited
    for the interpreter's lock (docs/faults.md); the guess is still confirmed."""
    expected = page(table, offset=61, limit=4).to_dict()
    guesses = spy_guesses(monkeypatch)
    assert page(table, offset=61, limit=4).to_dict() == expected
    [guess] = guesses
    assert guess._asking is None  # before: a "podium-location" thread per page
    assert guess.confirmed


APPEND = """
import sys
sys.path.insert(0, sys.argv[1])
from store_helpers import write_in_files
write_in_files("t.cached", 20, 80, "append", rows_per_group=10)
"""


def test_a_commit_from_another_process_is_seen_though_the_guess_was_older(
    table: str, podium_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another machine of the deployment (its own home, the same catalog and warehouse)
    appends: this home's last seen metadata is then stale, and the page is read at the
    catalog's new metadata, not the guess's."""
    assert page(table, limit=1).total == 80
    old = plan_cache.last_seen("t.cached")
    settings = get_settings()
    other = {
        **os.environ,
        "PODIUM_HOME": str(tmp_path / "other-home"),
        "PODIUM_CATALOG_URI": settings.catalog_uri,
        "PODIUM_WAREHOUSE": settings.warehouse,
    }
    here = str(Path(__file__).parent)
    subprocess.run([sys.executable, "-c", APPEND, here], env=other, check=True, timeout=300)
    assert plan_cache.last_seen("t.cached") == old  # the other home noted its own
    clear_plans()
    guesses = spy_guesses(monkeypatch)
    got = page(table, offset=95, limit=10)
    assert got.total == 100 and [r["id"] for r in got.rows] == ids(95, 100)
    [guess] = guesses
    assert guess.location == old and not guess.confirmed
    assert plan_cache.last_seen("t.cached") == names.metadata_location("t", "cached") != old


def spy_guesses(monkeypatch: pytest.MonkeyPatch) -> list[Guess]:
    made: list[Guess] = []

    def spy(name: str, snapshot_id: int | str | None) -> Guess | None:
        guess = guess_view(name, snapshot_id)
        if guess is not None:
            made.append(guess)
        return guess

    monkeypatch.setattr(query, "guess_view", spy)
    return made

"""The page cache's keys are exact: an id set is named by a digest of its sorted ids (the
hash of a frozenset, the key before, can be equal for two sets, and one set's page would
then be served for the other), and distinct id sets never share a kept page."""

from __future__ import annotations

from pathlib import Path

from store_helpers import write_in_files

from podium.store.read import page_cache
from podium.store.read.kept import forget_all
from podium.store.read.query import page

TABLE = "cache.sft"


def test_an_id_set_has_one_key_whatever_its_order_and_each_set_its_own() -> None:
    key = page_cache.conditions_key
    assert key(None, None, None, ["b", "a", "a"]) == key(None, None, None, ("a", "b"))
    sets = [
        [],
        [""],
        ["a"],
        ["a", "b"],
        ["a,b"],  # one id holding the separator a joined text would use
        ['a", "b'],  # one id that looks like two in JSON
        ["a\x00b"],
        ["a\x00", "b"],
        ["r0001", "r0002"],
        ["r0001", "r0003"],
    ]
    digests = {page_cache.ids_digest(ids) for ids in sets}
    assert len(digests) == len(sets)
    assert key(None, None, None, []) != key(None, None, None, None)  # no rows, not every row


def test_pages_of_distinct_id_sets_are_kept_apart(podium_home: Path) -> None:
    write_in_files(TABLE, 40, 0, "create", rows_per_group=10)
    forget_all()
    wanted = [{"r0003", "r0017"}, {"r0003", "r0031"}, {"r0017"}, {"r0003", "r0017", "r0031"}]
    for ids in wanted:  # each read cold, then kept
        assert {r["id"] for r in page(TABLE, ids=ids).rows} == ids
    for ids in wanted:  # each from the cache: still its own rows
        assert {r["id"] for r in page(TABLE, ids=sorted(ids, reverse=True)).rows} == ids
    kept = [key for key in page_cache.pages._values if key[-4] is not None]
    assert len(kept) == len(wanted)  # one page a set, the order of its ids aside

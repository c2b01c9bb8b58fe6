"""How a snapshot's data files are cut into groups for Ray tasks, and how the groups'
counts add up (no cluster needed: the Ray test checks the whole run)."""

from __future__ import annotations

from podium.store.read.file_plan import PlannedFile
from podium.validate.on_ray import group_files
from podium.validate.tally import Tally


def _files(*records: int) -> tuple[PlannedFile, ...]:
    return tuple(PlannedFile(f"/f{i}", n, sum(records[:i])) for i, n in enumerate(records))


def test_groups_are_contiguous_balanced_and_cover_every_file() -> None:
    files = _files(100, 100, 100, 100, 100, 100, 100, 100)
    groups = group_files(files, 4)
    assert [len(g) for g in groups] == [2, 2, 2, 2]
    assert tuple(f for g in groups for f in g) == files  # file order kept: report order


def test_never_more_groups_than_files_and_a_big_file_stands_alone() -> None:
    assert len(group_files(_files(10, 10), 8)) == 2
    groups = group_files(_files(1000, 10, 10, 10), 2)
    assert [sum(f.records for f in g) for g in groups] == [1000, 30]
    assert group_files((), 3) == []


def test_tallies_merged_count_what_one_tally_counts() -> None:
    batches = [
        [{"id": "a", "rule": "json", "kind": "eof"}, {"id": "a", "rule": "json", "kind": "key"}],
        [{"id": "b", "rule": "json", "kind": "eof"}],
        [{"id": "c", "rule": "xml", "kind": "tag"}],
    ]
    whole, merged = Tally(), Tally()
    for batch in batches:
        whole.add(batch)
        part = Tally()
        part.add(batch)
        merged.merge(part)
    assert merged == whole
    assert (merged.failures, merged.failing_rows) == (4, 3)

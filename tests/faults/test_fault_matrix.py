"""The fault matrix, a seeded sample (the whole matrix: `make fault-matrix`).

Each case runs one write path through the real CLI with one failpoint armed, then checks
that the table reads as before or after the write (never a mix), that no file a live
snapshot references is missing, and that the next `podium maintain --all` removes what
the write left uncommitted (tests/faults/fault_matrix.py).
"""

from __future__ import annotations

import random
from dataclasses import asdict

import pytest
from fault_matrix import PATHS, all_cases, run_matrix

SEED = 33


def _sample(k: int, seed: int) -> list:
    cases = all_cases()
    return random.Random(seed).sample(cases, k)


@pytest.mark.faults
@pytest.mark.clockless  # faults at named points, not at moments: may share the cores
@pytest.mark.parametrize(
    ("store", "count"),
    [("sqlite+local", 3), pytest.param("postgres+s3", 2, marks=pytest.mark.integration)],
)
def test_no_fault_loses_a_row_or_a_file(store: str, count: int) -> None:
    cases = _sample(count, SEED if store == "sqlite+local" else SEED + 1)
    # Every write path once on the local store: the sample adds points and actions.
    if store == "sqlite+local":
        seen = {c.path for c in cases}
        extra = [
            c
            for c in all_cases()
            if c.point == "commit.after" and c.path in PATHS and c.path not in seen
        ]
        cases += extra
    outcomes = run_matrix(store, cases)
    for o in outcomes:
        assert o.state in ("before", "after"), asdict(o)
        assert o.rows_lost == 0 and not o.unreadable, asdict(o)
        assert o.missing_files == 0, asdict(o)
        assert o.left_after_maintain == 0, asdict(o)
    # commit.after: the catalog committed, so the write must be there
    for o in outcomes:
        if o.point == "commit.after":
            assert o.state == "after", asdict(o)


@pytest.mark.faults
@pytest.mark.clockless
@pytest.mark.parametrize(
    "store", ["sqlite+local", pytest.param("postgres+s3", marks=pytest.mark.integration)]
)
def test_maintain_all_beside_foreign_tables_deletes_none_of_their_files(store: str) -> None:
    from sweep_cases import LAYOUTS, PREFIX

    # Every layout on the local store, each with one fault (seeded); two on S3.
    sweeps = [c for c in all_cases() if c.path.startswith(PREFIX)]
    rng = random.Random(SEED)
    layouts = LAYOUTS if store == "sqlite+local" else ("nested", "borrowed")
    cases = [rng.choice([c for c in sweeps if c.path == PREFIX + layout]) for layout in layouts]
    for o in run_matrix(store, cases):
        assert o.state == "before" and o.rows_lost == 0 and not o.unreadable, asdict(o)
        assert o.missing_files == 0 and o.left_after_maintain == 0, asdict(o)

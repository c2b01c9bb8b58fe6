"""Tags and branches whose commit fails: a lost answer is a success when the ref landed, a
commit that never landed is one line, and a commit lost to another writer is tried again
(issue 44, point 8: raw tracebacks, and a tag that landed reported as failed)."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import cli_fork
import pytest
from review_data import ALICE, make_table, row_id, sft_batches

from podium import failpoints
from podium.config import reset_settings
from podium.review.changes import Change, commit_change
from podium.review.refs import create_branch, create_tag
from podium.store.catalog import catalog as catalog_module
from podium.store.catalog.catalog import load_table
from podium.store.write.write import write_into

T = "t.tagged"
PODIUM = [sys.executable, "-m", "podium.cli"]


def _podium(*args: str, faults: str) -> tuple[int, str]:
    env = {**os.environ, "PODIUM_FAILPOINTS": faults}
    proc = cli_fork.run([*PODIUM, *args], capture_output=True, text=True, timeout=300, env=env)
    reset_settings()
    return proc.returncode, proc.stdout + proc.stderr


@pytest.mark.parametrize("verb", ["tag", "branch"])
def test_a_ref_whose_answer_is_lost_is_a_success(podium_home: Path, verb: str) -> None:
    make_table(T, 10)
    head = load_table(T).current_snapshot().snapshot_id  # type: ignore[union-attr]

    code, out = _podium(verb, T, "v1", faults="commit.after=raise")

    assert code == 0, out
    assert "Traceback" not in out and "answer was lost" in out
    ref = load_table(T).refs()["v1"]
    assert (ref.snapshot_id, ref.snapshot_ref_type.value) == (head, verb)


@pytest.mark.parametrize("verb", ["tag", "branch"])
def test_a_ref_that_never_landed_is_one_line(podium_home: Path, verb: str) -> None:
    make_table(T, 10)

    code, out = _podium(verb, T, "v1", faults="commit.before=raise")

    assert code not in (0, 75) and "Traceback" not in out, out
    assert "did not land" in out
    assert "v1" not in load_table(T).refs()


def test_a_tag_that_lost_a_race_to_another_commit_is_tried_again(
    podium_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tag's catalog commit read the table, then another writer's commit landed
    before its UPDATE (the one-row SQLite catalog checks the row it read): refused, so
    the tag is made again on the table as it is now."""
    make_table(T, 10)
    head = load_table(T).current_snapshot().snapshot_id  # type: ignore[union-attr]
    monkeypatch.setattr(catalog_module, "_lean", True)  # stages, then commits: a window
    monkeypatch.setenv(failpoints.ENV, "commit.before=pause@1")
    monkeypatch.setenv(failpoints.DIR_ENV, str(tmp_path))
    failpoints.reset()
    made: list[object] = []
    tagger = threading.Thread(target=lambda: made.append(create_tag(T, "v1", ALICE, head)))
    tagger.start()
    deadline = time.monotonic() + 120
    while not (tmp_path / "commit.before.reached").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (tmp_path / "commit.before.reached").exists()
    write_into(load_table(T), [list(sft_batches(12, batch=10))[1]])  # another writer lands
    (tmp_path / "commit.before.release").touch()
    tagger.join(timeout=120)

    assert made, "the tag was not made"
    table = load_table(T)
    assert table.refs()["v1"].snapshot_id == head
    assert table.current_snapshot().snapshot_id != head  # type: ignore[union-attr]
    assert len(table.scan().to_arrow()) == 12


@pytest.mark.parametrize(
    ("faults", "moved"), [("commit.after=raise", True), ("commit.before=raise", False)]
)
def test_a_fast_forward_whose_commit_fails_says_whether_main_moved(
    podium_home: Path, faults: str, moved: bool
) -> None:
    make_table(T, 10)
    main = load_table(T).current_snapshot().snapshot_id  # type: ignore[union-attr]
    create_branch(T, "review", ALICE)
    change = Change(deletes=frozenset({row_id(2)}), message="junk")
    commit_change(load_table(T), change, ALICE, branch="review")
    target = load_table(T).refs()["review"].snapshot_id

    code, out = _podium("branch", T, "review", "--fast-forward", faults=faults)

    assert "Traceback" not in out, out
    head = load_table(T).current_snapshot().snapshot_id  # type: ignore[union-attr]
    if moved:
        assert code == 0 and "answer was lost" in out and head == target, out
    else:
        assert code not in (0, 75) and "did not land" in out and head == main, out

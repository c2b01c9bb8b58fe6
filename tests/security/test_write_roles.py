"""Every write path checks the acting user's role through `podium.identity.require`:
a viewer of a shared deployment is refused by the CLI and by the functions the review
pages call; a reviewer's labels and edits name them."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import cli_fork
import pytest

from podium.app.roles import current_user
from podium.app.rows import saves
from podium.app.views.review import queue as review_queue
from podium.app.views.review import snapshots as review_snapshots
from podium.config import reset_settings
from podium.errors import PermissionDenied
from podium.identity import User
from podium.review.annotations import history, load_annotations
from podium.store.catalog.catalog import load_table, table_exists
from podium.store.state.users import AUTHOR, acting_user, grant, use_session_user
from podium.store.write.ingest import import_file
from podium.store.write.write import drop_table

ADMIN = User(name="boss@example.org", role="admin", source="config")
VIEWER = "viewer@example.org"
REVIEWER = "reviewer@example.org"


@pytest.fixture
def shared(podium_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A shared home (login is by PODIUM_USER) with ns.chat, a registered viewer and
    reviewer; strangers are refused rather than given a default role."""
    monkeypatch.setenv("PODIUM_ADMINS", ADMIN.name)
    monkeypatch.setenv("PODIUM_USER", ADMIN.name)
    monkeypatch.setenv("PODIUM_DEFAULT_ROLE", "none")
    reset_settings()
    src = podium_home / "uploads" / "chat.jsonl"  # a shared home reads only its roots
    src.parent.mkdir(parents=True)
    src.write_text(
        "".join(
            f'{{"id": "r{i}", "messages": [{{"role": "user", "content": "q{i}"}}]}}\n'
            for i in range(3)
        )
    )
    import_file(src, "ns.chat")
    grant(ADMIN, VIEWER, "viewer")
    grant(ADMIN, REVIEWER, "reviewer")
    yield podium_home
    use_session_user(None)


def podium_as(user: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PODIUM_USER": user}
    return cli_fork.run(
        [sys.executable, "-m", "podium.cli", *args],
        env=env,
        input="a\nq\n",
        capture_output=True,
        text=True,
        timeout=300,
    )


# Each write command and the action its refusal names.
VIEWER_REFUSED: list[tuple[tuple[str, ...], str]] = [
    (("label", "ns.chat", "r0", "--label", "bad"), "annotate"),
    (("edit", "ns.chat", "r0", "--turn", "0", "--content", "x", "--why", "w"), "edit"),
    (("delete-rows", "ns.chat", "r1", "--why", "w"), "edit"),
    (("tag", "ns.chat", "v1"), "edit"),
    (("branch", "ns.chat", "fix"), "edit"),
    (("review", "start", "ns.chat", "--size", "2"), "annotate"),
    (("map", "ns.chat", "--messages", "messages"), "edit"),
    (("export", "ns.chat", "out.jsonl"), "run job"),
    (("import", "podium-home/uploads/chat.jsonl", "--table", "ns.more"), "run job"),
    (("demo",), "run job"),
    (("models", "add-endpoint", "http://127.0.0.1:9/v1", "--name", "ep"), "serve model"),
    (("models", "stop", "base"), "serve model"),
    (("serve", "base"), "serve model"),
    (("vote", "cmp.none"), "vote"),
]


@pytest.mark.parametrize(
    ("args", "action"), VIEWER_REFUSED, ids=[" ".join(a[:2]) for a, _ in VIEWER_REFUSED]
)
def test_a_viewer_is_refused_by_every_write_command(
    shared: Path, tmp_path: Path, args: tuple[str, ...], action: str
) -> None:
    before = load_table("ns.chat").current_snapshot().snapshot_id
    proc = cli_fork.run(
        [sys.executable, "-m", "podium.cli", *args],
        env={**os.environ, "PODIUM_USER": VIEWER},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 3, (proc.returncode, proc.stdout, proc.stderr)
    message = " ".join(proc.stderr.split())
    assert f"{VIEWER} has role 'viewer', and {action} needs" in message, message
    assert load_table("ns.chat").current_snapshot().snapshot_id == before
    assert not table_exists("ns.chat__annotations") and not table_exists("demo.chat")
    assert not (shared / "exports" / "out.jsonl").exists()


def test_votes_name_the_acting_user_and_take_no_typed_name(shared: Path) -> None:
    proc = podium_as(REVIEWER, "vote", "cmp.none", "--voter", "someone-else")
    assert proc.returncode == 2 and "No such option: --voter" in proc.stderr, proc.stderr


def test_a_reviewers_label_and_edit_name_them(shared: Path) -> None:
    proc = podium_as(REVIEWER, "label", "ns.chat", "r0", "--label", "bad", "--json")
    assert proc.returncode == 0, proc.stderr
    assert [a.author for a in history(load_annotations("ns.chat"), "r0")] == [REVIEWER]
    proc = podium_as(
        REVIEWER, "edit", "ns.chat", "r0", "--turn", "0", "--content", "fixed", "--why", "typo"
    )
    assert proc.returncode == 0, proc.stderr
    summary = load_table("ns.chat").current_snapshot().summary
    assert summary[AUTHOR] == REVIEWER


def test_the_review_pages_handlers_refuse_a_viewer(shared: Path) -> None:
    """A forged request from the Browse/Review pages reaches these functions, with the
    user the app's login resolved (the session user), not one the request names."""
    use_session_user(lambda: User(name=VIEWER, role="viewer", source="oidc"))
    viewer = current_user()
    assert viewer == acting_user() and viewer.role == "viewer"
    snap = load_table("ns.chat").current_snapshot().snapshot_id
    forged = [
        lambda: saves.label_rows("ns.chat", ["r0"], viewer, "bad"),
        lambda: saves.rate_row("ns.chat", "r0", viewer, 1),
        lambda: saves.note_row("ns.chat", "r0", viewer, "x"),
        lambda: saves.delete_rows("ns.chat", ["r1"], viewer, why="w", base=snap),
        lambda: review_snapshots.tag("ns.chat", "v1", viewer),
        lambda: review_snapshots.branch("ns.chat", "fix", viewer),
        lambda: review_queue.start_queue("ns.chat", 2, viewer, sampled=False),
    ]
    for call in forged:
        with pytest.raises(PermissionDenied, match="has role 'viewer'"):
            call()
    assert load_table("ns.chat").current_snapshot().snapshot_id == snap
    assert not table_exists("ns.chat__annotations")
    assert set(load_table("ns.chat").metadata.refs) == {"main"}  # no tag, no branch


def test_dropping_a_table_needs_an_admin(shared: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PODIUM_USER", REVIEWER)
    reset_settings()
    with pytest.raises(PermissionDenied, match="drop table needs 'admin'"):
        drop_table("ns.chat")
    assert table_exists("ns.chat")
    monkeypatch.setenv("PODIUM_USER", ADMIN.name)
    reset_settings()
    drop_table("ns.chat")
    assert not table_exists("ns.chat")

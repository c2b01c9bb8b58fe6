"""A role that cannot write is not offered the write controls on Browse and Review:
a caption names the role needed instead (the write paths refuse them regardless)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from app_pages import open_page, shown
from streamlit.testing.v1 import AppTest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "review"))
from review_data import BOB, make_table, row_id  # noqa: E402

from podium.app.rows import saves as rs  # noqa: E402
from podium.config import reset_settings  # noqa: E402
from podium.identity import User  # noqa: E402
from podium.store.state.users import grant, use_session_user  # noqa: E402

T = "rv.viewer"
ADMIN = User(name="boss@example.org", role="admin", source="oidc")
VIEWER = {"is_logged_in": True, "email_verified": True, "email": "vic@example.org", "name": "Vic"}
REVIEWER = {
    "is_logged_in": True,
    "email_verified": True,
    "email": "rita@example.org",
    "name": "Rita",
}


@pytest.fixture
def shared(podium_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A table, then login configured (AppTest seeds `st.user`; no provider is reached);
    anyone not granted a role is a viewer."""
    make_table(T, 4)
    rs.delete_rows(T, [row_id(3)], BOB, why="junk", base=None)  # a second snapshot to diff
    monkeypatch.setenv("PODIUM_OIDC_ISSUER", "http://127.0.0.1:9")
    monkeypatch.setenv("PODIUM_OIDC_CLIENT_ID", "podium")
    monkeypatch.setenv("PODIUM_ADMINS", ADMIN.name)
    reset_settings()
    grant(ADMIN, str(REVIEWER["email"]), "reviewer")
    yield
    use_session_user(None)  # AppTest ran the app, and its login, in this process


def _labels(at: AppTest) -> set[str]:
    return {shown(b.label) for b in at.button}


def _captions(at: AppTest) -> str:
    return "\n".join(shown(c.value) for c in at.caption)


def test_a_viewer_browses_without_label_edit_or_bulk_controls(shared: None) -> None:
    from podium.signals.job import SignalsConfig, compute_signals

    compute_signals(SignalsConfig.model_validate({"table": {"name": T}, "signals": ["exact-dup"]}))
    at = open_page("browse", user=VIEWER, table=T, sample=row_id(1))
    assert "Signed in as **Vic** · viewer" in _captions(at)  # the sidebar's one-line caption
    assert at.dataframe, "the rows are still shown"
    offered = _labels(at)
    assert not offered & {"1 good", "2 bad", "Save rating and note", "Save edit"}, offered
    assert not offered & {"Add turn at the end", "Remove turn", "Delete row"}, offered
    assert not [b for b in at.button if b.key and b.key.startswith("browse.bulk.")]
    captions = _captions(at)
    assert "Your role (viewer) can read this; labels, ratings and notes needs reviewer" in captions
    assert "editing or removing rows needs reviewer" in captions
    assert "labelling or removing rows in bulk needs reviewer" in captions
    assert "acting on signals needs reviewer" in captions  # keep one per cluster, ...
    assert not [b for b in at.button if b.key and b.key.startswith("browse.act.")]


def test_a_reviewer_gets_the_controls_a_viewer_does_not(shared: None) -> None:
    at = open_page("browse", user=REVIEWER, table=T, sample=row_id(1))
    offered = _labels(at)
    assert {"1 good", "Save rating and note", "Save edit", "Delete row"} <= offered, offered
    assert at.button(key="browse.bulk.do_remove")
    assert "needs reviewer" not in _captions(at)


def test_a_viewer_reads_review_snapshots_but_gets_no_queue_tag_or_branch(shared: None) -> None:
    at = open_page("review", user=VIEWER, table=T)
    assert not [b for b in at.button if b.key and b.key.startswith("FormSubmitter:review.")]
    assert "reviewing from a queue needs reviewer" in _captions(at)
    assert not at.error, [e.value for e in at.error]  # no claim was tried and refused
    at.segmented_control(key="review.mode").set_value("Snapshots").run()
    assert not at.exception, at.exception
    assert any("0 added, 1 removed" in shown(m.value) for m in at.markdown), (
        "the diff is still readable"
    )
    assert not [b for b in at.button if b.key and b.key.startswith("FormSubmitter:review.")]
    assert "making tags and branches needs reviewer" in _captions(at)

"""The job tray: the user's running jobs first, then recent ones, on every page."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from streamlit.testing.v1 import AppTest

from podium.app.job_tray_model import tray_items
from podium.jobs.queue import now

MAIN = str(Path(__file__).resolve().parents[2] / "podium" / "app" / "main.py")


def _job(job_id: str, status: str, minutes_ago: float, done: int | None = None) -> dict:
    at = now() - timedelta(minutes=minutes_ago)
    return {
        "id": job_id,
        "kind": "generate",
        "status": status,
        "created_at": at,
        "finished_at": at if status in ("succeeded", "failed") else None,
        "started_at": at,
        "progress_done": done,
        "progress_total": 10 if done is not None else None,
        "progress_message": "",
    }


def test_running_first_then_recent_and_old_ones_left_out() -> None:
    jobs = [
        _job("new-done", "succeeded", 1),
        _job("running", "running", 5, done=4),
        _job("queued", "queued", 2),
        _job("old", "failed", 60 * 48),
    ]
    items = tray_items(jobs, now())
    assert [i.job_id for i in items] == ["running", "queued", "new-done"]
    assert items[0].progress == 0.4 and items[0].active and not items[2].active
    assert items[0].label == "generate · running · 4/10 (40%) · about 7m30s left"
    assert items[1].label == (
        "generate · queued · waiting for a free slot: job running (generate) running"
    )


def test_every_page_shows_the_tray_with_a_link_to_the_logbook(podium_home: Path) -> None:
    from podium.jobs.cards import parse_card
    from podium.jobs.launch import submit
    from podium.store.write.demo import DEMO_TABLES

    DEMO_TABLES["demo.chat"]()
    at = AppTest.from_file(MAIN, default_timeout=60)
    at.run()
    assert "No jobs yet" in at.sidebar.caption[-1].value
    # Queued now (as from the CLI): the tray's read is shared by every tab for a second,
    # but a page's own run reads afresh, so the very next run shows the job.
    job_id = submit(parse_card("---\nkind: export\ninput: {name: demo.chat}\npath: x.jsonl\n---\n"))
    at.run()
    for page in ("views/home/view.py", "views/validate/view.py", "views/compare/view.py"):
        at.switch_page(page).run()
        assert not at.exception, at.exception
        links = [p.proto for p in at.sidebar.get("page_link")]
        assert any(f"job={job_id}" in p.query_string and "queued" in p.label for p in links), page

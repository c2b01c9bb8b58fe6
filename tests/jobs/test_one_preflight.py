"""Every way of starting a job runs its kind's preflight exactly once.

The CLI used to check a job twice (the command, then the queue); a way that skipped the
queue's check would run an unchecked card. `test-counted` (kinds_for_tests.py) leaves a
line in the home per preflight; each path below must add exactly one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner
from kinds_for_tests import PREFLIGHT_LOG

from podium.cli import app
from podium.jobs.cards import Card, parse_card
from podium.jobs.launch import run_foreground, run_in_process, submit
from podium.jobs.logbook import rerun, submit_config
from podium.jobs.queue import get_job


def preflights(home: Path) -> int:
    log = home / PREFLIGHT_LOG
    return len(log.read_text().splitlines()) if log.exists() else 0


def once(home: Path, path: str, start: Callable[[], object]) -> object:
    before = preflights(home)
    result = start()
    assert preflights(home) - before == 1, f"{path}: {preflights(home) - before} preflights"
    return result


def cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_every_way_of_starting_a_job_is_checked_once(jobs_home: Path, tmp_path: Path) -> None:
    card = tmp_path / "counted.md"
    start = ("start", "test-counted", "--steps", "1")
    once(jobs_home, "podium start --queue", lambda: cli(*start, "--queue"))
    once(jobs_home, "podium start", lambda: cli(*start))
    once(jobs_home, "podium start --card", lambda: cli(*start, "--card", str(card)))
    once(jobs_home, "podium run CARD", lambda: cli("run", str(card), "--quiet"))
    once(jobs_home, "podium submit CARD", lambda: cli("submit", str(card)))
    once(jobs_home, "app form", lambda: submit_config("test-counted", {"steps": 1}))
    text = card.read_text()
    once(jobs_home, "launch.submit", lambda: submit(parse_card(text)))
    once(jobs_home, "run_foreground", lambda: run_foreground(parse_card(text), quiet=True))
    job = once(
        jobs_home,
        "run_in_process",
        lambda: run_in_process(Card("test-counted", parse_card(text).config)),
    )
    assert isinstance(job, dict) and job["status"] == "succeeded"
    again = once(jobs_home, "Logbook re-run", lambda: rerun(job["id"]))
    assert get_job(str(again))["status"] == "queued"


def test_a_rerun_with_outputs_is_checked_once(jobs_home: Path) -> None:
    """A re-run into a new table (compared with the original afterwards)."""
    job = run_in_process(parse_card("---\nkind: test-counted\nsteps: 1\ntable: ns.out\n---\n"))
    assert job["status"] == "succeeded"
    once(jobs_home, "podium jobs rerun", lambda: cli("jobs", "rerun", job["id"]))

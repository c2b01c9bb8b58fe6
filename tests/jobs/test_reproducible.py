"""Reproducible by default (issue 29): a sampling card pins its seed, a re-run uses it,
and a re-run under a changed environment says which pins differ."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from jobs_helpers import podium

from podium.jobs.cards import Card, parse_card, pin_inputs, validate_config
from podium.jobs.launch import run_in_process
from podium.jobs.queue import get_job


def _front(card_text: str) -> dict:
    return yaml.safe_load(card_text.split("---")[1])


def test_an_unset_seed_is_drawn_once_when_inputs_are_pinned(jobs_home: Path) -> None:
    config = validate_config("test-sampling", {"table": "ns.s"})
    assert config.seed is None
    pinned = pin_inputs(config)
    assert isinstance(pinned.seed, int) and 0 <= pinned.seed < 2**31 - 1
    assert pin_inputs(pinned).seed == pinned.seed  # pinning again keeps it
    given = validate_config("test-sampling", {"table": "ns.s", "seed": 3})
    assert pin_inputs(given).seed == 3
    # Kinds whose seed is not optional, or that have none, are left as they are.
    steps = validate_config("test-steps", {"steps": 1})
    assert pin_inputs(steps) == steps


def test_a_card_without_seed_is_stored_with_one_and_reruns_identical(jobs_home: Path) -> None:
    job = run_in_process(parse_card("---\nkind: test-sampling\ntable: ns.s\n---\n"))
    assert job["status"] == "succeeded", job["error"]
    seed = _front(get_job(job["id"])["card"])["seed"]
    assert isinstance(seed, int)
    report = json.loads(podium("jobs", "rerun", job["id"], "--compare", "--json", "-q").stdout)
    assert report["all_identical"] is True, report
    again = _front(get_job(report["rerun_job_id"])["card"])
    assert again["seed"] == seed
    assert report["tables"][0]["identical"] == 4


def test_the_same_card_queued_twice_draws_two_seeds(jobs_home: Path) -> None:
    card = Card("test-sampling", validate_config("test-sampling", {"table": "ns.a"}))
    first = run_in_process(card)
    card.config = validate_config("test-sampling", {"table": "ns.b"})
    second = run_in_process(card)
    seeds = {_front(get_job(j["id"])["card"])["seed"] for j in (first, second)}
    assert len(seeds) == 2


def _set_card(job_id: str, card: str) -> None:
    from sqlalchemy import update

    from podium.jobs.tables import db, jobs

    with db().begin() as conn:
        conn.execute(update(jobs).where(jobs.c.id == job_id).values(card=card))


def test_a_rerun_under_a_changed_environment_names_each_differing_pin(jobs_home: Path) -> None:
    job = run_in_process(parse_card("---\nkind: test-sampling\ntable: ns.s\n---\n"))
    card = get_job(job["id"])["card"]
    env = _front(card)["environment"]
    assert env["torch_version"] and env["device"] in ("cpu", "cuda")
    assert "determinism" not in env  # only training cards promise exact or tolerance
    changed = card.replace(f"podium_commit: {env['podium_commit']}", "podium_commit: 0123abc")
    changed = changed.replace(f"torch_version: {env['torch_version']}", "torch_version: 1.0.0")
    _set_card(job["id"], changed)
    report = json.loads(podium("jobs", "rerun", job["id"], "--compare", "--json", "-q").stdout)
    found = report["environment_differences"]
    assert f"Podium commit: card 0123abc, now {env['podium_commit']}" in found, found
    assert f"torch version: card 1.0.0, now {env['torch_version']}" in found, found
    assert len(found) == 2
    assert report["verdict"] == "identical"  # same seed, same rows: only the pins moved
    text = podium("jobs", "rerun", job["id"], "--compare", "-q").stdout
    assert "environment differs from the original's:\n  Podium commit: card 0123abc" in text


def test_logbook_says_whether_a_job_reproduces(jobs_home: Path) -> None:
    from podium.app.views.logbook.model import reproducibility
    from podium.jobs.queue import now

    today = now().strftime("%Y-%m-%d")
    job = run_in_process(parse_card("---\nkind: test-sampling\ntable: ns.s\n---\n"))
    assert reproducibility(get_job(job["id"])) == (
        f"Reproducibility: not checked yet: podium jobs rerun {job['id']} --compare"
    )
    podium("jobs", "rerun", job["id"], "--compare", "-q")
    assert reproducibility(get_job(job["id"])) == f"Reproducibility: re-ran identical on {today}"

    # A card from before seeds were pinned: it says so, and a re-run says why it differs.
    old = run_in_process(parse_card("---\nkind: test-sampling\ntable: ns.old\n---\n"))
    seed = _front(get_job(old["id"])["card"])["seed"]
    _set_card(old["id"], get_job(old["id"])["card"].replace(f"seed: {seed}", "seed: null"))
    assert reproducibility(get_job(old["id"])) == "Reproducibility: not reproducible: no seed"
    report = json.loads(podium("jobs", "rerun", old["id"], "--compare", "--json", "-q").stdout)
    assert report["verdict"] == "differs" and report["no_seed"] is True
    assert reproducibility(get_job(old["id"])) == (
        "Reproducibility: differs: the original card has no seed; ns.old: 4 of 4 rows "
        f"(re-run {today})"
    )
    steps = run_in_process(parse_card("---\nkind: test-steps\nsteps: 1\n---\n"))
    failed = run_in_process(parse_card("---\nkind: test-steps\nfail_at: 0\n---\n"))
    assert reproducibility(get_job(failed["id"])) == ""
    assert reproducibility(get_job(steps["id"])) == ""  # no output a re-run could compare


def test_a_validation_report_left_to_its_default_name_reruns_identical(jobs_home: Path) -> None:
    """Before: its card names no output table (`report: null`), so re-run refused it; and
    a row failing twice matched its re-run's rows two by two, as if they differed."""
    import pyarrow as pa

    from podium.store.schema import SFT_ARROW_SCHEMA
    from podium.store.write.write import write_table

    def turns(*answers: str) -> list[dict[str, str]]:
        return [m for a in answers for m in ({"role": "user", "content": "q"},
                                             {"role": "assistant", "content": a})]  # fmt: skip

    rows = [
        {"id": "ok", "messages": turns('{"a": 1}')},
        {"id": "twice", "messages": turns("{broken", "not json either")},
        {"id": "once", "messages": turns('{"b": 2}', "[1, 2")},
    ]
    write_table("ns.v", pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA))
    config = validate_config("validate", {"table": {"name": "ns.v"}, "rules": ["json"]})
    job = run_in_process(Card("validate", config))
    assert job["status"] == "succeeded", job["error"]
    report = json.loads(podium("jobs", "rerun", job["id"], "--compare", "--json", "-q").stdout)
    [table] = report["tables"]
    assert (table["original"], table["rerun"]) == ("ns.v__validation", "ns.v__validation__rerun_1")
    assert table["key"] == ["id", "turn", "rule", "message_offset", "offset"]
    assert (table["identical"], table["differing"], table["only_rerun"]) == (3, 0, 0), table
    assert report["verdict"] == "identical"

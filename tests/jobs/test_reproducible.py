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

"""Blind pairs, votes in the Iceberg table (concurrent voters lose nothing), vibes hand-off."""

from __future__ import annotations

import threading

import pytest

from generators.vibes import list_vibes
from podium.compare.ratings import ratings_report
from podium.compare.votes import blind_pair, cast_vote, list_votes, send_to_vibes, voted_prompts
from podium.errors import InvalidInput, PermissionDenied
from podium.identity import User
from podium.store.catalog.catalog import load_table


def reviewer(name: str) -> User:
    return User(name=name, role="reviewer", source="oidc")


def test_blind_sides_are_stable_per_voter_and_differ_between_voters(comparison):
    pairs = {v: [blind_pair(comparison, it, v) for it in comparison.items] for v in ("ann", "bob")}
    assert pairs["ann"] == [blind_pair(comparison, it, "ann") for it in comparison.items]
    voters = [f"voter{i}" for i in range(12)]
    firsts = {blind_pair(comparison, comparison.items[0], v).model_a for v in voters}
    assert firsts == {"alpha", "omega"}  # both orders occur: sides really are shuffled
    assert all({p.model_a, p.model_b} == {"alpha", "omega"} for p in pairs["ann"])


def test_vote_records_exact_samples_and_sides(comparison):
    item = comparison.items[0]
    pair = blind_pair(comparison, item, "ann")
    row = cast_vote(comparison, pair, "A", reviewer("ann"), note="cleaner")
    stored = list_votes("cmp.colours")
    assert len(stored) == 1 and stored[0]["id"] == row["id"]
    vote = stored[0]
    assert vote["winner"] == pair.model_a and vote["model_b"] == pair.model_b
    assert vote["sample_a"] == item.answer_of(pair.model_a).sample_id
    assert vote["sample_b"] == item.answer_of(pair.model_b).sample_id
    assert vote["note"] == "cleaner" and vote["comparison"] == "cmp.colours"
    assert voted_prompts("cmp.colours", "ann")[item.prompt_id]["verdict"] == "A"
    with pytest.raises(InvalidInput, match="Unknown verdict"):
        cast_vote(comparison, pair, "C", reviewer("ann"))
    with pytest.raises(InvalidInput, match="voter"):
        cast_vote(comparison, pair, "A", reviewer(" "))
    viewer = User(name="vic@example.org", role="viewer", source="oidc")
    with pytest.raises(PermissionDenied, match="vote needs 'reviewer'"):
        cast_vote(comparison, pair, "A", viewer)
    assert len(list_votes("cmp.colours")) == 1


def test_concurrent_voters_lose_nothing(comparison):
    voters = [f"v{i}" for i in range(6)]
    errors: list[BaseException] = []

    def vote(voter: str) -> None:
        try:
            for item in comparison.items:
                cast_vote(comparison, blind_pair(comparison, item, voter), "tie", reviewer(voter))
        except BaseException as exc:  # noqa: BLE001 - surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=vote, args=(v,)) for v in voters]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    votes = list_votes("cmp.colours")
    assert len(votes) == len(voters) * len(comparison.items)
    assert {(v["voter"], v["prompt_id"]) for v in votes} == {
        (voter, it.prompt_id) for voter in voters for it in comparison.items
    }
    assert len(load_table("compare.votes").snapshots()) == len(votes)


def test_votes_move_the_ratings(comparison):
    before = ratings_report(comparison, list_votes("cmp.colours"), bootstrap=20)
    assert before["votes"] == 0
    assert [r["rating"] for r in before["ratings"]] == pytest.approx([1000.0, 1000.0])
    for voter in ("ann", "bob", "cy"):
        for item in comparison.items:
            pair = blind_pair(comparison, item, voter)
            cast_vote(comparison, pair, "A" if pair.model_a == "alpha" else "B", reviewer(voter))
    after = ratings_report(comparison, list_votes("cmp.colours"), bootstrap=20)
    assert after["votes"] == 12 and after["ratings"][0]["model"] == "alpha"
    assert after["ratings"][0]["rating"] > 1000 > after["ratings"][1]["rating"]
    assert after["win_rates"]["alpha"]["omega"] == 1.0
    assert after["pass_rates"]["alpha"]["all"] > after["pass_rates"]["omega"]["all"]


def test_both_bad_prompt_goes_to_vibe_checks(comparison):
    vid = send_to_vibes(comparison, "p3", reviewer("ann"), note="should be JSON")
    rows = list_vibes(tags=["both-bad"])
    assert [r["id"] for r in rows] == [vid]
    assert rows[0]["prompt"] == "Give the colour of snow as JSON."
    assert rows[0]["ideal"] == "should be JSON" and "white, I think" in rows[0]["answer"]

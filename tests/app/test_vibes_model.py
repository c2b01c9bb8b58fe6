"""The Vibe-check list's count while a submission waits for its answer."""

from __future__ import annotations

from podium.app.views.vibes.model import submissions_caption


def test_the_count_says_a_submission_is_waiting_for_its_answer() -> None:
    """Before: the list kept saying "0 submissions" for the minute the model took to
    start and answer (the count was drawn before the submit, and stood until its end)."""
    assert submissions_caption(0, "ep") == "0 submissions · 1 more once ep has answered"
    assert submissions_caption(1, "") == "1 submission · 1 more"
    assert submissions_caption(1_200) == "1,200 submissions"

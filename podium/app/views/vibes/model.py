"""What the Vibe-check page says, without Streamlit (storage and selection live in
`generators.vibes`)."""

from __future__ import annotations


def submissions_caption(count: int, waiting_on: str | None = None) -> str:
    """ "3 submissions"; while a submission waits for `waiting_on`'s answer (it is stored
    with it, once the answer is in) "0 submissions · 1 more once ep has answered": the
    list is drawn before the answer streams, so it never reads as if the submit was lost.
    `waiting_on` "" means a submission being stored without an answer."""
    text = f"{count:,} submission{'' if count == 1 else 's'}"
    if waiting_on is None:
        return text
    return text + (f" · 1 more once {waiting_on} has answered" if waiting_on else " · 1 more")

"""A login counts until its ID token expires or its person presses "Log out" (issue 44,
point 21: a login cookie copied before "Log out" worked for its 30 days)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from podium.store.state.sessions import LEEWAY_S, end_sessions, login_refusal

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def claims(issued: datetime, lifetime_s: int = 3600) -> dict[str, object]:
    at = int(issued.timestamp())
    return {"email": "kate@example.org", "iat": at, "exp": at + lifetime_s}


def test_an_expired_or_timeless_login_does_not_count(podium_home: Path) -> None:
    assert login_refusal(claims(NOW), "kate@example.org", NOW) is None
    late = NOW + timedelta(seconds=3600 + LEEWAY_S + 1)
    assert "expired" in str(login_refusal(claims(NOW), "kate@example.org", late))
    assert "no issue or expiry" in str(login_refusal({"iat": 1}, "kate@example.org", NOW))
    assert login_refusal({"iat": True, "exp": True}, "kate@example.org", NOW)


def test_log_out_ends_every_earlier_login_of_that_person_only(podium_home: Path) -> None:
    copied = claims(NOW - timedelta(minutes=5))
    end_sessions("kate@example.org", NOW)
    assert "ended by Log out" in str(login_refusal(copied, "kate@example.org", NOW))
    assert login_refusal(copied, "rita@example.org", NOW) is None  # someone else's
    assert login_refusal(claims(NOW), "kate@example.org", NOW) is None  # logged in again
    end_sessions("kate@example.org", NOW + timedelta(minutes=1))  # the later one counts
    assert login_refusal(claims(NOW), "kate@example.org", NOW) is not None


def test_log_out_ends_the_login_pressing_it_even_in_the_second_it_was_issued(
    podium_home: Path,
) -> None:
    """CI: a cookie copied from a login made in the second of its "Log out" still signed
    in (`iat` has whole seconds, and only logins issued before that second ended)."""
    login = claims(NOW)
    end_sessions("kate@example.org", NOW + timedelta(milliseconds=400), issued=login["iat"])
    assert "ended by Log out" in str(login_refusal(login, "kate@example.org", NOW))
    # A provider whose clock runs 30 s ahead of this host's: its login ends too.
    ahead = claims(NOW + timedelta(seconds=30))
    end_sessions("kate@example.org", NOW, issued=ahead["iat"])
    assert login_refusal(ahead, "kate@example.org", NOW) is not None
    # A login issued in a later second is a new one.
    assert login_refusal(claims(NOW + timedelta(seconds=31)), "kate@example.org", NOW) is None

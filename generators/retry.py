"""When and how a request to a model server is tried again.

A 429 (rate limit), a 5xx or a dropped connection is usually passing: the request is
retried with exponential backoff and jitter (so many requests in flight do not come
back at the same instant), honouring a server's `Retry-After`, within a bound on tries
and on total time. Each retry is logged through the job's `Reporter`; once the bound
is reached the caller gets the last error. Other 4xx answers are final: retrying a
prompt the server refused would only repeat the refusal.
"""

from __future__ import annotations

import openai
from pydantic import BaseModel, Field
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    stop_before_delay,
    wait_exponential_jitter,
)

from podium.reporting import Reporter

BACKOFF_FIRST_S = 0.5
BACKOFF_MAX_S = 8.0
JITTER_S = 0.5
RETRY_AFTER_MAX_S = 60.0  # a server asking for longer is treated as down


class RetryPolicy(BaseModel):
    """Bounds on retrying one request (settings of every job that calls a model)."""

    retry_attempts: int = Field(
        5,
        ge=1,
        le=20,
        description="Tries per request, the first included, on 429, 5xx or a dropped connection.",
    )
    retry_max_wait_s: float = Field(
        120.0,
        gt=0,
        le=3600,
        description="Stop retrying a request this many seconds after its first try.",
    )


def retryable(exc: BaseException) -> bool:
    if isinstance(exc, openai.APIConnectionError):  # includes timeouts
        return True
    return isinstance(exc, openai.APIStatusError) and (
        exc.status_code == 429 or exc.status_code >= 500
    )


def describe(exc: BaseException | None) -> str:
    if isinstance(exc, openai.APIStatusError):
        return f"{exc.status_code} {exc.message}"
    return f"{type(exc).__name__}: {exc}"


def _retry_after(exc: BaseException | None) -> float:
    if not isinstance(exc, openai.APIStatusError):
        return 0.0
    try:
        return max(0.0, float(exc.response.headers.get("retry-after", "")))
    except ValueError:  # absent, or an HTTP date: the backoff decides
        return 0.0


_backoff = wait_exponential_jitter(multiplier=BACKOFF_FIRST_S, max=BACKOFF_MAX_S, jitter=JITTER_S)


def _wait(state: RetryCallState) -> float:
    exc = state.outcome.exception() if state.outcome else None
    return max(_backoff(state), min(_retry_after(exc), RETRY_AFTER_MAX_S))


def retrying(policy: RetryPolicy, reporter: Reporter, target: str) -> AsyncRetrying:
    """`async for attempt in retrying(...): with attempt: ...` under `policy`.

    Raises `tenacity.RetryError` once the bound is reached (the last error is
    `err.last_attempt.exception()`); a non-retryable error is raised as it is.
    """

    def log_retry(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        reporter.log(
            f"request to {target} failed ({describe(exc)}); retry "
            f"{state.attempt_number} of {policy.retry_attempts - 1} in {wait:.1f} s"
        )

    return AsyncRetrying(
        retry=retry_if_exception(retryable),
        stop=stop_after_attempt(policy.retry_attempts) | stop_before_delay(policy.retry_max_wait_s),
        wait=_wait,
        before_sleep=log_retry,
    )

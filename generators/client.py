"""Batched chat generation against any OpenAI-compatible server (vLLM or an endpoint).

The one entry point most callers need:

    from generators.client import ChatRequest, endpoint_for, generate_batch

    endpoint = endpoint_for("base")                      # starts vLLM if needed
    results = generate_batch(endpoint, [
        ChatRequest(messages=[{"role": "user", "content": "Hi"}], max_tokens=32),
        ChatRequest(messages=[...], json_schema={"type": "object", ...}),  # constrained
    ], concurrency=16, reporter=reporter)
    results[0].completions[0].text, results[0].completion_tokens, results[0].latency_s

Requests run concurrently up to `concurrency`; a 429, a 5xx, a timeout or a dropped
connection is retried with backoff and jitter within a `RetryPolicy` (see
`generators.retry`; each retry is logged through the reporter) and then raises
`ServerUnavailable`; a request the server rejects (another 4xx, e.g. a prompt longer
than the context) comes back with `error` set instead of failing the batch.

Structured outputs use the shapes vLLM's OpenAI server accepts:
`response_format={"type": "json_schema", ...}` for a JSON Schema and
`extra_body={"structured_outputs": {"regex"|"choice": ...}}` for the others.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack

import openai
from pydantic import BaseModel, Field, model_validator
from tenacity import RetryError

from generators.retry import RetryPolicy, describe, retrying
from podium.errors import PodiumError
from podium.identity import User
from podium.reporting import Reporter

REQUEST_TIMEOUT_S = 600.0
# Interactive streams (the vibe page) keep the SDK's own few retries; batches retry
# through `generators.retry`, so their client must not retry underneath it.
STREAM_RETRIES = 2


class ServerUnavailable(PodiumError):
    """The server stopped answering (crashed, killed, unreachable) after all retries."""


@dataclass(frozen=True)
class Endpoint:
    base_url: str  # ".../v1"
    model: str  # the served model name sent with each request
    api_key: str | None = None
    checkpoint: str = ""  # registry name, for lineage

    @property
    def shown_url(self) -> str:
        """`base_url` as messages and logs (which viewers read) show it: no password."""
        from podium.models.endpoint_keys import shown_url

        return shown_url(self.base_url)

    def async_client(self) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            base_url=self.base_url,
            api_key=self.api_key or "EMPTY",
            max_retries=0,
            timeout=REQUEST_TIMEOUT_S,
        )

    def sync_client(self) -> openai.OpenAI:
        return openai.OpenAI(
            base_url=self.base_url,
            api_key=self.api_key or "EMPTY",
            max_retries=STREAM_RETRIES,
            timeout=REQUEST_TIMEOUT_S,
        )


def endpoint_for(
    model_name: str, reporter: Reporter | None = None, user: User | None = None
) -> Endpoint:
    """An `Endpoint` for a registered model, starting its vLLM server if needed (and if
    `user`, default whoever is acting, may start servers)."""
    from podium.models import ensure_server, get_model
    from podium.models.endpoint_keys import endpoint_key

    model = get_model(model_name)
    key = endpoint_key(model)  # only an allowed key, only to the URL it was given for
    base_url, served = ensure_server(model.name, reporter=reporter, user=user)
    return Endpoint(base_url=base_url, model=served, api_key=key, checkpoint=model.name)


class SamplingParams(BaseModel):
    """Sampling settings shared by the generate job, the vibe page and the CLI."""

    n: int = Field(1, ge=1, le=64, description="Samples per prompt.")
    temperature: float = Field(0.7, ge=0.0, le=2.0, description="0 = greedy.")
    top_p: float = Field(1.0, gt=0.0, le=1.0, description="Nucleus sampling mass.")
    max_tokens: int = Field(256, ge=1, le=8192, description="Most tokens per completion.")
    seed: int | None = Field(
        None,
        description="Sampling seed (blank: one is drawn when the job is queued and pinned in "
        "its card, so a re-run samples the same).",
    )
    stop: list[str] = Field(default_factory=list, description="Stop strings.")


class ChatRequest(SamplingParams):
    messages: list[dict[str, str]]
    json_schema: dict[str, Any] | None = Field(
        None, description="JSON Schema the output must match."
    )
    regex: str | None = Field(None, description="Regular expression the output must match.")
    choice: list[str] | None = Field(None, description="The output is exactly one of these.")

    @model_validator(mode="after")
    def _one_constraint(self) -> ChatRequest:
        given = [k for k in ("json_schema", "regex", "choice") if getattr(self, k) is not None]
        if len(given) > 1:
            raise ValueError(f"use one structured-output constraint, not {', '.join(given)}")
        if not self.messages:
            raise ValueError("a chat request needs at least one message")
        return self

    def api_kwargs(self, model: str) -> dict[str, Any]:
        kwargs: dict[str, Any] = dict(
            model=model,
            messages=self.messages,
            n=self.n,
            temperature=self.temperature,
            top_p=self.top_p,
            max_tokens=self.max_tokens,
        )
        if self.seed is not None:
            kwargs["seed"] = self.seed
        if self.stop:
            kwargs["stop"] = self.stop
        if self.json_schema is not None:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": self.json_schema, "strict": True},
            }
        elif self.regex is not None:
            kwargs["extra_body"] = {"structured_outputs": {"regex": self.regex}}
        elif self.choice is not None:
            kwargs["extra_body"] = {"structured_outputs": {"choice": self.choice}}
        return kwargs


@dataclass
class Completion:
    text: str
    finish_reason: str


@dataclass
class ChatResult:
    completions: list[Completion] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    error: str | None = None  # set when the server rejected this request (4xx)


def _result(resp: Any, started: float) -> ChatResult:
    usage = resp.usage
    return ChatResult(
        completions=[
            Completion(c.message.content or "", c.finish_reason or "")
            for c in sorted(resp.choices, key=lambda c: c.index)
        ],
        prompt_tokens=usage.prompt_tokens if usage else 0,
        completion_tokens=usage.completion_tokens if usage else 0,
        latency_s=time.perf_counter() - started,
    )


async def _one(
    client: openai.AsyncOpenAI,
    endpoint: Endpoint,
    req: ChatRequest,
    sem: asyncio.Semaphore,
    retry: RetryPolicy,
    reporter: Reporter,
) -> ChatResult:
    async with sem:
        try:
            async for attempt in retrying(retry, reporter, endpoint.shown_url):
                with attempt:
                    started = time.perf_counter()
                    resp = await client.chat.completions.create(**req.api_kwargs(endpoint.model))
                    return _result(resp, started)
        except openai.APIStatusError as exc:  # not retryable: this request was refused
            return ChatResult(error=f"{exc.status_code}: {exc.message}")
        except RetryError as exc:
            tries = exc.last_attempt.attempt_number
            raise ServerUnavailable(
                f"The model server at {endpoint.shown_url} did not answer after {tries} tries "
                f"({describe(exc.last_attempt.exception())}). Check `podium models servers` "
                "or the server log."
            ) from exc
    raise AssertionError("unreachable: tenacity either returns, raises or retries")


async def agenerate_batch(
    endpoint: Endpoint,
    requests: Sequence[ChatRequest],
    *,
    concurrency: int = 16,
    reporter: Reporter | None = None,
    retry: RetryPolicy | None = None,
    report_progress: bool = True,
) -> list[ChatResult]:
    """Run `requests` concurrently; results come back in request order.

    `report_progress=False` leaves progress to a caller that counts its own units;
    cancels and retries still go through `reporter`.
    """
    reporter = reporter or Reporter()
    retry = retry or RetryPolicy()
    sem = asyncio.Semaphore(max(1, concurrency))
    async with endpoint.async_client() as client:
        tasks = [
            asyncio.create_task(_one(client, endpoint, r, sem, retry, reporter)) for r in requests
        ]
        try:
            for done, fut in enumerate(asyncio.as_completed(tasks), start=1):
                await fut
                if report_progress:
                    reporter.progress(done, len(tasks), "requests")
                reporter.check_cancelled()
        except BaseException:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        return [t.result() for t in tasks]


class BatchOptions(TypedDict, total=False):
    concurrency: int
    reporter: Reporter | None
    retry: RetryPolicy | None
    report_progress: bool


def generate_batch(
    endpoint: Endpoint, requests: Sequence[ChatRequest], **options: Unpack[BatchOptions]
) -> list[ChatResult]:
    """Synchronous `agenerate_batch` (runs its own event loop)."""
    return asyncio.run(agenerate_batch(endpoint, requests, **options))


def stream_chat(endpoint: Endpoint, request: ChatRequest) -> Iterator[str]:
    """The first completion of `request`, piece by piece as the server produces it."""
    kwargs = request.api_kwargs(endpoint.model) | {"n": 1, "stream": True}
    try:
        with endpoint.sync_client() as client:
            for chunk in client.chat.completions.create(**kwargs):
                if chunk.choices and chunk.choices[0].delta.content:
                    yield chunk.choices[0].delta.content
    except (openai.APIConnectionError, openai.APITimeoutError) as exc:
        raise ServerUnavailable(
            f"The model server at {endpoint.shown_url} is unreachable: {exc}"
        ) from exc
    except openai.APIStatusError as exc:
        raise PodiumError(
            f"The model server refused the request: {exc.status_code} {exc.message}"
        ) from exc

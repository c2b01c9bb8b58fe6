"""The batched OpenAI client against the session's real vLLM server."""

from __future__ import annotations

import json

import jsonschema
import pytest

from generators.client import (
    ChatRequest,
    Endpoint,
    ServerUnavailable,
    endpoint_for,
    generate_batch,
    stream_chat,
)
from generators.retry import RetryPolicy
from podium.config import reset_settings
from podium.models.vllm_launch import free_port

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}


def _user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def test_unreachable_server_raises_after_retries():
    endpoint = Endpoint(base_url=f"http://127.0.0.1:{free_port()}/v1", model="m")
    with pytest.raises(ServerUnavailable, match="did not answer after 2 tries"):
        generate_batch(
            endpoint,
            [ChatRequest(messages=_user("hi"))],
            retry=RetryPolicy(retry_attempts=2, retry_max_wait_s=30),
        )


def test_two_constraints_are_refused():
    with pytest.raises(ValueError, match="one structured-output constraint"):
        ChatRequest(messages=_user("x"), regex="a", choice=["a"])


@pytest.mark.vllm
def test_batch_returns_results_in_order_with_token_counts(vllm_model):
    endpoint = endpoint_for(vllm_model)
    requests = [
        ChatRequest(messages=_user(f"Count to {i}."), max_tokens=12, temperature=0)
        for i in range(1, 6)
    ]
    requests.append(ChatRequest(messages=_user("Name two colors."), n=3, max_tokens=8))
    results = generate_batch(endpoint, requests, concurrency=4)
    assert len(results) == 6
    for res in results[:5]:
        assert res.error is None and len(res.completions) == 1
        assert res.completions[0].text
        assert 0 < res.completion_tokens <= 12 and res.prompt_tokens > 5
        assert res.completions[0].finish_reason in ("stop", "length")
        assert res.latency_s > 0
    assert len(results[5].completions) == 3
    # Greedy decoding is deterministic: the same request gives the same text.
    again = generate_batch(endpoint, requests[:1])
    assert again[0].completions[0].text == results[0].completions[0].text


@pytest.mark.vllm
def test_json_schema_constraint_yields_valid_json(vllm_model):
    endpoint = endpoint_for(vllm_model)
    req = ChatRequest(
        messages=_user("Describe a person as JSON."),
        json_schema=PERSON,
        max_tokens=64,
        temperature=0.8,
        seed=1,
    )
    results = generate_batch(endpoint, [req, req.model_copy(update={"seed": 2})])
    for res in results:
        assert res.completions[0].finish_reason == "stop"
        jsonschema.validate(json.loads(res.completions[0].text), PERSON)


@pytest.mark.vllm
def test_choice_and_regex_constraints(vllm_model):
    endpoint = endpoint_for(vllm_model)
    choice, regex = generate_batch(
        endpoint,
        [
            ChatRequest(messages=_user("Is fire cold?"), choice=["yes", "no"], max_tokens=4),
            ChatRequest(messages=_user("Give a code."), regex=r"[A-Z]{2}-[0-9]{3}", max_tokens=12),
        ],
    )
    assert choice.completions[0].text in ("yes", "no")
    assert __import__("re").fullmatch(r"[A-Z]{2}-[0-9]{3}", regex.completions[0].text)


@pytest.mark.vllm
def test_rejected_request_is_an_error_row_not_a_failed_batch(vllm_model):
    endpoint = endpoint_for(vllm_model)
    too_long, ok = generate_batch(
        endpoint,
        [
            ChatRequest(messages=_user("word " * 2100), max_tokens=4),
            ChatRequest(messages=_user("Hi"), max_tokens=4),
        ],
    )
    assert too_long.error and "400" in too_long.error and not too_long.completions
    assert ok.error is None and ok.completions


@pytest.mark.vllm
def test_stream_yields_pieces_of_the_answer(vllm_model):
    endpoint = endpoint_for(vllm_model)
    req = ChatRequest(messages=_user("Say hello."), max_tokens=12, temperature=0)
    pieces = list(stream_chat(endpoint, req))
    assert len(pieces) > 1
    (whole,) = generate_batch(endpoint, [req])
    assert "".join(pieces) == whole.completions[0].text


@pytest.mark.vllm
def test_registered_endpoint_is_used_as_is(vllm_model, vllm_server, unique_table, monkeypatch):
    from podium.models import add_endpoint, remove_model
    from podium.models.serving import list_servers

    name = "ep-" + unique_table.split(".")[1]
    monkeypatch.setenv("EP_TEST_KEY", "not-checked-by-vllm")
    monkeypatch.setenv("PODIUM_ENDPOINT_KEY_ENVS", "EP_TEST_KEY")
    reset_settings()
    add_endpoint(vllm_server.base_url, name, api_key_env="EP_TEST_KEY")  # no model id given
    try:
        servers_before = [(s.model, s.pid) for s in list_servers()]
        endpoint = endpoint_for(name)
        assert endpoint.model == vllm_model  # discovered from the endpoint's /v1/models
        assert endpoint.api_key == "not-checked-by-vllm"
        (res,) = generate_batch(endpoint, [ChatRequest(messages=_user("Hi"), max_tokens=4)])
        assert res.completions and res.error is None
        # Nothing was started for an endpoint.
        assert [(s.model, s.pid) for s in list_servers()] == servers_before
    finally:
        remove_model(name)

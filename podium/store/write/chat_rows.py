"""One input record as an SFT row: which chat shape it has (OpenAI messages, ShareGPT
conversations, prompt-response columns) and its conversion, with errors that name the
line and the field."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import orjson

from podium.errors import InvalidInput
from podium.store.write.json_lines import repeated_key
from podium.store.write.modes import ChatFormat


class ChatOptions(Protocol):
    """What a conversion reads of an import's settings (`ingest.ImportConfig` has it)."""

    @property
    def format(self) -> ChatFormat | None: ...
    @property
    def prompt_column(self) -> str | None: ...
    @property
    def response_column(self) -> str | None: ...
    @property
    def source(self) -> str | None: ...
    @property
    def path(self) -> str: ...


PROMPT_KEYS = ("prompt", "instruction", "question", "query")
RESPONSE_KEYS = ("response", "output", "completion", "answer", "chosen")
SHAREGPT_ROLES = {
    "human": "user",
    "user": "user",
    "gpt": "assistant",
    "assistant": "assistant",
    "chatgpt": "assistant",
    "bing": "assistant",
    "bard": "assistant",
    "model": "assistant",
    "system": "system",
    "tool": "tool",
    "function": "tool",
    "observation": "tool",
}
KNOWN_KEYS = {
    "id",
    "messages",
    "conversations",
    "system",
    "source",
    "split",
    "tags",
    "metadata",
    "created_at",
    "tools",
}


def detect_format(record: Mapping[str, Any], cfg: ChatOptions, where: str) -> ChatFormat:
    if cfg.format:
        return cfg.format
    if "messages" in record:
        return "openai"
    if "conversations" in record:
        return "sharegpt"
    if cfg.prompt_column or any(k in record for k in PROMPT_KEYS):
        return "prompt-response"
    raise InvalidInput(
        f"{where}: no chat columns found (keys: {', '.join(sorted(record)) or 'none'}). "
        "Expected `messages` (OpenAI), `conversations` (ShareGPT) or prompt/response columns; "
        "name them with --prompt-column/--response-column or pick --format."
    )


def _text(value: Any, where: str, what: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):  # OpenAI content parts: keep the text parts
        texts = [
            p.get("text", "") for p in value if isinstance(p, dict) and p.get("type") == "text"
        ]
        if len(texts) == len(value):
            return "".join(texts)
    raise InvalidInput(f"{where}: {what} must be text, got {type(value).__name__}.")


def _messages_openai(record: Mapping[str, Any], where: str) -> list[dict[str, str | None]]:
    raw = record.get("messages")
    if not isinstance(raw, list) or not raw:
        raise InvalidInput(f"{where}: `messages` must be a non-empty list of {{role, content}}.")
    out = []
    for i, msg in enumerate(raw):
        if not isinstance(msg, dict) or not isinstance(msg.get("role"), str):
            raise InvalidInput(f"{where}: message {i} has no `role`.")
        content = _text(msg.get("content"), where, f"message {i} content")
        if msg.get("tool_calls") and not content:
            # Tool calls are kept as their JSON so validators can check the arguments.
            content = json.dumps({"tool_calls": msg["tool_calls"]}, ensure_ascii=False)
        out.append({"role": msg["role"], "content": content})
    return out


def _messages_sharegpt(record: Mapping[str, Any], where: str) -> list[dict[str, str | None]]:
    raw = record.get("conversations")
    if not isinstance(raw, list) or not raw:
        raise InvalidInput(f"{where}: `conversations` must be a non-empty list of {{from, value}}.")
    out = []
    for i, turn in enumerate(raw):
        speaker = turn.get("from") if isinstance(turn, dict) else None
        if speaker not in SHAREGPT_ROLES:
            raise InvalidInput(
                f"{where}: turn {i} has unknown speaker {speaker!r}; expected one of "
                f"{', '.join(sorted(SHAREGPT_ROLES))}."
            )
        out.append(
            {
                "role": SHAREGPT_ROLES[speaker],
                "content": _text(turn.get("value"), where, f"turn {i}"),
            }
        )
    return out


def _messages_prompt_response(
    record: Mapping[str, Any], cfg: ChatOptions, where: str
) -> list[dict[str, Any]]:
    pkey = cfg.prompt_column or next((k for k in PROMPT_KEYS if k in record), None)
    rkey = cfg.response_column or next((k for k in RESPONSE_KEYS if k in record), None)
    if pkey is None or rkey is None or pkey not in record or rkey not in record:
        raise InvalidInput(
            f"{where}: prompt-response data needs a prompt and a response column "
            f"(found {', '.join(sorted(record))}); "
            "name them with --prompt-column/--response-column."
        )
    prompt = _text(record[pkey], where, pkey) or ""
    extra = record.get("input") if pkey == "instruction" else None  # Alpaca's optional input
    if isinstance(extra, str) and extra.strip():
        prompt = f"{prompt}\n\n{extra}"
    return [
        {"role": "user", "content": prompt},
        {"role": "assistant", "content": _text(record[rkey], where, rkey)},
    ]


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces: what generated ids hash (so it never changes)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def metadata_json(value: Any) -> str:
    """A row's metadata as stored: sorted keys, no spaces. orjson, ~10x faster than the
    json module (a fifth of a 10M-row import went to it); the json module for what orjson
    refuses (keys that are not strings, integers past 64 bits)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        return canonical_json(value)


def _created_at(value: Any, where: str) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        raise InvalidInput(f"{where}: created_at {value!r} is not an ISO 8601 time.") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def used_keys(fmt: ChatFormat, cfg: ChatOptions) -> set[str]:
    """The keys a row of this shape is made of; every other key goes into its metadata."""
    used = set(KNOWN_KEYS)
    if fmt == "prompt-response":
        named = {c for c in (cfg.prompt_column, cfg.response_column) if c}
        used |= {*named, *PROMPT_KEYS, *RESPONSE_KEYS, "input"}
    return used


def row_metadata(record: Mapping[str, Any], used: set[str], where: str) -> str | None:
    """The row's metadata as stored: `metadata`'s keys (an object, or JSON text of one),
    then every key not `used` (over them), then `tools` unless null; None when empty."""
    metadata = record.get("metadata")
    if isinstance(metadata, str):
        try:
            metadata = json.loads(metadata) if metadata else {}
        except (json.JSONDecodeError, RecursionError):
            raise InvalidInput(f"{where}: `metadata` is a string but not JSON.") from None
        repeated_key(record["metadata"], f"{where}: `metadata`")
    if metadata is not None and not isinstance(metadata, dict):
        raise InvalidInput(
            f"{where}: `metadata` must be a JSON object ({{...}}), got {_json_type(metadata)}."
        )
    metadata = dict(metadata or {})
    metadata.update({k: v for k, v in record.items() if k not in used})
    if record.get("tools") is not None:
        metadata["tools"] = record["tools"]
    return metadata_json(metadata) if metadata else None


def to_sft_row(
    record: Mapping[str, Any], cfg: ChatOptions, where: str, fmt: ChatFormat
) -> dict[str, Any]:
    if fmt == "openai":
        messages = _messages_openai(record, where)
    elif fmt == "sharegpt":
        messages = _messages_sharegpt(record, where)
    else:
        messages = _messages_prompt_response(record, cfg, where)
    metadata = row_metadata(record, used_keys(fmt, cfg), where)
    tags = record.get("tags")
    if tags is not None and not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
        raise InvalidInput(f"{where}: `tags` must be a list of strings.")
    row_id = record.get("id")
    if row_id is not None and (isinstance(row_id, bool) or not isinstance(row_id, str | int)):
        raise InvalidInput(
            f"{where}: `id` must be a string or an integer, got {_json_type(row_id)}."
        )
    if isinstance(row_id, str) and "\x00" in row_id:
        raise InvalidInput(
            f"{where}: `id` {row_id!r} holds a NUL character (\\u0000), which ids cannot "
            "hold; remove it, or drop the `id` field to have an id generated."
        )
    return {
        "id": None if row_id is None else str(row_id),
        "messages": messages,
        "system": _text(record.get("system"), where, "system"),
        "source": _string(record, "source", where) or cfg.source or Path(cfg.path).name,
        "split": _string(record, "split", where),
        "tags": tags,
        "metadata": metadata,
        "created_at": _created_at(record.get("created_at"), where),
    }


def _string(record: Mapping[str, Any], key: str, where: str) -> str | None:
    value = record.get(key)
    if value is None or isinstance(value, str):
        return value
    raise InvalidInput(
        f"{where}: `{key}` must be a string, got {_json_type(value)} ({value!r:.40})."
    )


def _json_type(value: Any) -> str:
    names = {
        dict: "an object",
        list: "a list",
        bool: "a boolean",
        int: "a number",
        float: "a number",
    }
    return names.get(type(value), type(value).__name__)

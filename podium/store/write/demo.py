"""Demo datasets made by Podium's own code (no downloads), loaded by `podium demo`.

- `demo.json_sft`: chat rows whose assistant turns are meant to be JSON records that
  follow `DEMO_JSON_SCHEMA` (stored on the table as `podium.json_schema`). About 8% of
  rows have one planted defect: a JSON syntax error (trailing comma, truncation, single
  quotes, ...) or a schema violation (wrong type, missing or extra field).
  `json_sft_rows` returns which ids were planted, on which turn and with which rule, so
  tests can check that validation finds exactly those. Some answers are wrapped in a
  ```json fence; the planted set is defined for validating the first fenced block, or
  the whole message when it has no fence.
- `demo.chat`: general multi-turn conversations with markdown, code and system prompts.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa

from podium.identity import require
from podium.store.catalog.catalog import table_exists
from podium.store.schema import PROP_KIND, SFT_ARROW_SCHEMA, SFT_SCHEMA
from podium.store.state.users import acting_user
from podium.store.write.write import write_table

DEMO_JSON_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer", "minimum": 0},
        "email": {"type": "string"},
        "city": {"type": "string"},
        "skills": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "age", "email"],
    "additionalProperties": False,
}

FIRST = [
    "Alice",
    "Bruno",
    "Chen",
    "Dara",
    "Elif",
    "Farid",
    "Grace",
    "Hiro",
    "Ines",
    "Jonas",
    "Kofi",
    "Lena",
    "Mateo",
    "Nadia",
    "Oskar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sven",
    "Tariq",
]
LAST = [
    "Johnson",
    "Silva",
    "Wang",
    "Okafor",
    "Yilmaz",
    "Haddad",
    "Murphy",
    "Tanaka",
    "Costa",
    "Berg",
    "Mensah",
    "Fischer",
    "Lopez",
    "Karimi",
    "Lind",
    "Nair",
    "Reyes",
    "Novak",
]
CITIES = ["Lisbon", "Osaka", "Nairobi", "Toronto", "Berlin", "Lima", "Pune", "Oslo", "Austin"]
SKILLS = [
    "Python",
    "SQL",
    "Rust",
    "statistics",
    "design",
    "Kubernetes",
    "writing",
    "Go",
    "marketing",
    "CUDA",
    "React",
    "negotiation",
]
TEMPLATES = [
    "{name} ({age}) lives in {city} and can be reached at {email}. Skills: {skills}.",
    "Contact card: {email}. Name {name}, {age} years old, based in {city}; knows {skills}.",
    "Meet {name}, a {age}-year-old from {city} who is good at {skills}. Email: {email}.",
]
ASK = [
    "Extract the person as JSON with keys name, age, email, city, skills:\n\n{text}",
    "Return only a JSON object (name, age, email, city, skills) for this text:\n{text}",
]
FOLLOW_UP = "Actually {first} just turned {age}. Return the corrected JSON."

SYNTAX_DEFECTS = ("trailing-comma", "truncated", "single-quotes", "unquoted-key", "python-literal")
SCHEMA_DEFECTS = ("age-as-string", "missing-email", "extra-field", "skills-not-list")


def _record(rng: random.Random) -> dict[str, Any]:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    return {
        "name": f"{first} {last}",
        "age": rng.randint(19, 71),
        "email": f"{first.lower()}.{last.lower()}@example.org",
        "city": rng.choice(CITIES),
        "skills": rng.sample(SKILLS, rng.randint(1, 3)),
    }


def _break_syntax(text: str, defect: str) -> str:
    if defect == "trailing-comma":
        return text[: text.rindex("}")].rstrip() + ",\n}" if "\n" in text else text[:-1] + ",}"
    if defect == "truncated":
        return text[: max(8, len(text) * 2 // 3)]
    if defect == "single-quotes":
        return text.replace('"', "'")
    if defect == "unquoted-key":
        return text.replace('"email"', "email", 1)
    return text.replace('"city": ', '"verified": True, "city": ', 1)  # python-literal


def _break_schema(record: dict[str, Any], defect: str) -> dict[str, Any]:
    bad = dict(record)
    if defect == "age-as-string":
        bad["age"] = str(bad["age"])
    elif defect == "missing-email":
        bad.pop("email")
    elif defect == "extra-field":
        bad["phone"] = "+1-555-0100"
    else:
        bad["skills"] = ", ".join(bad["skills"])
    return bad


def _render(record: dict[str, Any], rng: random.Random) -> tuple[str, str]:
    """(JSON text, whole assistant message) — some answers come in a ```json fence."""
    text = json.dumps(record, indent=2) if rng.random() < 0.5 else json.dumps(record)
    if rng.random() < 0.3:
        return text, f"Here is the record:\n\n```json\n{text}\n```"
    return text, text


def json_sft_rows(
    n: int = 3000, seed: int = 0
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """Rows for `demo.json_sft` and {id: {"turn", "rule", "kind"}} for planted defects."""
    rng = random.Random(seed)
    start = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    rows: list[dict[str, Any]] = []
    planted: dict[str, dict[str, Any]] = {}
    for i in range(n):
        rid = f"json-{i:05d}"
        record = _record(rng)
        text = rng.choice(TEMPLATES).format(**{**record, "skills": ", ".join(record["skills"])})
        answers = [record]
        messages = [{"role": "user", "content": rng.choice(ASK).format(text=text)}]
        if rng.random() < 0.2:  # a follow-up correction: a second assistant turn
            answers.append(dict(record, age=record["age"] + 1))
        defect_turn = rng.randrange(len(answers)) if rng.random() < 0.08 else None
        kind = rng.choice(SYNTAX_DEFECTS + SCHEMA_DEFECTS) if defect_turn is not None else None
        for turn, answer in enumerate(answers):
            if turn:
                messages.append(
                    {
                        "role": "user",
                        "content": FOLLOW_UP.format(
                            first=record["name"].split()[0], age=answer["age"]
                        ),
                    }
                )
            planted_here = turn == defect_turn
            if planted_here and kind in SCHEMA_DEFECTS:
                answer = _break_schema(answer, kind)
            body, message = _render(answer, rng)
            if planted_here and kind in SYNTAX_DEFECTS:
                message = message.replace(body, _break_syntax(body, kind))
            if planted_here:
                planted[rid] = {
                    "turn": len(messages),
                    "rule": "json" if kind in SYNTAX_DEFECTS else "json-schema",
                    "kind": kind,
                }
            messages.append({"role": "assistant", "content": message})
        rows.append(
            {
                "id": rid,
                "messages": messages,
                "system": "You extract structured records. Answer with JSON only.",
                "source": rng.choice(["synthetic-crm", "synthetic-forms", "synthetic-bios"]),
                "split": "test" if rng.random() < 0.1 else "train",
                "tags": ["json", "extraction"] + (["multi-turn"] if len(answers) > 1 else []),
                "metadata": json.dumps({"template": i % len(TEMPLATES)}, separators=(",", ":")),
                "created_at": start + timedelta(minutes=i),
            }
        )
    return rows, planted


CHAT_TOPICS: list[tuple[str, str, str, list[str]]] = [
    (
        "How do I reverse a list in Python?",
        "Use slicing or `reversed`:\n\n```python\nitems = [1, 2, 3]\nprint(items[::-1])\n"
        "print(list(reversed(items)))\n```\n\nSlicing copies the list; `list.reverse()` "
        "reverses in place.",
        "coding",
        ["python"],
    ),
    (
        "Explain what a snapshot is in Apache Iceberg.",
        "A **snapshot** is the state of a table at one commit. Each write creates a new "
        "snapshot, and older ones stay readable, so you can *time travel*:\n\n"
        "- list snapshots\n- read any of them by id\n- roll back if needed",
        "explain",
        ["data"],
    ),
    (
        "Write a SQL query that counts orders per customer.",
        "```sql\nSELECT customer_id, count(*) AS orders\nFROM orders\nGROUP BY customer_id\n"
        "ORDER BY orders DESC;\n```",
        "coding",
        ["sql"],
    ),
    (
        "Give me three tips for writing good unit tests.",
        "1. Test one behaviour per test.\n2. Make failures explain themselves.\n"
        "3. Prefer real collaborators over mocks where it is cheap.",
        "advice",
        ["testing"],
    ),
    ("What is the capital of Australia?", "Canberra.", "trivia", ["geography"]),
    (
        "Summarise the plot of Hamlet in two sentences.",
        "Prince Hamlet seeks revenge on his uncle Claudius, who murdered Hamlet's father to "
        "take the throne. His hesitation and feigned madness lead to a chain of deaths, "
        "including his own.",
        "summarise",
        ["literature"],
    ),
]
FOLLOW_UPS = [
    ("Can you make it shorter?", "Sure — in short: {short}"),
    ("Thanks! Any caveats?", "One caveat: always check the edge cases, such as empty inputs."),
]


def chat_rows(n: int = 600, seed: int = 1) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    start = datetime(2026, 2, 1, 12, 0, tzinfo=UTC)
    rows = []
    for i in range(n):
        question, answer, topic, tags = CHAT_TOPICS[i % len(CHAT_TOPICS)]
        messages = [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
        for _ in range(rng.choice([0, 0, 1, 2])):
            ask, reply = rng.choice(FOLLOW_UPS)
            messages += [
                {"role": "user", "content": ask},
                {"role": "assistant", "content": reply.format(short=answer.split("\n")[0])},
            ]
        rows.append(
            {
                "id": f"chat-{i:05d}",
                "messages": messages,
                "system": rng.choice([None, "You are a concise, friendly assistant."]),
                "source": f"synthetic-{topic}",
                "split": "test" if i % 10 == 0 else "train",
                "tags": tags,
                "metadata": None,
                "created_at": start + timedelta(minutes=i),
            }
        )
    return rows


def _load(name: str, rows: list[dict[str, Any]], properties: dict[str, str]) -> bool:
    if table_exists(name):
        return False
    data = pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA)
    write_table(name, data, schema=SFT_SCHEMA, properties={PROP_KIND: "sft", **properties})
    return True


DEMO_TABLES: dict[str, Callable[[], bool]] = {
    "demo.json_sft": lambda: _load(
        "demo.json_sft",
        json_sft_rows()[0],
        {"podium.json_schema": json.dumps(DEMO_JSON_SCHEMA), "podium.demo": "json extraction"},
    ),
    "demo.chat": lambda: _load("demo.chat", chat_rows(), {"podium.demo": "general chat"}),
}


def load_demo() -> dict[str, bool]:
    """Create each missing demo table; returns {table: created?}. Idempotent."""
    require(acting_user(), "run_job")  # new tables, as an import makes: operators' work
    return {name: load() for name, load in DEMO_TABLES.items()}

"""What validating the demo table must find: the planted ids, rules, kinds and places."""

from __future__ import annotations

import re
from typing import Any

from podium.store.write.demo import json_sft_rows

# Demo defect -> the error kind the validator must report for it.
DEFECT_KINDS = {
    "trailing-comma": "trailing-comma",
    "truncated": "unexpected-eof",
    "single-quotes": "invalid-key",
    "unquoted-key": "invalid-key",
    "python-literal": "invalid-value",
    "age-as-string": "type",
    "missing-email": "required",
    "extra-field": "additional-properties",
    "skills-not-list": "type",
}

# Demo defect -> what the text at the reported position must start with.
DEFECT_AT = {
    "trailing-comma": re.compile(r",\s*\}"),
    "truncated": re.compile(r"(\n```)?$"),
    "single-quotes": re.compile(r"'name'"),
    "unquoted-key": re.compile(r"email:"),
    "python-literal": re.compile(r"True"),
    "age-as-string": re.compile(r'(?<="age": )"\d+"'),
    "missing-email": re.compile(r"\{"),
    "extra-field": re.compile(r'"phone": '),
    "skills-not-list": re.compile(r'(?<="skills": )"'),
}


def demo_rows() -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    rows, planted = json_sft_rows()
    return {r["id"]: r for r in rows}, planted


def check_against_planted(failures: list[dict[str, Any]]) -> None:
    """Assert the failures are exactly the planted defects, each at its place."""
    rows, planted = demo_rows()
    found = {f["id"]: f for f in failures}
    assert len(found) == len(failures), "one failure per planted row"
    assert set(found) == set(planted)
    for rid, defect in planted.items():
        failure = found[rid]
        assert (failure["turn"], failure["rule"]) == (defect["turn"], defect["rule"]), rid
        assert failure["kind"] == DEFECT_KINDS[defect["kind"]], (rid, failure)
        message = rows[rid]["messages"][failure["turn"]]["content"]
        assert failure["role"] == "assistant"
        assert DEFECT_AT[defect["kind"]].match(message, failure["message_offset"]), (
            rid,
            defect["kind"],
            message[failure["message_offset"] :][:30],
        )

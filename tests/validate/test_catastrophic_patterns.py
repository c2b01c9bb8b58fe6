"""User regular expressions run in linear time (issue 38, finding 5): `regex:(.+)+x` ran
over 120 s on a 40-character row and a JSON Schema `"pattern": "^(a|aa)+$"` over 60 s on
one row, holding the light lane. A pattern outside RE2's language runs under a per-row
time limit, and its failure names the rule."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import cli_fork
import pyarrow as pa
import pytest

from podium.store.schema import SFT_ARROW_SCHEMA, SFT_SCHEMA
from podium.store.write.write import write_table
from podium.validate.json_rules import JsonSchemaRule, compile_schema
from podium.validate.text_rules import RegexRule

# Each case took a minute or more on a backtracking engine: a hang fails the test here.
pytestmark = pytest.mark.timeout(60)

FORTY = "a" * 40


def test_nested_quantifiers_fail_the_row_at_once() -> None:
    result = RegexRule("(.+)+x").check(FORTY)
    assert (result.ok, result.rule, result.kind) == (False, "regex", "no-match")
    assert RegexRule("(a|aa)+").check(FORTY).ok
    assert RegexRule(r"\p{L}+\n\d+").check("héllo\n42").ok  # Unicode classes; `.` spans lines
    assert RegexRule("a.b").check("a\nb").ok


def test_a_pattern_only_a_backtracking_engine_runs_is_stopped_per_row() -> None:
    rule = RegexRule("(a|aa)+(?=b)c")  # lookahead: RE2 cannot run it
    result = rule.check(FORTY + "b")
    assert (result.ok, result.rule, result.kind) == (False, "regex", "regex-timeout")
    assert "(a|aa)+(?=b)c" in result.message
    assert RegexRule(r"(\w)\1").check("zz").ok  # a backreference still works


SLOW = "^(a|aa)+$"


@pytest.mark.parametrize(
    ("schema", "bad", "good"),
    [
        ({"type": "string", "pattern": SLOW}, FORTY + "b", FORTY),
        (  # invalid for `required`: the reference validator then searches every key
            {"type": "object", "required": ["z"], "patternProperties": {SLOW: {"type": "integer"}}},
            {FORTY + "b": "s"},
            {FORTY: 1, "z": 1},
        ),
        (
            {"type": "object", "patternProperties": {SLOW: {}}, "additionalProperties": False},
            {FORTY + "b": 1},
            {FORTY: 1},
        ),
    ],
)
def test_schema_patterns_run_in_linear_time(
    schema: dict[str, object], bad: object, good: object
) -> None:
    rule = JsonSchemaRule(compile_schema(schema, "test"))
    result = rule.check(json.dumps(bad))
    assert (result.ok, result.rule) == (False, "json-schema"), result
    assert rule.check(json.dumps(good)).ok


def test_podium_validate_with_a_catastrophic_regex_finishes(podium_home: Path) -> None:
    rows = [{"id": "r0", "messages": [{"role": "assistant", "content": FORTY}]}]
    write_table("t.forty", pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA), schema=SFT_SCHEMA)
    result = cli_fork.run(
        [sys.executable, "-m", "podium.cli", "validate", "t.forty"]
        + ["--rule", "regex:(.+)+x", "--json"],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=50,
    )
    assert result.returncode == 0, result.stderr
    (failure,) = json.loads(result.stdout)["failures"]
    assert (failure["rule"], failure["kind"]) == ("regex", "no-match")

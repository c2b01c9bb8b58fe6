"""Inputs are parsed as literals only, checked against the signature, and run for real."""

from __future__ import annotations

import ast

import pytest

from generators.client import ChatResult, Completion
from generators.code_exec.build import execute_calls, plan_calls
from generators.code_exec.demo_functions import demo_function_rows, example_args
from generators.code_exec.harness import (
    Arity,
    InputRejected,
    canonical_input,
    entry_arity,
    parse_input,
    program,
)
from generators.code_exec.inputs import Proposal, input_schema, parse_proposal
from generators.sandbox import Job, Limits, Sandbox
from podium.reporting import Reporter

FN = {
    "id": "fn-1",
    "entry_point": "f",
    "code": "def f(items, k=1):\n    print('noise')\n    return sorted(set(items))[::k]\n",
}


def test_arity_comes_from_the_signature() -> None:
    assert entry_arity(FN["code"], "f") == Arity(1, 2)
    assert entry_arity("def g(*a):\n    return a\n", "g") == Arity(0, None)
    with pytest.raises(ValueError, match="no top-level function named 'h'"):
        entry_arity(FN["code"], "h")
    with pytest.raises(ValueError, match="does not parse"):
        entry_arity("def f(:\n", "f")


def test_literal_inputs_are_parsed_here() -> None:
    arity = Arity(1, 2)
    assert parse_input("[3, 1, 2]", arity).args == ([3, 1, 2],)
    assert parse_input("[3, 1], -1", arity).args == ([3, 1], -1)
    assert parse_input("{'a': 1}", arity).args == ({"a": 1},)
    assert parse_input("(1, 2)", arity).args == ((1, 2),)  # one argument: a tuple
    assert parse_input("'x', 2,", arity).args == ("x", 2)
    assert parse_input(" [3,1] ", arity).input == "[3, 1]"  # one canonical spelling
    with pytest.raises(InputRejected, match="out of range: it reads as inf or nan"):
        parse_input("1e999", arity)
    # Before: "..." was rejected as "a value has no literal spelling (inf or nan)".
    for placeholder in ("...", "[1, ...]", "{'a': ...}"):
        with pytest.raises(InputRejected, match=r"`\.\.\.` \(Ellipsis\) is a placeholder"):
            parse_input(placeholder, arity)
    with pytest.raises(InputRejected, match="3 arguments given; the function takes 1 to 2"):
        parse_input("1, 2, 3", arity)


def test_other_expressions_are_left_to_the_sandbox_unevaluated() -> None:
    arity = Arity(1, 2)
    for text in ("[i*i for i in range(5)]", "dict(a=1)", '"ab" * 3', "x", "[1] * 10**9"):
        call = parse_input(text, arity)
        assert call.args is None and call.input == text  # stored as written, not run here
    for junk in ("os.system('x'", "def f(): pass", "1 +"):
        with pytest.raises(InputRejected, match="not a Python argument list"):
            parse_input(junk, arity)


def test_canonical_input_round_trips() -> None:
    args = ([1, "a"], {"k": (1, 2)}, {3}, -0.5, None)
    text = canonical_input(args)
    assert parse_input(text, Arity(5, 5)).args == args


def test_proposal_parsing() -> None:
    good = ChatResult(completions=[Completion('{"inputs": ["1", "[2]"]}', "stop")])
    assert parse_proposal(good) == Proposal(["1", "[2]"])
    truncated = ChatResult(completions=[Completion('{"inputs": ["1", "[2', "length")])
    assert "not the requested JSON" in (parse_proposal(truncated).error or "")
    assert "refused" in (parse_proposal(ChatResult(error="400: too long")).error or "")
    assert input_schema(3)["properties"]["inputs"]["maxItems"] == 3


def test_plan_rejects_bad_inputs_and_dedupes() -> None:
    proposal = Proposal(["[2, 1, 2]", "[2,1,2]", "os.system('x'", "[1], 2", "1, 2, 3", "[0]*2"])
    rejected, calls = plan_calls(FN, proposal, 6, "m", "local")
    assert [c["input"] for c in calls] == ["[2, 1, 2]", "[1], 2", "[0]*2"]
    assert {r["raw_input"] for r in rejected} == {"os.system('x'", "1, 2, 3"}
    assert all(r["status"] == "rejected" and r["error"] for r in rejected)
    none_rows, none_calls = plan_calls(FN, Proposal([], "the model said nothing"), 5, "m", "local")
    assert none_calls == [] and none_rows[0]["error"] == "the model said nothing"


@pytest.mark.sandbox
def test_expression_inputs_run_in_the_sandbox_and_raising_ones_are_rejected() -> None:
    inputs = ["[i % 3 for i in range(5)]", "list('cab'), -1", "undefined_name", "*range(3)"]
    rejected, calls = plan_calls(FN, Proposal(inputs), 4, "m", "local")
    assert rejected == []  # nothing is evaluated on the host
    with Sandbox("local", workers=2) as box:
        rows = execute_calls(box, calls, Limits(wall_s=5, cpu_s=3), "m", Reporter())
    by_raw = {r["raw_input"]: r for r in rows}
    assert by_raw["[i % 3 for i in range(5)]"]["output"] == "[0, 1, 2]"
    assert by_raw["list('cab'), -1"]["output"] == "['c', 'b', 'a']"
    bad = by_raw["undefined_name"]
    assert bad["status"] == "rejected" and bad["input"] is None
    assert bad["error"] == "the input raised NameError: name 'undefined_name' is not defined"
    arity = by_raw["*range(3)"]
    assert arity["status"] == "rejected" and "3 arguments given" in arity["error"]


@pytest.mark.sandbox
def test_execution_rows_record_output_status_and_timing() -> None:
    looping = {"id": "fn-2", "entry_point": "f", "code": "def f(n):\n    while n:\n        pass\n"}
    failing = {"id": "fn-3", "entry_point": "f", "code": "def f(d):\n    return d['missing']\n"}
    _, calls = plan_calls(FN, Proposal(["[3, 1, 3, 2]", "[1, 2, 3], -1"]), 4, "m", "local")
    calls += plan_calls(looping, Proposal(["1"]), 4, "m", "local")[1]
    calls += plan_calls(failing, Proposal(["{}"]), 4, "m", "local")[1]
    with Sandbox("local", workers=2) as box:
        rows = execute_calls(box, calls, Limits(wall_s=2, cpu_s=1), "m", Reporter())
    by_input = {(r["function_id"], r["input"]): r for r in rows}
    assert by_input[("fn-1", "[3, 1, 3, 2]")]["output"] == "[1, 2, 3]"  # print swallowed
    assert by_input[("fn-1", "[1, 2, 3], -1")]["output"] == "[3, 2, 1]"
    assert by_input[("fn-2", "1")]["status"] == "timeout"
    assert by_input[("fn-2", "1")]["output"] is None
    bad = by_input[("fn-3", "{}")]
    assert bad["status"] == "error" and bad["error"] == "KeyError: 'missing'"
    assert all(r["wall_s"] > 0 for r in rows)


@pytest.mark.sandbox
def test_every_demo_function_runs_in_the_sandbox() -> None:
    rows = demo_function_rows()
    assert 200 <= len(rows) <= 400
    assert rows == demo_function_rows()  # deterministic
    jobs = [Job(program(row["code"], row["entry_point"], example_args(row))) for row in rows]
    with Sandbox("local", workers=2) as box:
        results = box.run_many(jobs)
    failed = [
        (row["code"], r.status, r.stderr[-200:])
        for row, r in zip(rows, results, strict=True)
        if not r.ok
    ]
    assert failed == []
    for result in results:
        ast.literal_eval(result.stdout)  # every output is a plain value's repr

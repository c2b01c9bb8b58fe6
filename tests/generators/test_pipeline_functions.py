"""The seeded pipeline functions that builds past the ~550 demo functions use."""

from __future__ import annotations

from generators.code_exec.harness import entry_arity, parse_input
from generators.code_exec.pipeline_functions import pipeline_function_rows


def test_a_thousand_distinct_functions_the_same_every_time() -> None:
    rows = pipeline_function_rows(1000)
    assert len(rows) == 1000
    assert len({r["code"] for r in rows}) == len({r["id"] for r in rows}) == 1000
    assert pipeline_function_rows(1000) == rows
    assert pipeline_function_rows(10) == rows[:10]  # a smaller set is a prefix
    assert pipeline_function_rows(10, seed=1) != rows[:10]


def test_each_takes_any_number_of_integers_and_runs() -> None:
    call = parse_input("3, 1, 4, 1, 5", entry_arity(pipeline_function_rows(1)[0]["code"], "f"))
    for row in pipeline_function_rows(200):
        namespace: dict[str, object] = {}
        exec(row["code"], namespace)  # our own generated code, not untrusted input
        namespace["f"](*call.args)  # type: ignore[operator,misc]

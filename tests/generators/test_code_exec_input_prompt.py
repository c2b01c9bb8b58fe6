"""The input-proposal prompt shows an example call of the function's own arity (a small
model copies the example's shape: a two-argument example for every function taught it
to propose calls the harness rejects)."""

from __future__ import annotations

from generators.code_exec.harness import entry_arity, parse_input
from generators.code_exec.inputs import example_call, input_prompt


def _user(code: str, entry: str) -> str:
    return input_prompt(code, entry, 2)[-1]["content"]


def test_example_has_as_many_arguments_as_the_entry_point() -> None:
    one = "def f(xs):\n    return sorted(xs)\n"
    two = "def g(items, k):\n    return items[:k]\n"
    assert "`f([3, 1, 2])`" in _user(one, "f")
    assert "`g([3, 1, 2], 2)`" in _user(two, "g")
    for code, entry in ((one, "f"), (two, "g")):  # the example itself is a valid input
        parse_input(example_call(code, entry), entry_arity(code, entry))


def test_example_for_varargs_no_arguments_and_broken_code() -> None:
    assert example_call("def f(*xs):\n    return xs\n", "f") == "[3, 1, 2]"
    assert example_call("def f():\n    return 1\n", "f") == ""
    assert example_call("def f(:\n", "f") == "[3, 1, 2]"  # the build reports the syntax error

"""Turning (function, proposed input) into a sandbox program, and its result into a row.

An input is the argument list of one call written as Python literals, e.g.
`[3, 1, 2], 2`. It is parsed with `ast.literal_eval` only (never evaluated), checked
against the entry point's signature, and stored in one canonical spelling so that the
same call proposed twice is recognised. The program runs the function's code with its
prints swallowed and writes only `repr(result)`: what "f(...) returns" means.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

MAX_INPUT_CHARS = 2000


class InputRejected(ValueError):
    """A proposed input that is not a literal argument list this function accepts."""


@dataclass(frozen=True)
class Arity:
    required: int
    maximum: int | None  # None: *args

    def accepts(self, count: int) -> bool:
        return count >= self.required and (self.maximum is None or count <= self.maximum)

    def describe(self) -> str:
        if self.maximum is None:
            return f"at least {self.required}"
        if self.maximum == self.required:
            return str(self.required)
        return f"{self.required} to {self.maximum}"


def entry_arity(code: str, entry_point: str) -> Arity:
    """How many positional arguments `entry_point` takes; ValueError if it is missing."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise ValueError(
            f"the function's code does not parse: {exc.msg} (line {exc.lineno})"
        ) from None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == entry_point:
            args = node.args
            positional = len(args.posonlyargs) + len(args.args)
            required = positional - len(args.defaults)
            return Arity(required, None if args.vararg else positional)
    raise ValueError(f"the code defines no top-level function named {entry_point!r}")


def parse_input(text: str, arity: Arity) -> tuple[Any, ...]:
    """The call's arguments, from literal text like `[1, 2], 'a'`."""
    text = text.strip()
    if not text:
        if arity.accepts(0):
            return ()
        raise InputRejected(f"empty input; the function takes {arity.describe()} arguments")
    if len(text) > MAX_INPUT_CHARS:
        raise InputRejected(f"input longer than {MAX_INPUT_CHARS} characters")
    for candidate in (f"({text},)", f"({text})"):
        try:
            value = ast.literal_eval(candidate)
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            continue
        args = value if isinstance(value, tuple) else (value,)
        if arity.accepts(len(args)):
            try:  # 1e999 parses to inf, whose repr is no literal: it could not be stored
                ast.literal_eval(f"({canonical_input(args)},)")
            except (ValueError, SyntaxError):
                raise InputRejected("a value has no literal spelling (inf or nan)") from None
            return args
        raise InputRejected(f"{len(args)} arguments given; the function takes {arity.describe()}")
    raise InputRejected("not a list of Python literals (parsed with ast.literal_eval)")


def canonical_input(args: tuple[Any, ...]) -> str:
    return ", ".join(repr(arg) for arg in args)


def call_text(entry_point: str, input_text: str) -> str:
    return f"{entry_point}({input_text})"


def program(code: str, entry_point: str, args: tuple[Any, ...]) -> str:
    """A script that defines the function, calls it once, and prints only the repr."""
    return (
        "import contextlib as _podium_cl, io as _podium_io, sys as _podium_sys\n"
        f"_podium_ns = {{'__name__': '__podium_function__'}}\n"
        f"with _podium_cl.redirect_stdout(_podium_io.StringIO()):\n"
        f"    exec(compile({code!r}, 'function.py', 'exec'), _podium_ns)\n"
        f"    _podium_result = _podium_ns[{entry_point!r}](*{args!r})\n"
        "_podium_sys.stdout.write(repr(_podium_result))\n"
    )

"""Turning (function, proposed input) into a sandbox program, and its result into a row.

An input is the argument list of one call, e.g. `[3, 1, 2], 2`. Written as Python
literals it is parsed with `ast.literal_eval` on the host, checked against the entry
point's signature, and stored in one canonical spelling so that the same call proposed
twice is recognised. Any other expression (`[i*i for i in range(5)]`, `dict(a=1)`,
`"ab" * 3`) is only parsed here and stored as written: it is evaluated inside the
sandbox, never in this process, and an input that raises there (or gives the wrong
number of arguments) is reported as rejected (`input_error`), not as a failed call.
The program runs the function's code with its prints swallowed and writes only
`repr(result)`: what "f(...) returns" means.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from generators.sandbox import Result

MAX_INPUT_CHARS = 2000
# How a program says "the input, not the function, failed": this exit status together
# with a marked last stderr line.
INPUT_EXIT = 86
INPUT_MARK = "podium-input-rejected: "


class InputRejected(ValueError):
    """A proposed input that is not an argument list this function accepts."""


@dataclass(frozen=True)
class Call:
    """One call's arguments as the sandbox evaluates them."""

    input: str  # as stored: the canonical literal spelling, or the expression as written
    source: str  # a Python expression for the argument tuple
    args: tuple[Any, ...] | None = None  # the values, when the input is literals


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


def parse_input(text: str, arity: Arity) -> Call:
    """The call for `text`: literals parsed here, any other expression left to the sandbox."""
    text = text.strip()
    if not text:
        if arity.accepts(0):
            return Call("", "()", ())
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
            if _holds_ellipsis(args):  # a model's placeholder, e.g. "f(...)" copied from a doc
                raise InputRejected(
                    "`...` (Ellipsis) is a placeholder, not an input value: propose the "
                    "arguments themselves, e.g. [3, 1, 2]"
                )
            try:  # 1e999 parses to inf, whose repr is no literal: it could not be stored
                ast.literal_eval(f"({canonical_input(args)},)")
            except (ValueError, SyntaxError):
                raise InputRejected(
                    "a number is out of range: it reads as inf or nan, which has no literal "
                    "spelling to store"
                ) from None
            return Call(canonical_input(args), repr(args), args)
        raise InputRejected(f"{len(args)} arguments given; the function takes {arity.describe()}")
    return Call(text, _expression_source(text))


def _holds_ellipsis(value: object) -> bool:
    if value is Ellipsis:
        return True
    if isinstance(value, dict):
        return any(_holds_ellipsis(k) or _holds_ellipsis(v) for k, v in value.items())
    if isinstance(value, list | tuple | set | frozenset):
        return any(_holds_ellipsis(item) for item in value)
    return False


def _expression_source(text: str) -> str:
    error: SyntaxError | None = None
    for candidate in (f"({text},)", f"({text})"):
        try:
            ast.parse(candidate, mode="eval")
        except (SyntaxError, MemoryError, RecursionError, ValueError) as exc:
            error = error or (exc if isinstance(exc, SyntaxError) else SyntaxError(str(exc)))
            continue
        return candidate
    raise InputRejected(f"not a Python argument list: {error.msg if error else 'no parse'}")


def canonical_input(args: tuple[Any, ...]) -> str:
    return ", ".join(repr(arg) for arg in args)


def call_text(entry_point: str, input_text: str) -> str:
    return f"{entry_point}({input_text})"


def program(
    code: str, entry_point: str, call: Call | tuple[Any, ...], arity: Arity | None = None
) -> str:
    """A script that evaluates the call's arguments, defines the function, calls it once,
    and prints only the repr. With `arity`, a wrong argument count rejects the input."""
    source = call.source if isinstance(call, Call) else repr(call)
    count_check = ""
    if arity is not None:
        too_many = "" if arity.maximum is None else f" or len(_podium_args) > {arity.maximum}"
        count_check = (
            f"        if len(_podium_args) < {arity.required}{too_many}:\n"
            "            raise TypeError(f'{len(_podium_args)} arguments given; "
            f"the function takes {arity.describe()}')\n"
        )
    return (
        "import contextlib as _podium_cl, io as _podium_io, sys as _podium_sys\n"
        f"_podium_ns = {{'__name__': '__podium_function__'}}\n"
        "with _podium_cl.redirect_stdout(_podium_io.StringIO()):\n"
        "    try:\n"
        f"        _podium_args = eval(compile({source!r}, 'input', 'eval'), {{}})\n"
        "        if not isinstance(_podium_args, tuple):\n"
        "            _podium_args = (_podium_args,)\n"
        f"{count_check}"
        "    except BaseException as _podium_exc:\n"
        "        _podium_sys.stderr.write(\n"
        f"            f'\\n{INPUT_MARK}{{type(_podium_exc).__name__}}: {{_podium_exc}}\\n'\n"
        "        )\n"
        f"        _podium_sys.exit({INPUT_EXIT})\n"
        f"    exec(compile({code!r}, 'function.py', 'exec'), _podium_ns)\n"
        f"    _podium_result = _podium_ns[{entry_point!r}](*_podium_args)\n"
        "_podium_sys.stdout.write(repr(_podium_result))\n"
    )


def input_error(result: Result) -> str | None:
    """Why the call's input was rejected inside the sandbox; None when it evaluated."""
    if result.exit_code != INPUT_EXIT:
        return None
    for line in reversed(result.stderr.splitlines()):
        if line.startswith(INPUT_MARK):
            return f"the input raised {line[len(INPUT_MARK) :]}"[:500]
    return None

"""As many distinct small functions as a benchmark asks for: seeded pipelines of steps.

The demo families (`demo_functions.py`) run out of distinct members at ~550; a build
over thousands of functions needs more. Each function here takes any number of integers
(`f(*xs)`) and chains two to four steps drawn from a small library (map, filter, a running
fold, a reversal, a sort), with constants from a seeded RNG, then reduces the list to
one value. Same `(count, seed)`, same rows, no download; every code text is distinct.

    from generators.code_exec.pipeline_functions import pipeline_function_rows
    rows = pipeline_function_rows(1000)      # id, name, code, entry_point, source
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from typing import Any

from generators.code_exec.demo_functions import distinct_codes

SOURCE = "podium-pipeline-functions"

Step = Callable[[random.Random], str]

STEPS: tuple[Step, ...] = (
    lambda r: f"xs = [x {r.choice('+-*')} {r.randint(1, 9)} for x in xs]",
    lambda r: f"xs = [x for x in xs if x % {r.randint(2, 5)} {r.choice(['==', '!='])} 0]",
    lambda r: f"xs = [abs(x) // {r.randint(1, 4)} for x in xs]",
    lambda r: f"xs = sorted(xs, reverse={r.choice(['True', 'False'])})",
    lambda r: "xs = xs[::-1]",
    lambda r: f"xs = [min(x, {r.randint(0, 30)}) for x in xs]",
    lambda r: f"xs = [x for i, x in enumerate(xs) if i % {r.randint(2, 3)} != 1]",
    lambda r: (
        f"acc = {r.randint(0, 5)}\n    out = []\n    for x in xs:\n"
        f"        acc = acc {r.choice('+-')} x\n        out.append(acc)\n    xs = out"
    ),
)

REDUCE: tuple[Step, ...] = (
    lambda r: "return xs",
    lambda r: f"return sum(xs) {r.choice('+-*')} {r.randint(1, 9)}",
    lambda r: "return max(xs) if xs else None",
    lambda r: f"return len(xs) * {r.randint(1, 5)}",
    lambda r: "return tuple(xs[:3])",
    lambda r: f"return [x % {r.randint(2, 11)} for x in xs]",
)


def pipeline_code(rng: random.Random) -> str:
    steps = [rng.choice(STEPS)(rng) for _ in range(rng.randint(2, 4))]
    body = "\n    ".join([*steps, rng.choice(REDUCE)(rng)])
    return f"def f(*xs):\n    xs = list(xs)\n    {body}\n"


def pipeline_function_rows(count: int, seed: int = 0) -> list[dict[str, Any]]:
    """`count` distinct functions (fewer only if the library ran out, which it does
    not below many thousands)."""
    codes = distinct_codes(pipeline_code, random.Random(f"pipeline:{seed}"), count)
    return [
        {
            "id": f"pipe-{hashlib.sha1(code.encode()).hexdigest()[:12]}",
            "name": f"pipeline_{i}",
            "code": code,
            "entry_point": "f",
            "source": SOURCE,
        }
        for i, code in enumerate(codes)
    ]

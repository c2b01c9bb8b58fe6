"""A few hundred small, varied Python functions for the `demo.functions` table.

CRUXEval-sized (a handful of lines, one entry point, plain values in and out), made
deterministically from templates and a seeded RNG: no download, same rows every time.
Each template is a family (strings, lists, dicts, numbers, control flow); the RNG picks
constants so that functions within a family compute different things.

    from generators.code_exec.demo_functions import load_demo_functions
    load_demo_functions()          # creates demo.functions if missing; True if created
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from typing import Any

import pyarrow as pa

FUNCTIONS_ARROW_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string()),
        pa.field("name", pa.string()),
        pa.field("code", pa.string()),
        pa.field("entry_point", pa.string()),
        pa.field("source", pa.string()),
    ]
)
DEMO_TABLE = "demo.functions"
SOURCE = "podium-demo-functions"

Template = Callable[[random.Random], str]


def _letters(rng: random.Random, k: int = 1) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(k))


TEMPLATES: dict[str, Template] = {
    "affine": lambda r: f"def f(x):\n    return x * {r.randint(2, 9)} + {r.randint(-20, 20)}\n",
    "digit_sum": lambda r: (
        "def f(n):\n    total = 0\n    n = abs(n)\n    while n:\n"
        f"        total += (n % {r.choice([10, 8, 16])}) ** {r.randint(1, 3)}\n"
        f"        n //= {r.choice([10, 8, 16])}\n    return total\n"
    ),
    "filter_list": lambda r: (
        f"def f(items):\n    return [x {r.choice(['*', '+', '-'])} {r.randint(1, 5)} "
        f"for x in items if x % {r.randint(2, 5)} {r.choice(['==', '!='])} {r.randint(0, 1)}]\n"
    ),
    "running_sum": lambda r: (
        f"def f(nums):\n    out = []\n    acc = {r.randint(0, 3)}\n    for n in nums:\n"
        f"        acc = acc {r.choice(['+', '*', '-'])} n\n        out.append(acc)\n    return out\n"  # noqa: E501
    ),
    "rotate": lambda r: (
        f"def f(items, k):\n    if not items:\n        return items\n"
        f"    k = (k + {r.randint(0, 3)}) % len(items)\n    return items[{r.choice(['k:] + items[:k', '-k:] + items[:-k'])}]\n"  # noqa: E501
    ),
    "reverse_words": lambda r: (
        f"def f(text):\n    words = text.split({r.choice(['None', repr(' '), repr(',')])})\n"
        f"    return {r.choice([repr(' '), repr('-'), repr('')])}.join(w[::-1] "
        f"for w in words{r.choice(['', '[::-1]'])})\n"
    ),
    "count_chars": lambda r: (
        "def f(text):\n    counts = {}\n    for ch in text"
        f"{r.choice(['', '.lower()', '.upper()'])}:\n"
        f"        if ch {r.choice(['in', 'not in'])} {_letters(r, 4)!r}:\n"
        "            counts[ch] = counts.get(ch, 0) + 1\n    return counts\n"
    ),
    "caesar": lambda r: (
        f"def f(text):\n    out = ''\n    for ch in text:\n        if ch.isalpha():\n"
        f"            base = ord('a') if ch.islower() else ord('A')\n"
        f"            out += chr((ord(ch) - base + {r.randint(1, 25)}) % 26 + base)\n"
        "        else:\n            out += ch\n    return out\n"
    ),
    "palindrome": lambda r: (
        f"def f(s):\n    s = ''.join(c for c in s{r.choice(['', '.lower()'])} if c.isalnum())\n"
        f"    return s == s[::-1]{r.choice(['', ' and len(s) > ' + str(r.randint(1, 4))])}\n"
    ),
    "invert_dict": lambda r: (
        "def f(d):\n    out = {}\n    for key, value in d.items():\n"
        f"        out.setdefault(value, []).append(key{r.choice(['', ' * 2'])})\n"
        f"    return {r.choice(['out', 'sorted(out.items())', 'len(out)'])}\n"
    ),
    "merge_dicts": lambda r: (
        "def f(a, b):\n    out = dict(a)\n    for key, value in b.items():\n"
        f"        out[key] = out.get(key, {r.randint(0, 2)}) {r.choice(['+', '*', '-'])} value\n"
        "    return out\n"
    ),
    "collatz": lambda r: (
        f"def f(n):\n    steps = 0\n    while n > 1 and steps < {r.choice([50, 100, 200])}:\n"
        f"        n = n // 2 if n % 2 == 0 else {r.choice([3, 5])} * n + 1\n"
        "        steps += 1\n    return steps\n"
    ),
    "gcd_lcm": lambda r: (
        "def f(a, b):\n    x, y = abs(a), abs(b)\n    while y:\n        x, y = y, x % y\n"
        f"    return {r.choice(['x', '(a * b) // x if x else 0', 'x + ' + str(r.randint(1, 9))])}\n"
    ),
    "primes": lambda r: (
        "def f(n):\n    found = []\n    k = 2\n"
        f"    while len(found) < n and k < {r.choice([100, 500, 1000])}:\n"
        "        if all(k % p for p in found):\n            found.append(k)\n"
        f"        k += 1\n    return {r.choice(['found', 'sum(found)', 'found[-1:]'])}\n"
    ),
    "fib_mod": lambda r: (
        f"def f(n):\n    a, b = {r.randint(0, 2)}, {r.randint(1, 3)}\n    for _ in range(n):\n"
        f"        a, b = b, (a + b) % {r.choice([7, 10, 97, 1000])}\n    return a\n"
    ),
    "chunk": lambda r: (
        f"def f(items, size):\n    size = max(1, size {r.choice(['+', '-'])} {r.randint(0, 1)})\n"
        "    return [items[i:i + size] for i in range(0, len(items), size)]\n"
    ),
    "dedupe": lambda r: (
        "def f(items):\n    seen = set()\n    out = []\n    for x in items:\n"
        f"        key = {r.choice(['x', 'str(x).lower()', 'abs(x) if isinstance(x, int) else x'])}\n"  # noqa: E501
        "        if key not in seen:\n            seen.add(key)\n            out.append(x)\n"
        f"    return out{r.choice(['', '[::-1]'])}\n"
    ),
    "sort_by_key": lambda r: (
        f"def f(words):\n    return sorted(words, key=lambda w: ({r.choice(['len(w)', '-len(w)', 'w[-1:]'])}, w)"  # noqa: E501
        f"{r.choice(['', ', reverse=True'])})\n"
    ),
    "replace_chars": lambda r: (
        f"def f(text):\n    return text.replace({_letters(r)!r}, {_letters(r, 2)!r})"
        f".replace({_letters(r)!r}, {r.choice(['', '*', '_'])!r}){r.choice(['', '.title()', '.swapcase()'])}\n"  # noqa: E501
    ),
    "matrix": lambda r: (
        "def f(rows):\n"
        f"    return {r.choice(['[list(col) for col in zip(*rows)]', '[sum(row) for row in rows]', 'sum(sum(row) for row in rows)'])}\n"  # noqa: E501
    ),
    "bits": lambda r: (
        "def f(n):\n    return "
        + r.choice(["bin(n).count('1')", "n ^ (n >> 1)", "n & -n", "n.bit_length()"])
        + f" {r.choice(['+', '*'])} {r.randint(1, 4)}\n"
    ),
    "string_stats": lambda r: (
        "def f(text):\n    words = text.split()\n"
        f"    return ({r.choice(['len(words)', 'max((len(w) for w in words), default=0)'])}, "
        f"{r.choice(['text.count(' + repr(_letters(r)) + ')', 'sum(c.isdigit() for c in text)'])})\n"  # noqa: E501
    ),
    "clamp_scale": lambda r: (
        f"def f(values, lo, hi):\n    return [min(max(v, lo), hi) {r.choice(['*', '+', '//'])} "
        f"{r.randint(1, 5)} for v in values]\n"
    ),
    "nested_loops": lambda r: (
        f"def f(n):\n    total = 0\n    for i in range(n):\n        for j in range(i):\n"
        f"            if (i + j) % {r.randint(2, 5)} == {r.randint(0, 1)}:\n"
        f"                total += {r.choice(['i', 'j', 'i * j', '1'])}\n    return total\n"
    ),
    "try_except": lambda r: (
        "def f(items, index):\n    try:\n"
        f"        return items[index] {r.choice(['*', '+'])} {r.randint(1, 3)}\n"
        f"    except {r.choice(['IndexError', '(IndexError, TypeError)'])}:\n"
        f"        return {r.choice(['None', '-1', repr('missing')])}\n"
    ),
}

# One plausible call per family: for docs, tests and the sandbox benchmark (in a build
# the model proposes the inputs).
EXAMPLE_ARGS: dict[str, tuple[Any, ...]] = {
    "affine": (7,),
    "digit_sum": (1234,),
    "filter_list": ([1, 2, 3, 4, 5, 6],),
    "running_sum": ([1, 2, 3],),
    "rotate": ([1, 2, 3, 4], 1),
    "reverse_words": ("ab cd,ef",),
    "count_chars": ("Abracadabra",),
    "caesar": ("Hello, World",),
    "palindrome": ("A man a plan",),
    "invert_dict": ({"a": 1, "b": 1, "c": 2},),
    "merge_dicts": ({"a": 1}, {"a": 2, "b": 3}),
    "collatz": (27,),
    "gcd_lcm": (12, 18),
    "primes": (5,),
    "fib_mod": (20,),
    "chunk": ([1, 2, 3, 4, 5], 2),
    "dedupe": ([3, -3, 1, 3],),
    "sort_by_key": (["bb", "a", "ccc"],),
    "replace_chars": ("the quick brown fox",),
    "matrix": ([[1, 2], [3, 4]],),
    "bits": (12,),
    "string_stats": ("a1 bb2 ccc",),
    "clamp_scale": ([-5, 0, 5, 50], 0, 10),
    "nested_loops": (6,),
    "try_except": ([1, 2, 3], 5),
}

FUNCTIONS_PER_FAMILY = 16


def demo_function_rows(
    per_family: int = FUNCTIONS_PER_FAMILY, seed: int = 0
) -> list[dict[str, Any]]:
    """The demo functions: `per_family` distinct functions of each template family."""
    rows: list[dict[str, Any]] = []
    for family, template in TEMPLATES.items():
        codes = distinct_codes(template, random.Random(f"{seed}:{family}"), per_family)
        for i, code in enumerate(codes, start=1):
            digest = hashlib.sha1(code.encode()).hexdigest()[:10]
            rows.append(
                {
                    "id": f"{family}-{digest}",
                    "name": f"{family}_{i}",
                    "code": code,
                    "entry_point": "f",
                    "source": SOURCE,
                }
            )
    return rows


def distinct_codes(make: Template, rng: random.Random, count: int) -> list[str]:
    """Up to `count` distinct code texts from `make`: it gives up after 20 draws per
    text wanted (a template with few variants yields fewer)."""
    codes: list[str] = []
    seen: set[str] = set()
    for _ in range(count * 20):
        if len(codes) == count:
            break
        code = make(rng)
        if code not in seen:
            seen.add(code)
            codes.append(code)
    return codes


def example_args(row: dict[str, Any]) -> tuple[Any, ...]:
    """Arguments of one call that every function of the row's family accepts."""
    return EXAMPLE_ARGS[row["id"].rsplit("-", 1)[0]]


def load_demo_functions(name: str = DEMO_TABLE) -> bool:
    """Create the demo functions table if it is missing; True if it was created."""
    from podium.store.catalog.catalog import table_exists
    from podium.store.schema import PROP_KIND
    from podium.store.write.write import write_table

    if table_exists(name):
        return False
    data = pa.Table.from_pylist(demo_function_rows(), schema=FUNCTIONS_ARROW_SCHEMA)
    write_table(
        name, data, properties={PROP_KIND: "functions", "podium.demo": "code-exec functions"}
    )
    return True

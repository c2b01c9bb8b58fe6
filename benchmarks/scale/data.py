"""Seeded SFT rows, written as JSONL once per shape and cached (no downloads).

Two shapes:
- `make_jsonl`: the real-size rows the speed page's first table used (6 turns, 5-10 KB
  of text a row: prose, Python code and JSON tool results).
- `make_mixed_jsonl`: the scale benchmark's mix (short and multi-turn chats, code and JSON
  answers) with line lengths from 200 B to 32 KiB around a chosen mean, streamed to disk
  in blocks so memory stays flat at any row count.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

WORD = "quetzalcoatl"  # legacy rows: in one row of ~1,000, and in the very last row
RARE_EVERY = 100_003  # mixed rows: one row in ~100k holds WORD, and the very last row
BLOCK = 200_000  # legacy rows generated; bigger files repeat this block with fresh ids
DATA_VERSION = 1  # bump when the legacy generator changes, so cached files are rebuilt
MIXED_VERSION = 1  # the same for the mixed generator
MIN_ROW, MAX_ROW = 200, 32 * 1024  # bytes of one JSONL line, mixed rows

# ---------------------------------------------------------------------- legacy rows

_SYLLABLES = "ka lo mi ne ru ta shi po va de gri ul en or as it fe zo bra quin".split()


def _vocabulary(rng: random.Random, size: int = 4000) -> list[str]:
    words = {"".join(rng.choices(_SYLLABLES, k=rng.randint(1, 4))) for _ in range(size * 2)}
    return sorted(words)[:size]


class RowMaker:
    """Deterministic SFT conversations: a question, a tool call and its JSON result, an
    answer with a code block, a follow-up and a prose answer."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.words = _vocabulary(self.rng)
        self.names = [w for w in self.words if len(w) <= 8][:300]

    def prose(self, n_words: int) -> str:
        words = self.rng.choices(self.words, k=n_words)
        sentences, i = [], 0
        while i < len(words):
            k = self.rng.randint(6, 18)
            sentences.append(" ".join(words[i : i + k]).capitalize() + ".")
            i += k
        return " ".join(sentences)

    def code(self, n_lines: int) -> str:
        rng, names = self.rng, self.names
        fn = rng.choice(names)
        args = ", ".join(rng.sample(names, 2))
        lines = [f"def {fn}_{rng.randint(0, 999)}({args}):"]
        for j in range(n_lines):
            a, b = rng.sample(names, 2)
            lines.append(
                rng.choice(
                    [
                        f"    {a} = {b} * {rng.randint(2, 97)} + len({a!r})",
                        f"    if {a} > {rng.randint(0, 500)}:\n        return {b}",
                        f"    for {a}_{j} in range({rng.randint(3, 40)}):\n        {b} += {a}_{j}",
                        f"    {a}.append({{'{b}': {rng.random():.4f}}})",
                    ]
                )
            )
        lines.append(f"    return {rng.choice(names)}")
        return "\n".join(lines)

    def json_value(self, n_items: int) -> str:
        rng = self.rng
        items = [
            {
                "id": rng.randint(1, 10**9),
                "name": " ".join(rng.choices(self.words, k=3)),
                "score": round(rng.random(), 4),
                "tags": rng.sample(self.names, 3),
                "ok": rng.random() < 0.8,
            }
            for _ in range(n_items)
        ]
        return json.dumps({"results": items, "count": n_items}, ensure_ascii=False)

    def row(self, i: int, last: bool) -> dict[str, Any]:
        rng = self.rng
        question = self.prose(rng.randint(40, 120))
        if i % 997 == 0 or last:
            question += f" Also, what about {WORD}?"
        call = json.dumps(
            {"name": "search", "arguments": {"query": " ".join(rng.choices(self.words, k=4))}}
        )
        result = self.json_value(rng.randint(6, 14))
        if i % 211 == 0:
            result = result[: len(result) // 2]  # a truncated tool result: invalid JSON
        answer = (
            self.prose(rng.randint(80, 200))
            + "\n\n```python\n"
            + self.code(rng.randint(10, 30))
            + "\n```\n\n"
            + self.prose(rng.randint(30, 80))
        )
        return {
            "id": f"row-{i:08d}",
            "messages": [
                {"role": "user", "content": question},
                {"role": "assistant", "content": call},
                {"role": "tool", "content": result},
                {"role": "assistant", "content": answer},
                {"role": "user", "content": self.prose(rng.randint(20, 60))},
                {"role": "assistant", "content": self.prose(rng.randint(120, 320))},
            ],
            "source": f"synthetic-{i % 7}",
            "split": "test" if i % 10 == 0 else "train",
            "tags": ["bench", rng.choice(["code", "json", "prose"])],
            "metadata": {"difficulty": rng.randint(1, 5)},
            "created_at": "2025-01-01T00:00:00+00:00",
        }


def make_jsonl(rows: int, seed: int, cache: Path) -> Path:
    """The benchmark's input file, built once per (rows, seed, DATA_VERSION).

    Past BLOCK rows (a multiple of it), the BLOCK-row file repeats with fresh ids:
    generating 2M rows takes ~25 min of one core, copying ~2 min, and each block keeps
    the row sizes, the search word's density and its hit in the very last row."""
    path = cache / f"sft-{rows}-s{seed}-v{DATA_VERSION}.jsonl"
    if path.exists():
        return path
    cache.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    t0 = time.perf_counter()
    if rows > BLOCK and rows % BLOCK == 0:
        _repeat_block(make_jsonl(BLOCK, seed, cache), rows // BLOCK, tmp)
    else:
        maker = RowMaker(seed)
        with tmp.open("w", encoding="utf-8") as fh:
            for i in range(rows):
                fh.write(json.dumps(maker.row(i, i == rows - 1), ensure_ascii=False) + "\n")
    tmp.rename(path)
    size = path.stat().st_size
    print(f"built {path.name}: {size / 2**30:.2f} GiB in {time.perf_counter() - t0:.0f} s")
    return path


def _repeat_block(block: Path, times: int, out: Path) -> None:
    prefix = b'{"id": "row-'
    width = len(prefix) + 8
    with out.open("wb") as dst:
        for k in range(times):
            with block.open("rb") as src:
                for i, line in enumerate(src):
                    assert line.startswith(prefix), "the block's rows start with their id"
                    dst.write(b'{"id": "row-%08d' % (k * BLOCK + i) + line[width:])


# ----------------------------------------------------------------------- mixed rows

# Kinds of conversation, their share of rows, and the smallest line each fits in.
KINDS = {
    "chat-short": (0.35, 0),
    "chat-multi": (0.30, 900),
    "code": (0.20, 600),
    "json": (0.15, 700),
}
SIGMA = 1.0  # spread of the log-normal line lengths (mean 1 KiB: median ~600 B)


def lognormal_mu(mean_bytes: float, sigma: float = SIGMA) -> float:
    """The mu whose log-normal, clipped to [MIN_ROW, MAX_ROW], has this mean: bisection
    over one fixed sample, so every machine draws the same lengths."""
    if not MIN_ROW < mean_bytes < MAX_ROW:
        raise ValueError(f"the mean row must lie between {MIN_ROW} B and {MAX_ROW // 1024} KiB")
    rng = random.Random(12345)
    z = [rng.gauss(0.0, 1.0) for _ in range(20_000)]
    lo, hi = math.log(MIN_ROW) - 3 * sigma, math.log(MAX_ROW) + 3 * sigma
    for _ in range(40):
        mid = (lo + hi) / 2
        mean = sum(min(MAX_ROW, max(MIN_ROW, math.exp(mid + sigma * x))) for x in z) / len(z)
        lo, hi = (mid, hi) if mean < mean_bytes else (lo, mid)
    return (lo + hi) / 2


class MixedRowMaker:
    """Rows of a given line length, cut from seeded corpora (slicing is what keeps 10M
    rows to minutes): prose, Python code, and JSON built from pre-serialized items."""

    def __init__(self, seed: int, mean_bytes: float) -> None:
        self.rng = random.Random(seed)
        self.mu = lognormal_mu(mean_bytes)
        base = RowMaker(seed)
        self.prose = base.prose(60_000)
        self.code = "\n\n".join(base.code(base.rng.randint(5, 30)) for _ in range(400))
        self.items = [
            json.dumps(
                {
                    "id": base.rng.randint(1, 10**9),
                    "name": " ".join(base.rng.choices(base.words, k=3)),
                    "score": round(base.rng.random(), 4),
                    "tags": base.rng.sample(base.names, 3),
                    "ok": base.rng.random() < 0.8,
                },
                ensure_ascii=False,
            )
            for _ in range(2000)
        ]
        # JSON-escaping grows code and JSON text (newlines, quotes): budgets divide by it.
        self.grow = {
            "prose": 1.0,
            "code": len(json.dumps(self.code)) / len(self.code),
            "json": len(json.dumps(",".join(self.items))) / len(",".join(self.items)),
        }
        self.kinds, self.weights = list(KINDS), [w for w, _ in KINDS.values()]
        self.debt = 0.0  # bytes the rows so far fell short of their targets

    def slice(self, corpus: str, n: int) -> str:
        n = max(0, min(n, len(corpus)))
        start = self.rng.randrange(len(corpus) - n + 1)
        return corpus[start : start + n]

    def json_text(self, n: int) -> str:
        parts: list[str] = []
        size = 30
        while size < n:
            parts.append(self.rng.choice(self.items))
            size += len(parts[-1]) + 1
        return '{"results": [' + ",".join(parts) + f'], "count": {len(parts)}}}'

    def target(self) -> tuple[float, int]:
        """A drawn line length, and the length to aim at: the drawn one corrected by what
        earlier lines over- or undershot theirs (escapes, whole JSON items)."""
        drawn = min(MAX_ROW, max(MIN_ROW, math.exp(self.mu + SIGMA * self.rng.gauss(0, 1))))
        fix = max(-drawn / 10, min(drawn / 10, self.debt))
        return drawn, int(min(MAX_ROW, max(MIN_ROW, drawn + fix)))

    def turns(self, kind: str, n: int, budget: int, i: int) -> list[tuple[str, str]]:
        rng, b = self.rng, max(budget, 8)
        if kind == "chat-short":
            return [
                ("user", self.slice(self.prose, b * 3 // 10)),
                ("assistant", self.slice(self.prose, b * 7 // 10)),
            ]
        if kind == "chat-multi":
            weights = [
                rng.uniform(0.3, 0.8) if k % 2 == 0 else rng.uniform(0.8, 2.0) for k in range(n)
            ]
            total = sum(weights)
            return [
                ("user" if k % 2 == 0 else "assistant", self.slice(self.prose, int(b * w / total)))
                for k, w in enumerate(weights)
            ]
        if kind == "code":
            code = int(b * 0.7 / self.grow["code"])
            answer = (
                self.slice(self.prose, b // 10)
                + "\n\n```python\n"
                + self.slice(self.code, code)
                + "\n```\n\n"
                + self.slice(self.prose, b // 20)
            )
            return [("user", self.slice(self.prose, b * 15 // 100 - 20)), ("assistant", answer)]
        call = json.dumps({"name": "search", "arguments": {"query": self.slice(self.prose, 24)}})
        result = self.json_text(int(b * 0.6 / self.grow["json"]) - len(call))
        if i % 211 == 0:
            result = result[: len(result) // 2]  # a truncated tool result: invalid JSON
        return [
            ("user", self.slice(self.prose, b * 15 // 100)),
            ("assistant", call),
            ("tool", result),
            ("assistant", self.slice(self.prose, b // 4)),
        ]

    def row(self, i: int, last: bool) -> str:
        """Row `i` as one JSONL line (with its newline)."""
        drawn, target = self.target()
        kind = self.rng.choices(self.kinds, self.weights)[0]
        if target < KINDS[kind][1]:
            kind = "chat-short"
        n = {"chat-short": 2, "code": 2, "json": 4}.get(kind) or 2 * self.rng.randint(2, 4)
        head = {
            "id": f"row-{i:08d}",
            "source": kind,
            "split": "test" if i % 10 == 0 else "train",
            "metadata": {"difficulty": self.rng.randint(1, 5)},
        }
        # {"role": "assistant", "content": ""} and its separator: ~34 bytes a turn.
        overhead = len(json.dumps(head)) + len(', "messages": []') + 34 * n + 1
        turns = self.turns(kind, n, target - overhead, i)
        if i % RARE_EVERY == 7 or last:
            role, content = turns[0]
            turns[0] = (role, content + f" Also, what about {WORD}?")
        line = self.line(head, turns)
        if len(line) > MAX_ROW:  # an escape-heavy slice: the same row, shorter
            role, content = turns[-1]
            turns[-1] = (role, content[: max(0, len(content) - (len(line) - MAX_ROW) - 64)])
            line = self.line(head, turns)
        elif len(line) < MIN_ROW:
            role, content = turns[-1]
            turns[-1] = (role, content + self.slice(self.prose, MIN_ROW - len(line) + 8))
            line = self.line(head, turns)
        self.debt += drawn - len(line.encode())
        return line

    @staticmethod
    def line(head: Mapping[str, object], turns: list[tuple[str, str]]) -> str:
        messages = [{"role": r, "content": c} for r, c in turns]
        return json.dumps({**head, "messages": messages}, ensure_ascii=False) + "\n"


def make_mixed_jsonl(rows: int, mean_kib: float, seed: int, cache: Path) -> Path:
    """The scale benchmark's input, built once per (rows, mean, seed, MIXED_VERSION) and
    written in blocks of 10,000 lines (memory stays flat at 10M rows)."""
    path = cache / f"mixed-{rows}-m{mean_kib:g}k-s{seed}-v{MIXED_VERSION}.jsonl"
    if path.exists():
        return path
    cache.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    t0 = time.perf_counter()
    maker = MixedRowMaker(seed, mean_kib * 1024)
    with tmp.open("w", encoding="utf-8") as fh:
        for start in range(0, rows, 10_000):
            fh.writelines(
                maker.row(i, i == rows - 1) for i in range(start, min(rows, start + 10_000))
            )
    tmp.rename(path)
    size = path.stat().st_size
    print(
        f"built {path.name}: {size / 2**30:.2f} GiB, {size / rows:,.0f} B a row, "
        f"in {time.perf_counter() - t0:.0f} s",
        flush=True,
    )
    return path

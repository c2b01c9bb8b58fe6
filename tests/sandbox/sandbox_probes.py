"""Helpers of the hostile suite: run a probe, check the pool afterwards, and keep the
"probe x backend -> outcome" table that the suite writes to test-artifacts/ (and the
README's Security section quotes)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from generators.sandbox import Result, Sandbox

# probe -> backend -> what happened, filled only by probes whose assertions passed.
TABLE: dict[str, dict[str, str]] = {}
BACKENDS = ("local", "docker")


def run(box: Sandbox, code: str, **kwargs: object) -> Result:
    return box.run(textwrap.dedent(code), **kwargs)  # type: ignore[arg-type]


def assert_next_job_works(box: Sandbox) -> None:
    """After any attack the pool still runs ordinary code, and nothing is left over."""
    result = run(
        box,
        """
        import os
        others = [p for p in os.listdir('/proc') if p.isdigit() and int(p) not in (1, os.getpid())]
        print('ok', others, sorted(os.listdir('/tmp')))
        """,
    )
    assert result.status == "ok", result
    assert result.stdout == "ok [] []\n"


def outcome(result: Result) -> str:
    """A table cell for a run: its status and, when there is one, the sandbox's detail."""
    return f"`{result.status}` ({result.detail})" if result.detail else f"`{result.status}`"


def record(box: Sandbox, probe: str, cell: str) -> None:
    TABLE.setdefault(probe, {})[box.backend] = cell


def write_table(path: Path) -> None:
    if not TABLE:
        return
    lines = ["| probe | " + " | ".join(BACKENDS) + " |", "|---" * (len(BACKENDS) + 1) + "|"]
    for probe, cells in TABLE.items():
        row = [cells.get(backend, "not run") for backend in BACKENDS]
        lines.append(f"| {probe} | " + " | ".join(row) + " |")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")

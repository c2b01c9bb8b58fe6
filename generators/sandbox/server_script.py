"""The fork server as the one script a sandbox runs: its parts joined, in order.

A sandbox holds a single file and nothing of the checkout (no package to import from),
so the parts in `generators/sandbox/server/` and `forkserver.py` are joined into one
module: each part's text as written, less its imports of the other parts, whose names
the earlier parts of the same script already define. Every part is stdlib only.

    python -m generators.sandbox.server_script > forkserver.py   # the script, to read or run
"""

from __future__ import annotations

import ast
import functools
import os
import sys
from pathlib import Path

HERE = Path(__file__).parent
PACKAGE = "generators.sandbox"
# Definition order: a part comes after every part whose names it uses at import time.
PARTS = (
    "server/wire.py",
    "server/confine.py",
    "server/child.py",
    "server/cleanup.py",
    "server/watch.py",
    "server/stdio.py",
    "server/verdict.py",
    "forkserver.py",
)


def own_import_lines(source: str) -> set[int]:
    """Line numbers (1-based) of the statements that import from this package."""
    lines: set[int] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        elif isinstance(node, ast.Import) and any(
            alias.name.startswith(PACKAGE) for alias in node.names
        ):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def joined_part(name: str) -> str:
    source = (HERE / name).read_text()
    skip = own_import_lines(source)
    kept = [line for number, line in enumerate(source.splitlines(True), 1) if number not in skip]
    return f"# --- {name}\n" + "".join(kept)


@functools.cache
def server_source() -> str:
    """The fork server's whole source, as `python3 -s -c` or a script file runs it."""
    return "\n\n".join(joined_part(name) for name in PARTS)


def interpreter() -> tuple[str, str]:
    """The host's base Python and the prefix that must be visible. Not the venv's own
    binary: a venv made with --copies (or by venv.EnvBuilder's default) holds a copy
    outside that prefix, which the sandbox cannot see."""
    prefix = os.path.realpath(sys.base_prefix)
    base = Path(prefix, "bin", f"python{sys.version_info[0]}.{sys.version_info[1]}")
    exe = str(base) if base.exists() else sys.executable
    return os.path.realpath(exe), prefix


if __name__ == "__main__":
    print(server_source(), end="")

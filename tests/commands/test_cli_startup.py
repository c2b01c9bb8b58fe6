"""`podium --help` and `podium tables` start without the heavy libraries.

Modules loaded are counted, never wall-clock time: each of these costs 0.1-2 s to
import and is needed only inside the commands that use it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from podium.cli import COMMANDS, module_commands

HEAVY = ("torch", "pyiceberg", "pyarrow", "streamlit", "duckdb", "openai", "vllm", "pandas")

PROBE = """
import json, sys
from podium.cli import app
try:
    app.main(sys.argv[1:], prog_name="podium", standalone_mode=False)
finally:
    loaded = {{m.split(".")[0] for m in sys.modules}} & set({heavy!r})
    print(json.dumps(sorted(loaded)), file=sys.stderr)
"""


def heavy_modules_after(*args: str) -> list[str]:
    code = PROBE.format(heavy=HEAVY)
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("args", [("--help",), ("tables",), ("tables", "--json")])
def test_quick_commands_import_no_heavy_library(podium_home: Path, args: tuple[str, ...]) -> None:
    assert heavy_modules_after(*args) == []


def test_tables_lists_what_the_catalog_holds(podium_home: Path) -> None:
    import pyarrow as pa

    from podium.store.catalog.catalog import list_tables
    from podium.store.catalog.names import table_names
    from podium.store.write.write import write_table

    assert table_names() == []
    write_table("b.two", pa.table({"x": [1]}), mode="create")
    write_table("a.one", pa.table({"x": [1]}), mode="create")
    assert table_names() == list_tables() == ["a.one", "b.two"]


def test_every_listed_command_exists_and_none_is_hidden() -> None:
    found: dict[str, str] = {}
    for module in sorted({m for m, _ in COMMANDS.values()}):
        for name in module_commands(module):
            found[name] = module
    assert found == {name: module for name, (module, _) in COMMANDS.items()}

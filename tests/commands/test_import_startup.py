"""`podium import` run as its own process skips what it never uses before its first row:
pandas (pyarrow's dataset module probes for it) and, into an existing table, pyiceberg's
SQL catalog with SQLAlchemy's ORM (`podium.commands.import_command`); and it begins
parsing a JSONL input before its job machinery is loaded (`store.write.parse_ahead`).

Modules loaded are counted, never wall-clock time. The rows are compared with the same
file imported in this process (CliRunner-style: no one-shot shortcuts), every column.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa

from podium.store.catalog.catalog import load_table
from podium.store.write.ingest import import_file

WATCHED = ("pandas", "pyiceberg.catalog.sql", "sqlalchemy.orm")

# As `podium ...` from a shell runs it: podium.cli.main marks the process one-shot.
PROBE = """
import json, sys
from podium.cli import main
sys.argv = ["podium", *sys.argv[1:]]
try:
    main()
finally:
    print(json.dumps(sorted(set({watched!r}) & set(sys.modules))), file=sys.stderr)
"""


def podium_process(*args: str) -> list[str]:
    """Run `podium ARGS` in a fresh process; the watched modules it had loaded at exit."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(watched=WATCHED), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stderr.strip().splitlines()[-1])


def _chat_file(path: Path, rows: int) -> Path:
    with path.open("w") as fh:
        for i in range(rows):
            record = {
                "id": f"r{i}",
                "created_at": "2026-01-02T03:04:05+00:00",
                "messages": [
                    {"role": "user", "content": f"question {i}"},
                    {"role": "assistant", "content": f"answer {i} é"},
                ],
            }
            fh.write(json.dumps(record) + "\n")
    return path


def _rows(name: str) -> pa.Table:
    return load_table(name).scan().to_arrow().sort_by("id")


def test_a_cold_import_skips_pandas_and_an_overwrite_the_sql_catalog(
    podium_home: Path, tmp_path: Path
) -> None:
    data = _chat_file(tmp_path / "chat.jsonl", 50)
    assert podium_process("import", str(data), "--table", "lean.chat") == [
        "pyiceberg.catalog.sql",  # creating a table is SqlCatalog's
        "sqlalchemy.orm",
    ]
    overwrite = ("import", str(data), "--table", "lean.chat", "--mode", "overwrite")
    assert podium_process(*overwrite) == []

    import_file(data, "lean.inprocess")
    assert _rows("lean.chat").equals(_rows("lean.inprocess"))
    assert load_table("lean.chat").scan().count() == 50  # overwritten, not appended


# The parses an import started, each with whether the job machinery was loaded by then:
# the one `parse_ahead` began as the options were read, before the job, taken over by
# the import, is the only one.
AHEAD_PROBE = """
import json, sys
from podium.store.write import parse_ahead as ahead
started = []
start = ahead._start_parsing
def counted(*args, **kwargs):
    started.append([args[1].name, 'podium.jobs.launch' in sys.modules])
    return start(*args, **kwargs)
ahead._start_parsing = counted
from podium.cli import main
sys.argv = ["podium", *sys.argv[1:]]
try:
    main()
finally:
    print(json.dumps([started, len(ahead._ahead)]), file=sys.stderr)
"""


def test_a_cold_import_parses_once_begun_before_its_job(podium_home: Path, tmp_path: Path) -> None:
    data = _chat_file(tmp_path / "chat.jsonl", 50)
    proc = subprocess.run(
        [sys.executable, "-c", AHEAD_PROBE, "import", str(data), "--table", "ahead.chat"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    started, left = json.loads(proc.stderr.strip().splitlines()[-1])
    assert started == [["chat.jsonl", False]] and left == 0  # begun ahead, taken over
    import_file(data, "ahead.inprocess")
    assert _rows("ahead.chat").equals(_rows("ahead.inprocess"))

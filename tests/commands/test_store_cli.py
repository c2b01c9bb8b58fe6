"""The data commands as a person runs them: real `podium` processes, exit codes, JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cli_fork
import pytest

PODIUM = [sys.executable, "-m", "podium.cli"]


def podium(*args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    proc = cli_fork.run([*PODIUM, *args], capture_output=True, text=True, timeout=300)
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture
def jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"r{i}",
                    "messages": [
                        {
                            "role": "user",
                            "content": f"tell me about {'zebras' if i % 3 == 0 else 'cats'}",
                        },
                        {"role": "assistant", "content": f"fact {i}"},
                    ],
                }
            )
            + "\n"
            for i in range(12)
        )
    )
    return path


def test_bad_line_7_fails_naming_it_and_leaves_no_table(podium_home: Path, jsonl: Path) -> None:
    lines = jsonl.read_text().splitlines()
    lines[6] = lines[6][:-5]
    jsonl.write_text("\n".join(lines) + "\n")
    proc = podium("import", str(jsonl), "--table", "t.bad", ok=False)
    assert proc.returncode != 0
    assert "data.jsonl line 7" in proc.stderr
    assert json.loads(podium("tables", "--json").stdout) == []


def test_search_json_returns_exactly_matching_rows(podium_home: Path, jsonl: Path) -> None:
    podium("import", str(jsonl), "--table", "t.chat")
    out = json.loads(
        podium("show", "t.chat", "--json", "--search", "zebra", "--limit", "100").stdout
    )
    assert [r["id"] for r in out["rows"]] == ["r0", "r3", "r6", "r9"]
    assert out["total"] == 4


def test_show_first_snapshot_returns_rows_as_they_were(
    podium_home: Path, jsonl: Path, tmp_path: Path
) -> None:
    podium("import", str(jsonl), "--table", "t.chat")
    more = tmp_path / "more.jsonl"
    more.write_text(
        json.dumps({"id": "new", "messages": [{"role": "user", "content": "x"}]}) + "\n"
    )
    podium("import", str(more), "--table", "t.chat", "--mode", "append")
    snaps = json.loads(podium("snapshots", "t.chat", "--json").stdout)
    assert len(snaps) == 2
    first = json.loads(
        podium(
            "show", "t.chat", "--json", "--limit", "100", "--snapshot", str(snaps[0]["snapshot_id"])
        ).stdout
    )
    assert first["total"] == 12 and "new" not in [r["id"] for r in first["rows"]]
    current = json.loads(podium("show", "t.chat", "--json", "--limit", "100").stdout)
    assert current["total"] == 13
    proc = podium("show", "t.chat", "--snapshot", "123", ok=False)
    assert proc.returncode != 0 and "no snapshot 123" in proc.stderr


def test_export_then_reimport_gives_identical_rows(
    podium_home: Path, jsonl: Path, tmp_path: Path
) -> None:
    podium("import", str(jsonl), "--table", "t.chat")
    podium("export", "t.chat", str(podium_home / "exports" / "out.jsonl"))
    podium("import", str(podium_home / "exports" / "out.jsonl"), "--table", "t.copy")
    a = json.loads(podium("show", "t.chat", "--json", "--limit", "100").stdout)["rows"]
    b = json.loads(podium("show", "t.copy", "--json", "--limit", "100").stdout)["rows"]
    assert a == b and len(a) == 12


def test_missing_table_and_sql_refusal(podium_home: Path) -> None:
    proc = podium("show", "no.such", ok=False)
    assert proc.returncode == 2 and "No table named no.such" in proc.stderr
    proc = podium("sql", "DELETE FROM x.y", ok=False)
    assert proc.returncode == 2 and "read-only" in proc.stderr


def test_demo_is_idempotent_and_sql_reads_it(podium_home: Path) -> None:
    created = json.loads(podium("demo", "--json").stdout)
    assert created["demo.json_sft"] is True and created["demo.chat"] is True
    again = json.loads(podium("demo", "--json").stdout)
    assert not any(again.values())
    rows = json.loads(podium("sql", "SELECT count(*) AS n FROM demo.json_sft", "--json").stdout)
    assert rows == [{"n": 3000}]

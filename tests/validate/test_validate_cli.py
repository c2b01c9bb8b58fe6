"""`podium validate` end to end: the real CLI process, the jobs system, the demo table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import cli_fork
from validate_planted import check_against_planted, demo_rows

from podium.jobs.queue import list_jobs
from podium.store.catalog.catalog import load_table, table_exists


def podium(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = cli_fork.run(
        [sys.executable, "-m", "podium.cli", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=300,
    )
    if check:
        assert result.returncode == 0, result.stderr
    return result


def test_json_output_reports_exactly_the_planted_rows(demo_home: Path) -> None:
    out = podium(
        "validate",
        "demo.json_sft",
        "--rule",
        "json",
        "--rule",
        "json-schema",
        "--extract",
        "fenced",
        "--json",
    )
    result = json.loads(out.stdout)
    check_against_planted(result["failures"])
    assert result["summary"]["failures"] == len(demo_rows()[1])
    (job,) = [j for j in list_jobs() if j["kind"] == "validate"]
    assert job["status"] == "succeeded"
    report = load_table("demo.json_sft__validation")
    assert report.properties["podium.lineage.job_id"] == job["id"]


def test_text_output_marks_the_error(demo_home: Path) -> None:
    out = podium(
        "validate",
        "demo.json_sft",
        "--rule",
        "json",
        "--extract",
        "fenced",
        "--report",
        "demo.text_run",
    )
    assert "3000 rows" in out.stdout
    assert "trailing-comma" in out.stdout
    lines = out.stdout.splitlines()
    carets = [i for i, line in enumerate(lines) if line.lstrip().startswith("|") and "^" in line]
    assert carets, out.stdout
    # The caret sits under a character of the line above it.
    above, caret = lines[carets[0] - 1], lines[carets[0]]
    assert above[caret.index("^")] in "'{,\"Te"


def test_card_only_writes_the_card(demo_home: Path, tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text('{"type": "object"}')
    card = tmp_path / "validate.md"
    podium(
        "validate",
        "demo.json_sft",
        "--rule",
        f"json-schema:{schema}",
        "--report",
        "demo.from_card",
        "--card",
        str(card),
    )
    text = card.read_text()
    assert text.startswith("---\nkind: validate\n")
    snapshot = load_table("demo.json_sft").current_snapshot().snapshot_id
    assert f"snapshot_id: {snapshot}" in text and str(schema.resolve()) in text
    assert not table_exists("demo.from_card")
    podium("run", str(card))
    assert table_exists("demo.from_card")


def test_bad_rules_fail_before_a_job_starts(demo_home: Path, tmp_path: Path) -> None:
    before = len(list_jobs())
    bad = tmp_path / "bad.json"
    bad.write_text('{"type": 12}')
    for rule, message in (
        ("yaml", "Unknown rule 'yaml'"),
        (f"json-schema:{bad}", "bad.json is invalid"),
        (f"json-schema:{tmp_path / 'missing.json'}", "does not exist"),
    ):
        out = podium("validate", "demo.json_sft", "--rule", rule, check=False)
        assert out.returncode == 2
        assert message in out.stderr
    assert len(list_jobs()) == before

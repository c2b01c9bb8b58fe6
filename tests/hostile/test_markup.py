"""I2: text that looks like rich markup or terminal control is printed as data by every
command that shows rows, names or error messages; usage errors print usage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile_helpers import podium, refused

MARKUP = ["[/INST]", "[bold", "[/red]", "[link=http://evil]x[/link]"]


@pytest.fixture
def marked_table(podium_home: Path, tmp_path: Path) -> str:
    path = tmp_path / "marked.jsonl"
    rows = [
        {
            "id": f"{text}-{i}",
            "source": text,
            "tags": [text],
            "messages": [
                {"role": "user", "content": f"{text} hi"},
                {"role": "assistant", "content": f"{text} not json"},
            ],
        }
        for i, text in enumerate(MARKUP)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert podium("import", str(path), "--table", "ns.marked").returncode == 0
    return "ns.marked"


def shows_all(proc_out: str) -> None:
    for text in MARKUP:
        assert text in proc_out, text


def test_sql_prints_markup_and_escapes_as_data(marked_table: str) -> None:
    proc = podium("sql", f"SELECT id, source, 'x' || chr(27) || '[2J' AS esc FROM {marked_table}")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    shows_all(proc.stdout)
    assert "\x1b" not in proc.stdout and "x\\x1b[2J" in proc.stdout


def test_show_prints_markup_as_data(marked_table: str) -> None:
    proc = podium("show", marked_table, "--limit", "10")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    shows_all(proc.stdout)


def test_validate_report_with_markup_ids_prints(marked_table: str) -> None:
    proc = podium("validate", marked_table, "--rule", "json", "--roles", "assistant")
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, proc.stderr
    assert "[/INST]-0 turn 1" in proc.stdout
    report = podium("sql", f"SELECT id FROM {marked_table}__validation ORDER BY id")
    assert report.returncode == 0, report.stderr
    shows_all(report.stdout)


def test_error_message_quoting_markup_prints(podium_home: Path, tmp_path: Path) -> None:
    path = tmp_path / "speaker.jsonl"
    path.write_text(json.dumps({"conversations": [{"from": "[/INST]", "value": "x"}]}) + "\n")
    proc = podium("import", str(path), "--table", "ns.speaker")
    assert "Traceback" not in proc.stderr and proc.returncode != 0
    assert "turn 0 has unknown speaker '[/INST]'" in " ".join(proc.stderr.split())


@pytest.mark.parametrize(
    "args",
    [
        ["show", "ns.t", "--bogus"],
        ["tables", "--bogus"],
        ["import", "x.jsonl", "--nope"],
        ["sql", "--frobnicate", "SELECT 1"],
        ["jobs", "--bogus"],
        ["validate", "ns.t", "--bogus"],
        ["run"],
        ["no-such-command"],
    ],
)
def test_usage_errors_print_usage_not_a_traceback(podium_home: Path, args: list[str]) -> None:
    proc = podium(*args)
    refused(proc, "Error:")
    assert "Usage:" in proc.stderr or "Try '" in proc.stderr

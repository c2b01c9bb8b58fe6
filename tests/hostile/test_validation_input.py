"""Hostile sample text in validation: billion-laughs XML, external entities and JSON
nested past any recursion limit are reported as failing turns, never crash the run."""

from __future__ import annotations

import json
from pathlib import Path

from hostile_helpers import podium

from podium.store.read.sql_console import run_sql
from podium.store.write.ingest import import_file

LAUGHS = (
    '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n<!ENTITY lol "lol">\n'
    + "\n".join(
        f'<!ENTITY lol{n} "' + f"&lol{n - 1 if n > 1 else ''};" * 10 + '">' for n in range(1, 10)
    )
    + "\n]>\n<lolz>&lol9;</lolz>"
)
XXE = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>'
DEEP_JSON = "[" * 200_000 + "]" * 200_000
DEEP_OBJECT = '{"a":' * 50_000 + "1" + "}" * 50_000


def hostile_table(tmp_path: Path, texts: list[str]) -> str:
    path = tmp_path / "hostile.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"h{i}",
                    "messages": [
                        {"role": "user", "content": "answer"},
                        {"role": "assistant", "content": text},
                    ],
                }
            )
            + "\n"
            for i, text in enumerate(texts)
        )
    )
    import_file(path, "ns.hostile")
    return "ns.hostile"


def test_xml_bombs_are_failing_turns_not_expansions(podium_home: Path, tmp_path: Path) -> None:
    table = hostile_table(tmp_path, [LAUGHS, XXE, "<ok/>"])
    proc = podium("validate", table, "--rule", "xml", "--roles", "assistant", "--json")
    assert "Traceback" not in proc.stderr and proc.returncode == 0, proc.stderr
    report = run_sql(f"SELECT id, message FROM {table}__validation ORDER BY id").to_pylist()
    assert {r["id"] for r in report} <= {"h0", "h1"}
    assert all("root:" not in (r["message"] or "") for r in report)  # /etc/passwd unread
    assert all(len(r["message"] or "") < 2000 for r in report)


def test_json_nested_past_any_limit_is_a_failing_turn(podium_home: Path, tmp_path: Path) -> None:
    table = hostile_table(tmp_path, [DEEP_JSON, DEEP_OBJECT, '{"fine": 1}'])
    schema = tmp_path / "schema.json"
    schema.write_text('{"type": "object"}')
    for rule in ("json", f"json-schema:{schema}"):
        proc = podium("validate", table, "--rule", rule, "--roles", "assistant", "--json")
        assert "Traceback" not in proc.stderr, proc.stderr
        assert "RecursionError" not in proc.stderr + proc.stdout
        assert proc.returncode == 0, proc.stderr
        ids = run_sql(f"SELECT DISTINCT id FROM {table}__validation ORDER BY id").to_pylist()
        assert [r["id"] for r in ids] == ["h0", "h1"], rule

"""I3: a `--where` condition is parsed on its own and rebuilt from its parse tree, so it
can neither escape the filters and id sets ANDed with it nor read files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile_helpers import podium, refused

from podium.errors import InvalidInput
from podium.store.read.query import count_by, page
from podium.store.read.sql_console import run_sql
from podium.store.write.ingest import import_file

ESCAPE = "source = 'a') OR (1=1"


@pytest.fixture
def chat(podium_home: Path, chat_jsonl: Path) -> str:
    import_file(chat_jsonl, "ns.chat")  # r0..r9, source a for odd, b for even
    return "ns.chat"


def ids_of(rows: list[dict[str, object]]) -> list[object]:
    return [r["id"] for r in rows]


def test_closing_parenthesis_payload_is_refused_not_widened(chat: str) -> None:
    with pytest.raises(InvalidInput, match="does not parse as a single SQL condition"):
        page(chat, where=ESCAPE, ids=["r1"])
    with pytest.raises(InvalidInput, match="does not parse as a single SQL condition"):
        page(chat, where=ESCAPE, filters={"source": "b"})
    with pytest.raises(InvalidInput, match="does not parse"):
        count_by(chat, "source", where=ESCAPE, search="question 3")


def test_or_inside_the_where_stays_inside_it(chat: str) -> None:
    found = page(chat, where="source = 'a' OR 1=1", ids=["r2", "r5"], limit=100)
    assert ids_of(found.rows) == ["r2", "r5"] and found.total == 2
    found = page(chat, where="source = 'a' OR true", filters={"source": "b"}, limit=100)
    assert ids_of(found.rows) == ["r0", "r2", "r4", "r6", "r8"]
    found = page(chat, where="source = 'a' OR id = 'r0'", search="question 3", limit=100)
    assert ids_of(found.rows) == ["r3"]


@pytest.mark.parametrize(
    ("where", "why"),
    [
        ("id IN (SELECT * FROM read_csv('/etc/passwd'))", "contains a subquery"),
        ("(SELECT count(*) FROM read_text('/etc/passwd')) > 0", "contains a subquery"),
        ("EXISTS (SELECT 1 FROM glob('/*'))", "contains a subquery"),
        ("1=1; COPY t TO '/tmp/podium-stolen.csv'", "single SQL condition"),
        ("1=1; ATTACH '/tmp/podium-evil.db' AS evil", "single SQL condition"),
        ("1=1 ORDER BY 1", "single SQL condition"),
        ("1=1 LIMIT 1", "single SQL condition"),
        ("1=1 UNION ALL SELECT * FROM t", "single SQL condition"),
        ("1=1) UNION ALL (SELECT * FROM t", "does not parse"),
    ],
)
def test_where_that_is_not_one_condition_on_the_row_is_refused(
    chat: str, where: str, why: str
) -> None:
    with pytest.raises(InvalidInput, match=why):
        page(chat, where=where)
    assert not Path("/tmp/podium-stolen.csv").exists()


@pytest.mark.parametrize(
    "sql", ["COPY (SELECT 1) TO '/tmp/podium-copy.csv'", "ATTACH '/tmp/podium-att.db' AS x"]
)
def test_sql_console_refuses_copy_and_attach(chat: str, sql: str) -> None:
    with pytest.raises(InvalidInput, match="single SELECT"):
        run_sql(sql)
    assert not Path("/tmp/podium-copy.csv").exists() and not Path("/tmp/podium-att.db").exists()


def test_cli_show_refuses_the_payload(chat: str) -> None:
    proc = podium("show", chat, "--where", ESCAPE, "--search", "question 3", "--json")
    refused(proc, "does not parse as a single SQL condition")


def test_cli_delete_rows_with_the_payload_deletes_nothing(chat: str) -> None:
    before = json.loads(podium("show", chat, "--json", "--limit", "100").stdout)["total"]
    proc = podium("delete-rows", chat, "r1", "--where", ESCAPE, "-m", "attack")
    assert "Traceback" not in proc.stderr and proc.returncode != 0
    after = json.loads(podium("show", chat, "--json", "--limit", "100").stdout)["total"]
    assert before == after == 10


@pytest.mark.parametrize(
    "where",
    [
        "NOT " * 400 + "source = 'a'",
        " + ".join(["length(id)"] * 400) + " > 0",
        "abs(" * 400 + "length(id)" + ")" * 400 + " > 0",
        "id IN (SELECT * FROM " + "(SELECT * FROM " * 400 + "t" + ")" * 400 + ")",
    ],
)
def test_cli_refuses_a_deeply_nested_where_without_a_traceback(chat: str, where: str) -> None:
    """Issue 44, point 20: a condition nested a few hundred levels deep ended the CLI in
    an uncaught RecursionError (reading DuckDB's parse tree back), and so did `podium sql`."""
    refused(podium("show", chat, "--where", where, "--json"), "is nested too deeply")
    refused(podium("delete-rows", chat, "--where", where, "-m", "x"), "is nested too deeply")
    assert page(chat).total == 10
    query = f"SELECT count(*) FROM {chat} WHERE " + where.replace(" t)", f" {chat})")
    refused(podium("sql", query), "The query is nested too deeply")


def test_a_where_nested_a_few_levels_still_works(chat: str) -> None:
    where = "NOT " * 40 + "source = 'a'"  # an even count: source = 'a'
    assert ids_of(page(chat, where=where, limit=100).rows) == ["r1", "r3", "r5", "r7", "r9"]

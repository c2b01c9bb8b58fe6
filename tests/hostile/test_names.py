"""I4: one naming rule for namespaces and tables, wherever a name enters."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_helpers import podium, refused, tables

from podium.errors import InvalidInput
from podium.store.catalog.catalog import parse_name

BAD_NAMES = ["ns/evil.t", "x;DROP", "ns.x;DROP TABLE t", "a.b.c", "../up.t", "ns.t-1", "9ns.t"]


@pytest.mark.parametrize("name", [*BAD_NAMES, "ns." + "t" * 300, "", "ns."])
def test_parse_name_refuses_names_outside_the_rule(name: str) -> None:
    with pytest.raises(InvalidInput, match="is not allowed: a name is NAMESPACE.TABLE"):
        parse_name(name)


def test_good_names_pass() -> None:
    assert parse_name("demo.chat_v2") == ("demo", "chat_v2")
    assert parse_name("_ns.T__annotations") == ("_ns", "T__annotations")


@pytest.mark.parametrize("name", ["ns/evil.t", "x;DROP", "ns." + "t" * 300])
def test_import_refuses_bad_table_names_and_creates_nothing(
    podium_home: Path, chat_jsonl: Path, name: str
) -> None:
    message = refused(podium("import", str(chat_jsonl), "--table", name), "is not allowed")
    assert len(message) < 600  # a 300-character name is not echoed whole
    assert tables() == []
    warehouse = podium_home / "warehouse"
    assert not warehouse.exists() or not any(p.is_file() for p in warehouse.rglob("*"))


def test_run_card_with_a_bad_table_name_is_refused(
    podium_home: Path, chat_jsonl: Path, tmp_path: Path
) -> None:
    card = tmp_path / "card.md"
    card.write_text(f"---\nkind: import\npath: {chat_jsonl}\ntable: 'x;DROP'\n---\n")
    refused(podium("run", str(card)), "'x;DROP' is not allowed")
    assert tables() == []


def test_show_and_sql_refuse_bad_names(podium_home: Path) -> None:
    refused(podium("show", "ns/evil.t"), "is not allowed")

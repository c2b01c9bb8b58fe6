"""I1: run cards, `--set` values and form fields refuse YAML aliases and huge text,
before anything expands, without echoing the value."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_helpers import podium, refused, tables

from podium.errors import InvalidInput
from podium.jobs.card_yaml import MAX_YAML_BYTES, dump_yaml, load_yaml
from podium.jobs.cards import parse_card, read_card


def alias_bomb(levels: int = 9) -> str:
    """The YAML "billion laughs": 9 levels of 9 aliases are 9**9 strings expanded."""
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for n in range(1, levels):
        lines.append(f"l{n}: &l{n} [" + ",".join([f"*l{n - 1}"] * 9) + "]")
    return "\n".join(lines)


def bomb_card() -> str:
    bomb = alias_bomb()
    return f"---\nkind: import\ntable: ns.bomb\n{bomb}\npath: *l8\n---\n"


def test_alias_bomb_card_is_refused_by_podium_run(podium_home: Path, tmp_path: Path) -> None:
    card = tmp_path / "bomb.md"
    card.write_text(bomb_card())
    proc = podium("run", str(card), timeout=120)
    message = refused(
        proc, "bomb.md", "line 5, column 10", "YAML alias", "Write the value out in full"
    )
    assert "lol" not in message and len(message) < 400
    assert tables() == []


def test_alias_bomb_in_set_option_is_refused(podium_home: Path) -> None:
    flow = "{" + alias_bomb().replace("\n", ", ") + "}"  # `{l0: &l0 [...], l1: [*l0, ...]}`
    proc = podium("start", "import", "--set", f"metadata={flow}")
    message = refused(proc, "--set metadata", "YAML alias")
    assert "lol" not in message


def test_parse_card_refuses_any_alias_naming_the_line() -> None:
    text = "---\nkind: import\npath: &p data.jsonl\ntable: *p\n---\n"
    with pytest.raises(InvalidInput, match=r"line 4, column 8 uses a YAML alias"):
        parse_card(text)


def test_huge_card_file_is_refused_before_reading(tmp_path: Path) -> None:
    card = tmp_path / "huge.md"
    card.write_text("---\nkind: import\n---\n" + "x" * (MAX_YAML_BYTES + 1))
    with pytest.raises(InvalidInput, match=r"huge.md is 1,048,5\d\d bytes; a run card is at most"):
        read_card(card)


def test_card_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    card = tmp_path / "latin1.md"
    card.write_bytes(b"---\nkind: import\npath: caf\xe9.jsonl\n---\n")
    with pytest.raises(InvalidInput, match="latin1.md is not UTF-8 text"):
        read_card(card)


def test_deeply_nested_yaml_is_refused_not_a_recursion_crash() -> None:
    with pytest.raises(InvalidInput, match="nested too deeply"):
        load_yaml("[" * 5000 + "]" * 5000, "card")


def test_cards_podium_writes_have_no_aliases_even_for_shared_values() -> None:
    shared = {"a": 1}
    text = dump_yaml({"x": shared, "y": shared})
    assert "&" not in text and load_yaml(text, "card") == {"x": {"a": 1}, "y": {"a": 1}}

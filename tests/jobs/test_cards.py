"""Run cards: parsing, validation errors naming each field, pinning inputs."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pyarrow as pa
import pytest
import yaml
from click.testing import CliRunner

from podium.cli import app
from podium.errors import InvalidInput, NotFound
from podium.jobs.cards import (
    card_template,
    parse_card,
    pin_inputs,
    read_card,
    render_card,
    write_card,
)
from podium.store.catalog.catalog import load_table
from podium.store.read.refs import TableRef
from podium.store.write.write import write_table


def test_card_round_trips_config_and_notes(jobs_home: Path) -> None:
    card = parse_card("---\nkind: test-steps\nsteps: 7\nmode: slow\n---\nWhy: a check.\n")
    assert card.kind == "test-steps"
    assert (card.config.steps, card.config.mode, card.notes) == (7, "slow", "Why: a check.")
    again = parse_card(card.text())
    assert again.config == card.config and again.notes == card.notes


def test_write_and_read_card(jobs_home: Path, tmp_path: Path) -> None:
    config = parse_card("---\nkind: test-steps\n---\n").config
    path = write_card("test-steps", config, tmp_path / "cards" / "a.md", notes="hello")
    assert path.read_text().startswith("---\nkind: test-steps\n")
    assert read_card(path).notes == "hello"


def test_invalid_card_names_every_bad_field(jobs_home: Path) -> None:
    text = "---\nkind: test-steps\nsteps: many\nsleep: -1\ncolour: red\n---\n"
    with pytest.raises(InvalidInput) as err:
        parse_card(text, source="card.md")
    message = str(err.value)
    assert "Invalid 'test-steps' settings:" in message
    assert "colour: unknown setting" in message
    assert "steps (--steps): must be a whole number (got 'many')" in message
    assert "sleep (--sleep): must be >= 0 (got -1)" in message


def test_missing_required_field_says_what_it_is(jobs_home: Path) -> None:
    with pytest.raises(InvalidInput) as err:
        parse_card("---\nkind: import\npath: x.jsonl\n---\n")
    assert "out (--out): required, not given (Target table as NAMESPACE.TABLE)" in str(err.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("kind: test-steps\n", "has no YAML front matter"),
        ("---\nkind: [unclosed\n---\n", "not valid YAML"),
        ("---\n- a\n- b\n---\n", "must be a mapping"),
        ("---\nsteps: 2\n---\n", "needs `kind: NAME`"),
        ("---\nkind: nope\n---\n", "Unknown job kind 'nope'"),
    ],
)
def test_malformed_cards(jobs_home: Path, text: str, expected: str) -> None:
    with pytest.raises(InvalidInput, match=expected):
        parse_card(text)


def test_missing_card_file(jobs_home: Path, tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="No run card"):
        read_card(tmp_path / "absent.md")


def test_pin_inputs_uses_current_snapshot_and_checks_given_ones(jobs_home: Path) -> None:
    write_table("ns.src", pa.table({"x": [1]}))
    write_table("ns.src", pa.table({"x": [2]}), mode="append")
    current = load_table("ns.src").current_snapshot().snapshot_id
    config = parse_card("---\nkind: test-steps\nsource: {name: ns.src}\n---\n").config
    pinned = pin_inputs(config)
    assert pinned.source == TableRef(name="ns.src", snapshot_id=current)
    assert config.source.snapshot_id is None  # the original is not changed
    assert f"snapshot_id: {current}" in render_card("test-steps", pinned)

    with pytest.raises(NotFound, match="has no snapshot 42"):
        pin_inputs(config.model_copy(update={"source": TableRef(name="ns.src", snapshot_id=42)}))
    with pytest.raises(NotFound, match="No table named ns.absent"):
        pin_inputs(config.model_copy(update={"source": TableRef(name="ns.absent")}))


def test_template_lists_every_field_with_help_and_defaults(jobs_home: Path) -> None:
    text = card_template("test-steps")
    assert "# Seconds per unit.\nsleep: 0.0\n" in text
    assert parse_card(text).config == parse_card("---\nkind: test-steps\n---\n").config

    with pytest.raises(InvalidInput) as err:
        parse_card(card_template("import"))
    assert "path (--path): required, left empty (JSONL, Parquet file" in str(err.value)
    assert "out (--out): required, left empty (Target table" in str(err.value)


def test_template_command_writes_a_card(jobs_home: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["jobs", "template", "test-steps", "--out", str(tmp_path / "c.md")]
    )
    assert result.exit_code == 0, result.output
    assert read_card(tmp_path / "c.md").config.steps == 3


def test_every_kinds_template_renders_with_its_defaults() -> None:
    """grpo's default rewards are pydantic models: its template crashed in the YAML dumper."""
    import yaml

    from podium.jobs.kinds import KINDS

    for kind in KINDS:
        text = card_template(kind)
        front = yaml.safe_load(text.split("---")[1])
        assert front["kind"] == kind
    grpo = yaml.safe_load(card_template("grpo").split("---")[1])
    assert grpo["rewards"] == [{"rule": "length:72", "weight": 1.0}]


FNS, CHAT = {"name": "ns.fns"}, {"name": "ns.chat"}
OLD_NAMES = [  # kind, the other settings a card needs, an old name, its value, the new name
    ("generate", {"out": "ns.o"}, "input", CHAT, "table"),
    ("compare", {"out": "ns.o", "models": ["a", "b"]}, "input", CHAT, "table"),
    ("export", {"path": "x.jsonl"}, "input", CHAT, "table"),
    ("code-exec-build", {"out": "ns.o"}, "functions", FNS, "table"),
    ("code-exec-build", {"out": "ns.o", "table": FNS}, "sandbox_nodes", 2, "replicas"),
    ("validate", {"table": CHAT, "rules": ["json"]}, "nodes", 2, "replicas"),
    ("import", {"path": "x.jsonl"}, "table", "ns.chat", "out"),
]


def _card(kind: str, front: dict) -> str:
    plain = json.loads(json.dumps(front))  # a value given twice would be a YAML anchor
    return f"---\nkind: {kind}\n" + yaml.safe_dump(plain) + "---\n"


@pytest.mark.parametrize(("kind", "others", "old", "value", "new"), OLD_NAMES)
def test_a_card_with_an_old_setting_name_still_parses_and_names_the_new_one(
    jobs_home: Path,
    caplog: pytest.LogCaptureFixture,
    kind: str,
    others: dict,
    old: str,
    value: object,
    new: str,
) -> None:
    with caplog.at_level(logging.WARNING, logger="podium.jobs"):
        config = parse_card(_card(kind, {**others, old: value})).config
    got = getattr(config, new)
    assert (got.model_dump(exclude_none=True) if hasattr(got, "model_dump") else got) == value
    assert f"setting {old!r} is now called {new!r}" in caplog.text
    rendered = render_card(kind, config)  # a card written now uses the new name
    assert f"\n{new}:" in rendered and f"\n{old}:" not in rendered

    with pytest.raises(InvalidInput, match=f"{old}: the old name of {new}, which is given too"):
        parse_card(_card(kind, {**others, old: value, new: value}))

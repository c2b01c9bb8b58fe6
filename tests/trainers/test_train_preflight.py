"""The sft/grpo preflight, run once at submit on every path (command, card, Train page
form): what it refuses needs the registry, the table or this host, never a model load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from train_fixtures import chat_rows

from podium.cli import app
from podium.errors import InvalidInput
from podium.jobs.logbook import submit_config
from podium.jobs.queue import get_job, list_jobs
from podium.store.schema import SFT_SCHEMA
from podium.store.write.write import write_table

SCHEMA = {"type": "object", "required": ["name"]}


def grpo(model: str, table: str, out: str, *rest: str) -> list[str]:
    return ["train", "grpo", "--model", model, "--table", table, "--out", out, *rest]


def test_a_reward_reads_the_training_tables_properties_at_submit(
    stub_base: str, tmp_path: Path
) -> None:
    """`validate:json-schema` uses the schema stored on the table; the preflight checked
    the rewards without the table, so it refused this reward on every table."""
    write_table(
        "demo.people",
        chat_rows([("q", '{"name": "a"}')]),
        schema=SFT_SCHEMA,
        properties={"podium.json_schema": json.dumps(SCHEMA)},
    )
    card = tmp_path / "run.md"
    args = grpo(stub_base, "demo.people", "g1", "--reward", "validate:json-schema")
    result = CliRunner().invoke(app, [*args, "--card", str(card)])
    assert result.exit_code == 0, result.exception
    front = yaml.safe_load(card.read_text().split("---")[1])
    assert front["rewards"] == [{"rule": "validate:json-schema", "weight": 1.0}]

    # The same reward on a table with no schema is refused at the command.
    result = CliRunner().invoke(
        app, grpo(stub_base, "demo.chat", "g1", "--reward", "validate:json-schema", "--queue")
    )
    assert isinstance(result.exception, InvalidInput)
    assert "store one on table demo.chat as property podium.json_schema" in str(result.exception)
    assert list_jobs() == []


def test_the_train_form_is_checked_at_submit(stub_base: str) -> None:
    """What the Train page used to check beside the preflight (a free --out name,
    rewards against the table) is the preflight's, so the form's submit checks once."""
    values = {"model": stub_base, "table": {"name": "demo.chat"}, "out": stub_base}
    with pytest.raises(InvalidInput, match="already registered; choose another --out"):
        submit_config("sft", values)
    job_id = submit_config("sft", {**values, "out": "sft-1"})
    assert json.loads(get_job(job_id)["config"])["model"] == stub_base

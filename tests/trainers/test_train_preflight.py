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


def test_exact_match_that_no_answer_fits_is_refused_at_submit(tiny_base: str) -> None:
    """Before: GRPO's default (exact_match with 24-token completions) queued, ran green
    and registered a checkpoint that could not have learned: no 24-token completion
    equals a 40-token answer (issue 45). The form now refuses it and says why; the
    default rewards (a length penalty sized to the budget) queue."""
    long_answer = " ".join(f"word{i}" for i in range(40))
    write_table(
        "demo.long", chat_rows([(f"q{i}", long_answer) for i in range(4)]), schema=SFT_SCHEMA
    )
    values = {"model": tiny_base, "table": {"name": "demo.long"}, "out": "g-exact"}
    with pytest.raises(InvalidInput) as refused:
        submit_config("grpo", {**values, "rewards": [{"rule": "exact_match"}]})
    said = str(refused.value)
    assert "Reward exact_match can never be earned on demo.long" in said
    assert (
        "longer than max_completion_length (24)" in said and "Raise max_completion_length" in said
    )
    assert list_jobs() == []
    job_id = submit_config("grpo", values)  # the default rewards
    rewards = json.loads(get_job(job_id)["config"])["rewards"]
    assert rewards == [{"rule": "length:72", "weight": 1.0}]

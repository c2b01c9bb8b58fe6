"""`podium train sft|grpo --help` shows the defaults a run with no options really gets.

A card that names no preset is filled from `cpu-smoke` before validation, so the model
fields' own defaults (learning_rate 5e-4, device auto) never apply; help must show the
preset's values, each checked here against a validated card with nothing set.
"""

from __future__ import annotations

import json
import sys

import cli_fork
import click
import pytest

from podium.cli import module_commands
from podium.commands.options import _shown
from podium.jobs.kinds import get_kind

REQUIRED = {"model": "base", "table": {"name": "ns.train"}, "out": "ckpt"}


def _help_of(command: click.Command) -> dict[str, str]:
    """Option name -> its help text, for every option of `command`."""
    return {
        opt: param.help or ""
        for param in command.params
        if isinstance(param, click.Option)
        for opt in param.opts
    }


@pytest.mark.parametrize("kind", ["sft", "grpo"])
def test_every_default_in_help_is_the_one_a_bare_run_gets(kind: str) -> None:
    group = module_commands("podium.commands.train")["train"]
    assert isinstance(group, click.Group)
    command = group.commands[kind]
    shown = _help_of(command)
    config = get_kind(kind).config_model().model_validate(REQUIRED)
    checked = 0
    for field in get_kind(kind).fields():
        if field.required or field.path.startswith("table."):
            continue
        value = getattr(config, field.path)
        if field.kind == "bool":
            expected = f"[default: {'on' if value else 'off'}"
        elif value in (None, [], {}, ()):
            assert "default:" not in shown[field.option], field.option
            continue
        else:
            expected = f"default: {_shown(value)}"
        assert expected in shown[field.option], (field.option, shown[field.option])
        checked += 1
    assert checked > 10


def test_grpo_help_names_the_preset_learning_rate_and_device() -> None:
    proc = cli_fork.run(
        [sys.executable, "-m", "podium.cli", "train", "grpo", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    assert "[default: 1e-05 from preset cpu-smoke; > 0]" in text  # --lr
    assert "[default: cpu from preset cpu-smoke]" in text  # --device
    assert "0.0005" not in text and "default: auto" not in text


def test_job_kinds_listing_shows_the_preset_defaults_too() -> None:
    proc = cli_fork.run(
        [sys.executable, "-m", "podium.cli", "jobs", "kinds", "grpo", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    (grpo,) = json.loads(proc.stdout)
    default = {f["name"]: f["default"] for f in grpo["fields"]}
    assert (default["learning_rate"], default["device"], default["max_steps"]) == (1e-5, "cpu", 2)

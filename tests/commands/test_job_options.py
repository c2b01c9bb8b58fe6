"""A job kind's model is the one source of its CLI options, form, card schema and errors.

The planted kind below exists only in this test: its new field must reach
`podium start KIND --help`, the app form and `podium jobs kinds KIND --schema` with no
other edit, and a bad value must read the same from options, a card and the form.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import cli_fork
import pytest
from streamlit.testing.v1 import AppTest

from podium.config import reset_settings

REPO = Path(__file__).resolve().parents[2]
PLANTED = "planted_kind_for_options"
PLANTED_ERROR = "planted_ceiling (--planted-ceiling): must be >= 2 (got 1)"
N_ERROR = "n (--n): must be >= 1 (got 0)"

PLANTED_MODULE = textwrap.dedent(
    """
    from pydantic import BaseModel, Field

    from podium.jobs.kinds import JobKind, register
    from podium.reporting import JobOutputs


    class PlantedConfig(BaseModel):
        steps: int = Field(3, ge=1, description="Units of work.")
        planted_ceiling: int = Field(
            5, ge=2, description="A field that only this test's model has."
        )


    def run(config, reporter):
        return JobOutputs(summary={"ceiling": config.planted_ceiling})


    register(JobKind("test-planted", f"{__name__}:PlantedConfig", f"{__name__}:run", "Planted."))
    """
)


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """A Podium home and a plugin module defining the planted kind, for CLI and app."""
    plugin_dir = tmp_path / "plugins"
    plugin_dir.mkdir()
    (plugin_dir / f"{PLANTED}.py").write_text(PLANTED_MODULE)
    monkeypatch.syspath_prepend(str(plugin_dir))
    monkeypatch.setenv("PODIUM_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PODIUM_JOB_PLUGINS", PLANTED)
    reset_settings()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(plugin_dir), str(REPO)]),
    }
    yield env
    reset_settings()


def podium(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return cli_fork.run(
        [sys.executable, "-m", "podium.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )


def cli_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    return result.stderr.strip().removeprefix("error: ")


def form_error(kind: str, field: str, value: int) -> str:
    """Fill `field` in the generic job form for `kind`, submit, return the error shown."""

    def page(kind: str) -> None:
        from podium.app.forms import queue_form

        queue_form(kind, "t", tables=["demo.chat"])  # validation comes before any lookup

    at = AppTest.from_function(page, args=(kind,), default_timeout=60).run()
    at.number_input(key=f"t.{field}").set_value(value)
    if kind == "generate":  # required fields, so that only `n` is wrong
        at.text_input(key="t.out").set_value("gen.out")
    at.button[0].click().run()
    assert len(at.error) == 1, [e.value for e in at.error]
    return unescape(str(at.error[0].value))  # the form's Markdown, read as text


def test_a_field_added_in_a_test_reaches_help_form_and_schema(
    planted: dict[str, str], tmp_path: Path
) -> None:
    help_text = podium(planted, "start", "test-planted", "--help").stdout
    assert "--planted-ceiling INTEGER" in help_text
    assert "A field that only this test's model has." in help_text and ">= 2" in help_text

    schema = json.loads(podium(planted, "jobs", "kinds", "test-planted", "--schema").stdout)
    prop = schema["properties"]["planted_ceiling"]
    assert prop["minimum"] == 2 and prop["default"] == 5

    kinds = json.loads(podium(planted, "jobs", "kinds", "test-planted", "--json").stdout)
    assert {"name": "planted_ceiling", "option": "--planted-ceiling"}.items() <= (
        kinds[0]["fields"][1].items()
    )
    table = podium(planted, "jobs", "kinds", "test-planted", "--markdown").stdout
    assert "| `planted_ceiling` | `--planted-ceiling` | int | `5` |" in table

    from_options = cli_error(podium(planted, "start", "test-planted", "--planted-ceiling", "1"))
    card = tmp_path / "planted.md"
    card.write_text("---\nkind: test-planted\nplanted_ceiling: 1\n---\n")
    from_card = cli_error(podium(planted, "run", str(card)))
    from_set = cli_error(podium(planted, "start", "test-planted", "--set", "planted_ceiling=1"))
    from_form = form_error("test-planted", "planted_ceiling", 1)
    assert PLANTED_ERROR in from_options
    assert from_options == from_card == from_set == from_form


def test_generate_n_zero_reads_the_same_from_options_card_and_form(
    planted: dict[str, str], tmp_path: Path
) -> None:
    args = ("generate", "--table", "demo.chat", "--out", "gen.out", "--n", "0")
    from_options = cli_error(podium(planted, *args))
    card = tmp_path / "gen.md"
    card.write_text("---\nkind: generate\ninput: {name: demo.chat}\nout: gen.out\nn: 0\n---\n")
    from_card = cli_error(podium(planted, "run", str(card)))
    from_queue = cli_error(podium(planted, "submit", str(card)))
    from_form = form_error("generate", "n", 0)
    assert from_options == f"Invalid 'generate' settings:\n  {N_ERROR}"
    assert from_options == from_card == from_queue == from_form


def test_jobs_kinds_json_lists_every_kind_with_json_defaults(planted: dict[str, str]) -> None:
    result = podium(planted, "jobs", "kinds", "--json")
    assert result.returncode == 0, result.stderr  # RewardSpec defaults crashed it
    kinds = {k["name"]: k for k in json.loads(result.stdout)}
    rewards = next(f for f in kinds["grpo"]["fields"] if f["name"] == "rewards")
    assert rewards["default"] == [{"rule": "length:72", "weight": 1.0}]
    assert {"generate", "sft", "validate", "compare", "test-planted"} <= set(kinds)


def test_set_and_options_build_the_card(planted: dict[str, str], tmp_path: Path) -> None:
    card = tmp_path / "c.md"
    result = podium(
        planted,
        "start",
        "test-planted",
        "--steps",
        "4",
        "--set",
        "planted_ceiling=7",
        "--card",
        str(card),
    )
    assert result.returncode == 0, result.stderr
    assert "steps: 4\nplanted_ceiling: 7\n" in card.read_text()

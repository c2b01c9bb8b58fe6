"""Names Podium keeps for its own tables (a table's `__annotations` and `__validation`,
`compare.votes`, `vibes.prompts`) are refused as the output of every command and app
action that creates or writes a table, by one check (issue 44, point 13): a reviewer's
`vibes evalset --out compare.votes` broke every vote, and an operator's
`import --out demo.chat__annotations` broke Browse of demo.chat for everyone."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import cli_fork
import pytest
from pydantic import TypeAdapter
from streamlit.testing.v1 import AppTest

from generators.code_exec.config import CodeExecConfig
from generators.vibes import build_eval_set, submit_vibe
from podium.compare.judge import VERDICTS_TABLE
from podium.compare.judge_scores import SCORES_TABLE
from podium.compare.votes import VOTES_TABLE
from podium.config import reset_settings
from podium.errors import InvalidInput
from podium.identity import User
from podium.jobs.kinds import KINDS
from podium.models import add_endpoint
from podium.review.annotations import SUFFIX as ANNOTATIONS_SUFFIX
from podium.store.catalog.catalog import list_tables
from podium.store.catalog.table_name import RESERVED_NAMES, check_not_reserved, reserved_for
from podium.store.state.users import grant
from podium.store.write.ingest import import_file
from podium.validate.job import ValidateConfig
from podium.validate.report import report_name
from trainers.config import GrpoConfig

ADMIN = User(name="boss@example.org", role="admin", source="config")
REVIEWER = "rev@example.org"
RESERVED = "is a name Podium keeps for"
MAIN = str(Path(__file__).resolve().parents[2] / "podium" / "app" / "main.py")


@pytest.fixture
def home(podium_home: Path, chat_source: Path) -> Iterator[Path]:
    """A home with demo.chat (3 rows) and one vibe-check submission tagged json."""
    import_file(chat_source, "demo.chat")
    submit_vibe("a prompt", tags=["json"])
    yield podium_home


def podium(*args: str, user: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **({"PODIUM_USER": user} if user else {})}
    return cli_fork.run(
        [sys.executable, "-m", "podium.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def refused(proc: subprocess.CompletedProcess[str], name: str) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    message = " ".join(proc.stderr.split())
    assert f"{name!r} {RESERVED}" in message, message


# The one list, and the names Podium itself derives from it.


def test_the_names_podium_writes_its_own_tables_under_are_reserved() -> None:
    assert reserved_for(VOTES_TABLE) and reserved_for("vibes.prompts")
    assert reserved_for(VERDICTS_TABLE)  # an eval set written there broke every judge's view
    assert reserved_for(SCORES_TABLE)  # and there, every rubric judge's scores
    assert reserved_for("demo.chat" + ANNOTATIONS_SUFFIX)
    assert reserved_for(report_name("demo.chat"))
    assert reserved_for("Compare.VOTES") and reserved_for("demo.Chat__Annotations")
    for fine in ("demo.chat", "compare.votes_v2", "vibes.prompts_old", "demo.annotations"):
        assert reserved_for(fine) is None, fine
    assert all(why for why in RESERVED_NAMES.values())


def test_a_bare_name_is_taken_in_the_default_namespace(
    podium_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PODIUM_DEFAULT_NAMESPACE", "compare")
    reset_settings()
    with pytest.raises(InvalidInput, match=RESERVED):
        check_not_reserved("votes")


# Every command that writes a table.


def test_a_reviewers_eval_set_may_not_be_written_as_the_votes(home: Path) -> None:
    grant(ADMIN, REVIEWER, "reviewer")
    before = list_tables()
    refused(podium("vibes", "evalset", "--tag", "json", "--out", "compare.votes", user=REVIEWER),
            "compare.votes")  # fmt: skip
    assert list_tables() == before
    with pytest.raises(InvalidInput, match=RESERVED):
        build_eval_set("vibes.prompts", tags=["json"])
    with pytest.raises(InvalidInput, match=RESERVED):
        build_eval_set("evals.x__Validation", tags=["json"])


@pytest.mark.parametrize("mode", ["create", "append"])
def test_an_import_may_not_write_a_tables_annotations_or_the_vibes(
    home: Path, chat_source: Path, mode: str
) -> None:
    before = list_tables()
    for out in ("demo.chat__annotations", "vibes.prompts"):
        refused(podium("import", str(chat_source), "--out", out, "--mode", mode), out)
    assert list_tables() == before


def test_jobs_that_write_tables_refuse_reserved_outputs(home: Path, tmp_path: Path) -> None:
    for name in ("ep", "ep2"):
        add_endpoint("http://127.0.0.1:9/v1", name, remote_model="m")
    card = tmp_path / "card.md"
    refused(
        podium(
            "generate", "--table", "demo.chat", "--out", "gen.x__annotations", "--card", str(card)
        ),
        "gen.x__annotations",
    )
    refused(
        podium("compare", "--models", "ep,ep2", "--table", "demo.chat", "--out", "compare.votes"),
        "compare.votes",
    )
    refused(
        podium("build", "code-exec", "--table", "demo.chat", "--out", "vibes.prompts"),
        "vibes.prompts",
    )
    refused(
        podium("validate", "demo.chat", "--rule", "json", "--report", "demo.chat__annotations"),
        "demo.chat__annotations",
    )
    assert not card.exists()


def test_config_fields_naming_an_output_table_refuse_reserved_names() -> None:
    with pytest.raises(InvalidInput, match=RESERVED):
        CodeExecConfig(table={"name": "fx.all"}, out="cx.demo", sft_out="compare.votes")
    with pytest.raises(InvalidInput, match=RESERVED):
        GrpoConfig(
            model="base", table={"name": "demo.chat"}, out="g", rollouts="demo.c__annotations"
        )
    # A validation report may be named as reports are, for any table.
    assert ValidateConfig(
        table={"name": "demo.chat"}, rules=["json"], report="ns.other__validation"
    )


def test_the_app_refuses_an_eval_set_named_as_the_votes(home: Path) -> None:
    add_endpoint("http://127.0.0.1:9/v1", "ep", remote_model="m")  # the page needs a model
    at = AppTest.from_file(MAIN, default_timeout=60)
    at.run()
    at.switch_page("views/vibes/view.py")
    at.run()
    assert not at.exception, at.exception
    at.multiselect(key="vibes.filter_tags").set_value(["json"]).run()
    at.text_input(key="vibes.evalset_out").set_value("compare.votes").run()
    build = at.button(key="vibes.build")
    build.click().run()
    assert not at.exception, at.exception
    errors = " ".join(" ".join(str(e.value).split()) for e in at.error)
    assert RESERVED in errors, errors
    assert VOTES_TABLE not in list_tables()


# A guard for new job kinds and fields.

INPUT_TABLE_FIELDS = {  # tables it reads
    ("maintain", "table"),
    ("judge", "comparison"),
    ("topic-titles", "table"),
}


def test_every_job_field_that_names_a_table_to_write_refuses_reserved_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every text field of a job's config whose help speaks of a table (bar the inputs
    above) is an output name, and is held to the reserved names when the config is built.
    The kinds tests register count too (they are in KINDS once another test of the
    worker imported them, as in CI), so the guard holds whatever ran before it."""
    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "jobs"))
    importlib.import_module("kinds_for_tests")  # registers the test kinds
    checked = []
    for kind in KINDS.values():
        for name, field in kind.config_model().model_fields.items():
            typed = field.annotation
            if "str" not in str(typed) or "table" not in (field.description or "").lower():
                continue
            if (kind.name, name) in INPUT_TABLE_FIELDS:
                continue
            adapter = TypeAdapter(Annotated[typed, *field.metadata] if field.metadata else typed)
            with pytest.raises(InvalidInput, match=RESERVED):
                adapter.validate_python(VOTES_TABLE)
                pytest.fail(f"{kind.name}.{name} took {VOTES_TABLE} as an output table")
            checked.append(f"{kind.name}.{name}")
    assert {"import.out", "generate.out", "compare.out", "validate.report"} <= set(checked)

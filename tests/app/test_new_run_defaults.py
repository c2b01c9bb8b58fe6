"""A new comparison or code-exec build starts from defaults that answer within minutes
on a 2-core CPU: the newest checkpoint against its parent, on a chat table (not the
newest table of any kind), 8 prompts x 256 tokens (room for a whole JSON answer), checked
with `json` where the table stores a JSON schema; what the person last looked at wins; a
build of 20 functions, not all."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from streamlit.testing.v1 import AppTest

from podium.app.table_choices import TableChoice
from podium.app.views.compare import model as cm
from podium.models.registry import ModelInfo, register_model
from podium.store.catalog import kinds
from podium.store.schema import SFT_ARROW_SCHEMA
from podium.store.write.write import write_table

MAIN = str(Path(__file__).resolve().parents[2] / "podium" / "app" / "main.py")


def _info(name: str, kind: str, at: str, parent: str | None = None, default: bool = False):
    return ModelInfo(name=name, kind=kind, parent=parent, created_at=at, is_default=default)


def test_the_newest_checkpoint_and_its_parent_are_preselected() -> None:
    base = _info("smollm2", "base", "2026-11-27T10:00", default=True)
    sft = _info("sft-1", "trained", "2026-11-27T11:00", parent="smollm2")
    grpo = _info("grpo-1", "trained", "2026-11-27T12:00", parent="sft-1")
    other = _info("other-base", "base", "2026-11-27T13:00")
    assert cm.default_models([base, sft, grpo, other]) == ["grpo-1", "sft-1"]
    by_alias = _info("sft-2", "trained", "2026-11-27T14:00", parent="base")
    assert cm.default_models([base, sft, by_alias]) == ["sft-2", "smollm2"]
    assert cm.default_models([base, other]) == ["other-base", "smollm2"]
    assert cm.default_models([base]) == []


def test_the_prompt_set_defaults_to_the_newest_chat_table() -> None:
    choices = [
        TableChoice("gen.samples", kinds.SAMPLES, updated_ms=30),
        TableChoice("cx.rows", kinds.CODE_EXEC_ROWS, updated_ms=40),
        TableChoice("demo.functions", kinds.FUNCTIONS, updated_ms=50),
        TableChoice("imported.raw", kinds.UNKNOWN, updated_ms=25),
        TableChoice("demo.chat", kinds.SFT, updated_ms=20),
        TableChoice("demo.json_sft", kinds.SFT, updated_ms=10),
    ]
    assert cm.default_prompt_table(choices) == "demo.chat"
    assert cm.default_prompt_table(choices[:4]) == "imported.raw"  # a dataset all the same
    assert cm.default_prompt_table(choices[:3]) is None


def test_the_compare_form_opens_on_those_defaults(podium_home: Path, tmp_path: Path) -> None:
    for name in ("base-ckpt", "sft-ckpt"):
        (tmp_path / name).mkdir()
    register_model("smollm2", kind="base", path=str(tmp_path / "base-ckpt"), is_default=True)
    register_model("sft-1", kind="trained", path=str(tmp_path / "sft-ckpt"), parent="smollm2")
    chat = [{"id": f"q{i}", "messages": [{"role": "user", "content": f"Hi {i}"}]} for i in range(9)]
    write_table("demo.chat", pa.Table.from_pylist(chat, schema=SFT_ARROW_SCHEMA))
    write_table(  # newer, but generated samples: not a prompt set to start from
        "gen.later", pa.Table.from_pylist(chat, schema=SFT_ARROW_SCHEMA),
        properties={"podium.kind": kinds.SAMPLES},
    )  # fmt: skip
    at = AppTest.from_file(MAIN, default_timeout=60)
    at.run()
    at.switch_page("views/compare/view.py")
    at.run()
    assert not at.exception, at.exception
    assert at.radio(key="compare.mode").value == "New comparison"
    assert at.multiselect(key="compare.new.models").value == ["sft-1", "smollm2"]
    assert at.selectbox(key="compare.new.table").value == "demo.chat"
    assert at.text_input(key="compare.new.job.limit").value == str(cm.NEW_LIMIT) == "8"
    assert at.number_input(key="compare.new.job.max_tokens").value == cm.NEW_MAX_TOKENS == 256


def test_partial_checkpoints_are_never_preselected() -> None:
    base = _info("smollm2", "base", "2026-11-27T10:00", default=True)
    sft = _info("sft-1", "trained", "2026-11-27T11:00", parent="smollm2")
    cut = ModelInfo(
        name="grpo-1__rerun_1-step-2", kind="trained", parent="smollm2",
        created_at="2026-11-27T12:00", lineage={"partial": "cancelled at step 2 of 20"},
    )  # fmt: skip
    assert cm.default_models([base, sft, cut]) == ["sft-1", "smollm2"]
    assert cm.default_models([base, sft, cut], last=cut.name) == ["sft-1", "smollm2"]
    assert cm.default_models([base, sft, cut], last="smollm2") == ["smollm2", "sft-1"]


def test_the_compare_form_starts_on_what_was_last_looked_at(
    podium_home: Path, tmp_path: Path
) -> None:
    """Before: it preselected the newest checkpoint and the newest table, whatever the
    person had just been looking at (issue 45)."""
    for name in ("base-ckpt", "sft-1", "sft-2"):
        (tmp_path / name).mkdir()
    register_model("smollm2", kind="base", path=str(tmp_path / "base-ckpt"), is_default=True)
    register_model("sft-1", kind="trained", path=str(tmp_path / "sft-1"), parent="smollm2")
    register_model("sft-2", kind="trained", path=str(tmp_path / "sft-2"), parent="smollm2")
    chat = [{"id": f"q{i}", "messages": [{"role": "user", "content": f"Hi {i}"}]} for i in range(9)]
    write_table("t.looked_at", pa.Table.from_pylist(chat, schema=SFT_ARROW_SCHEMA))
    write_table("t.newest", pa.Table.from_pylist(chat, schema=SFT_ARROW_SCHEMA))
    at = AppTest.from_file(MAIN, default_timeout=60)
    at.run()
    at.switch_page("views/generate/view.py")
    at.run()
    at.selectbox(key="generate.model").set_value("sft-1").run()
    at.selectbox(key="generate.table").set_value("t.looked_at").run()
    assert not at.exception, at.exception
    at.switch_page("views/compare/view.py")
    at.run()
    assert not at.exception, at.exception
    assert at.multiselect(key="compare.new.models").value == ["sft-1", "smollm2"]
    assert at.selectbox(key="compare.new.table").value == "t.looked_at"


def test_a_build_from_the_page_starts_with_20_functions(podium_home: Path, tmp_path: Path) -> None:
    from generators.code_exec.demo_functions import load_demo_functions

    load_demo_functions()
    (tmp_path / "ckpt").mkdir()
    register_model("smollm2", kind="base", path=str(tmp_path / "ckpt"), is_default=True)
    at = AppTest.from_file(MAIN, default_timeout=120)
    at.run()
    at.switch_page("views/build/view.py")
    at.run()
    assert not at.exception, at.exception
    assert at.text_input(key="build.job.limit").value == "20"  # was empty: all 297

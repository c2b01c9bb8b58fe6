"""The Generate page (AppTest) and the Streamlit-free helpers behind it."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from queue_runner import run_queued
from streamlit.testing.v1 import AppTest

from podium.app.model_choices import model_choices
from podium.app.views.generate import model as gm
from podium.errors import InvalidInput
from podium.models import register_model
from podium.store.catalog.catalog import load_table, table_exists
from podium.store.read.read import read_arrow
from podium.store.schema import SFT_ARROW_SCHEMA
from podium.store.write.write import write_table

MAIN = str(Path(__file__).resolve().parents[2] / "podium" / "app" / "main.py")


def _open(**query: str) -> AppTest:
    at = AppTest.from_file(MAIN, default_timeout=120)
    at.run()
    at.switch_page("views/generate/view.py")
    at.query_params.update(query)
    at.run()
    assert not at.exception, at.exception
    return at


def test_helpers(podium_home, tmp_path):
    assert model_choices() == ([], 0)
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        register_model(name, kind="base", path=str(tmp_path / name), is_default=name == "b")
    assert model_choices() == (["a", "b"], 1)
    assert model_choices("a") == (["a", "b"], 0)
    assert gm.default_out_name("demo.json_sft", "smollm2-135m-instruct") == (
        "gen.json_sft_smollm2_135m_instruct"
    )
    assert gm.parse_schema_text("  ") is None
    with pytest.raises(InvalidInput, match="not valid JSON"):
        gm.parse_schema_text("{")
    with pytest.raises(InvalidInput, match="is invalid at"):
        gm.parse_schema_text('{"type": 5}')
    with pytest.raises(InvalidInput, match="invalid pattern"):  # checked as validation checks
        gm.parse_schema_text('{"type": "string", "pattern": "(unclosed"}')
    with pytest.raises(InvalidInput, match="must be an object"):
        gm.parse_schema_text("true")
    with pytest.raises(InvalidInput, match="max_tokens"):
        gm.build_config(table="t.a", snapshot_id=None, out="t.b", model="a", max_tokens=0)
    cfg = gm.build_config(
        table="t.a", snapshot_id=3, out="t.b", model="a", n=2, schema_text='{"type": "object"}'
    )
    assert (cfg.table.snapshot_id, cfg.n, cfg.json_schema) == (3, 2, {"type": "object"})


def test_page_without_models_offers_to_set_one_up(podium_home):
    at = _open()
    assert [b.label for b in at.button] == ["Set up the base model"]  # not a shell command


def test_the_cost_is_shown_before_queueing_with_a_default_limit() -> None:
    e = gm.estimate(600, gm.DEFAULT_LIMIT, gm.DEFAULT_MAX_TOKENS, 1, None)
    assert (e.prompts, e.tokens) == (8, 1_024)
    assert e.text.startswith("8 of 600 prompts × 1 sample × 128 max tokens = up to 1,024")
    assert "at 20 tok/s (assumed for a small model on CPU)" in e.text
    assert gm.estimate(3, None, 16, 2, 40.0).text.endswith(
        "about 2 s at 40 tok/s (this model's last run)."
    )
    assert gm.duration_text(160) == "3 min" and gm.duration_text(7800) == "2 h 10 min"
    run = {
        "kind": "generate", "status": "succeeded", "config": '{"model": "m"}',
        "outputs": {"summary": {"tokens_per_s": 91.5}},
    }  # fmt: skip
    assert gm.measured_rate("m", [run]) == 91.5
    assert gm.measured_rate("other", [run]) is None


def test_the_page_shows_the_estimate_and_human_labels(podium_home, tmp_path):
    rows = [
        {"id": f"q{i}", "messages": [{"role": "user", "content": f"Say {i}."}]} for i in range(80)
    ]
    write_table("t.prompts", pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA))
    (tmp_path / "m").mkdir()
    register_model("m", kind="base", path=str(tmp_path / "m"))
    at = _open(table="t.prompts")
    assert at.number_input(key="generate.limit").value == gm.DEFAULT_LIMIT
    assert any(i.value.startswith("8 of 80 prompts") for i in at.info), [i.value for i in at.info]
    at.number_input(key="generate.limit").set_value(0).run()
    assert any(i.value.startswith("80 of 80 prompts") for i in at.info)
    assert at.number_input(key="generate.max_tokens").label == "Max tokens"
    assert at.number_input(key="generate.job.retry_max_wait_s").label == "Retry max wait (s)"


def test_a_return_to_the_page_shows_the_job_queued_there(podium_home, tmp_path):
    """Issue 35: after leaving Generate (or a reload: a new session), the page no longer
    showed the job it had queued; it shows the newest one of this user's, until an hour
    after it finished."""
    import time
    from datetime import UTC, datetime, timedelta

    from generators.generate import GenerateConfig
    from podium.jobs.cards import Card
    from podium.jobs.queue import create_job, get_job
    from podium.store.read.refs import TableRef

    rows = [{"id": "q0", "messages": [{"role": "user", "content": "Say 0."}]}]
    write_table("t.prompts", pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA))
    (tmp_path / "m").mkdir()
    register_model("m", kind="base", path=str(tmp_path / "m"))
    config = GenerateConfig(model="m", table=TableRef(name="t.prompts"), out="t.samples")
    job_id = create_job(Card("generate", config))

    at = _open(table="t.prompts")  # a new session, as after a reload
    shown = " ".join(m.value for m in at.markdown)
    assert job_id in shown and "queued" in shown

    job = get_job(job_id)
    done = {**job, "status": "succeeded", "finished_at": datetime.now(UTC)}
    assert gm.recent_job([done], "generate", time.time()) == job_id
    old = {**done, "finished_at": datetime.now(UTC) - timedelta(hours=2)}
    assert gm.recent_job([old], "generate", time.time()) is None
    assert gm.recent_job([{**done, "kind": "compare"}], "generate", time.time()) is None


@pytest.mark.vllm
def test_generate_from_the_page(vllm_model, unique_table):
    rows = [
        {"id": f"q{i}", "messages": [{"role": "user", "content": f"Say {i}."}]} for i in range(3)
    ]
    write_table(unique_table, pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA))
    at = _open(table=unique_table)
    assert at.selectbox(key="generate.table").value == unique_table
    assert at.selectbox(key="generate.model").value == vllm_model
    out = unique_table + "_page"
    at.text_input(key="generate.job.out").set_value(out)
    at.number_input(key="generate.max_tokens").set_value(8)
    at.number_input(key="generate.n").set_value(2)
    at.button(key="FormSubmitter:generate.job-Queue job").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    run_queued()
    at.run(timeout=120)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Samples written"] == "6"
    assert float(metrics["Tokens/s"]) > 0
    assert table_exists(out) and len(read_arrow(out)[0]) == 6
    assert load_table(out).properties["podium.lineage.kind"] == "generate"
    assert any(out in m.value for m in at.markdown)

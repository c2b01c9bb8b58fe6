"""The Logbook page (AppTest) and the form builder behind its "new job" form."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pyarrow as pa
import pytest
from app_pages import shown
from pydantic import BaseModel, Field
from streamlit.testing.v1 import AppTest

from podium.app.forms import collect, field_specs
from podium.config import reset_settings
from podium.jobs.cards import parse_card
from podium.jobs.launch import run_foreground, submit
from podium.jobs.queue import get_job, list_jobs
from podium.store.catalog.catalog import load_table
from podium.store.read.refs import TableRef
from podium.store.write.write import write_table

MAIN = str(Path(__file__).resolve().parents[2] / "podium" / "app" / "main.py")
TEST_KINDS = Path(__file__).resolve().parents[1] / "jobs"


@pytest.fixture
def home(podium_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.syspath_prepend(str(TEST_KINDS))
    monkeypatch.setenv("PODIUM_JOB_PLUGINS", "kinds_for_tests")
    reset_settings()
    yield podium_home
    reset_settings()


def _logbook() -> AppTest:
    at = AppTest.from_file(MAIN, default_timeout=60)
    at.run()
    at.switch_page("views/logbook/view.py")
    at.run()
    assert not at.exception, at.exception
    return at


def _texts(at: AppTest) -> str:
    """What the page says: its Markdown as read (data in it is escaped), code as is."""
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [e.value for e in at.error] + [i.value for i in at.info]
    parts += [s.value for s in at.success]
    said = [shown(str(p)) for p in parts] + [str(c.value) for c in at.code]
    return "\n".join(said)


def test_empty_logbook_says_how_to_start(home: Path) -> None:
    assert "No jobs yet" in _texts(_logbook())


def test_finished_job_shows_card_links_log_and_metrics(home: Path) -> None:
    write_table("ns.src", pa.table({"x": [1]}))
    src = load_table("ns.src").current_snapshot().snapshot_id
    job = run_foreground(
        parse_card("---\nkind: test-steps\nsteps: 3\ntable: ns.out\nsource: {name: ns.src}\n---\n"),
        quiet=True,
    )
    out = load_table("ns.out").current_snapshot().snapshot_id
    at = _logbook()
    text = _texts(at)
    assert at.selectbox(key="logbook.select").value == job["id"]
    assert "**succeeded**" in text
    assert job["card"].strip() in text, text
    assert "step 3/3" in text  # the card and the log tail
    links = {shown(p.proto.label): p.proto.query_string for p in at.get("page_link")}
    assert links[f"ns.src@{src}"] == f"table=ns.src&snapshot={src}"
    assert links[f"ns.out@{out}"] == f"table=ns.out&snapshot={out}"
    assert at.get("arrow_line_chart") or at.get("vega_lite_chart")  # the loss curve
    assert at.query_params["job"] in (job["id"], [job["id"]])


def test_cancelled_job_lists_what_it_left_as_partial(home: Path) -> None:
    """Before: a cancelled job said "Outputs: none" though its table (or a training
    run's checkpoint) was there (issue 45)."""
    import threading

    from podium.jobs.launch import JobFailed
    from podium.jobs.queue import request_cancel

    card = "---\nkind: test-steps\nsteps: 400\nsleep: 0.05\ntable: ns.cut\nwrite_first: true\n---\n"

    def run() -> None:
        try:
            run_foreground(parse_card(card), quiet=True)
        except JobFailed:
            pass  # the cancel

    thread = threading.Thread(target=run)
    thread.start()
    while not ((jobs := list_jobs()) and jobs[0]["progress_done"]):
        thread.join(timeout=0.1)
    request_cancel(jobs[0]["id"])
    thread.join(timeout=60)
    job = get_job(jobs[0]["id"])
    assert job["status"] == "cancelled"
    at = _logbook()
    note = f"cancelled at {job['progress_done']} of 400"
    assert [shown(w.value) for w in at.warning] == [f"Partial: {note}"]
    snapshot = load_table("ns.cut").current_snapshot().snapshot_id
    links = {shown(p.proto.label) for p in at.get("page_link")}
    assert f"ns.cut@{snapshot}" in links  # among the outputs, not "none"


def test_new_job_form_queues_a_valid_card_and_lists_bad_fields(home: Path) -> None:
    at = _logbook()
    at.selectbox(key="logbook.new.kind").set_value("test-steps").run()
    at.number_input(key="logbook.new.test-steps.steps").set_value(4)
    at.text_input(key="logbook.new.test-steps.mode").set_value("from-ui")
    _submit_form(at)
    assert not at.error, [e.value for e in at.error]
    (job,) = list_jobs()
    config = parse_card(job["card"]).config
    assert (job["status"], config.steps, config.mode) == ("queued", 4, "from-ui")
    assert at.selectbox(key="logbook.select").value == job["id"]

    at.number_input(key="logbook.new.test-steps.sleep").set_value(-1.0)
    _submit_form(at)
    assert "sleep (--sleep): must be >= 0 (got -1.0)" in _texts(at)
    assert len(list_jobs()) == 1  # nothing queued


def _submit_form(at: AppTest) -> None:
    for button in at.button:
        if button.proto.label == "Queue job":
            button.click().run()
            return
    raise AssertionError("no 'Queue job' button")


def test_cancel_and_rerun_buttons(home: Path) -> None:
    job_id = submit(parse_card("---\nkind: test-steps\nsteps: 9\n---\n"))
    at = _logbook()
    # A queued job has not run: nothing to re-run yet.
    assert not [b for b in at.button if b.key == "logbook.rerun"]
    at.button(key="logbook.cancel").click().run()
    assert get_job(job_id)["status"] == "queued"  # one click asks first
    assert any(shown(w.value).startswith(f"Cancel job {job_id}") for w in at.warning)
    at.button(key="logbook.cancel.ask.yes").click().run()
    assert get_job(job_id)["status"] == "cancelled"
    assert "**cancelled**" in _texts(at)

    at.button(key="logbook.rerun").click().run()
    new = [j for j in list_jobs() if j["id"] != job_id]
    assert len(new) == 1 and new[0]["status"] == "queued"
    assert new[0]["card"] == get_job(job_id)["card"]
    assert at.selectbox(key="logbook.select").value == new[0]["id"]


def test_rerun_with_changes_fills_the_form_with_the_jobs_values(home: Path) -> None:
    job_id = submit(parse_card("---\nkind: test-steps\nsteps: 9\nmode: first\n---\n"))
    at = _logbook()
    at.button(key="logbook.edit").click().run()
    assert not at.exception, at.exception
    form = f"logbook.new.test-steps.{job_id}"
    assert at.number_input(key=f"{form}.steps").value == 9
    assert at.text_input(key=f"{form}.mode").value == "first"
    at.number_input(key=f"{form}.steps").set_value(2)
    at.button(key=f"FormSubmitter:{form}-Queue job").click().run()
    (new,) = [j for j in list_jobs() if j["id"] != job_id]
    assert '"steps":2' in new["config"] and '"mode":"first"' in new["config"]
    assert at.selectbox(key="logbook.select").value == new["id"]


class _FormModel(BaseModel):
    table: str = Field(description="Target.")
    rows: int = Field(10, description="How many.")
    temperature: float | None = Field(None, description="Sampling.")
    mode: Literal["a", "b"] = "a"
    source: TableRef | None = None
    stop: list[str] = Field(default_factory=list)
    extra: dict[str, int] = Field(default_factory=dict)
    dry: bool = False


def test_field_specs_follow_the_model() -> None:
    specs = {s.name: s for s in field_specs(_FormModel)}
    assert {n: s.widget for n, s in specs.items()} == {
        "table": "text", "rows": "int", "temperature": "float", "mode": "select",
        "source": "table", "stop": "lines", "extra": "yaml", "dry": "checkbox",
    }  # fmt: skip
    assert specs["table"].required and specs["table"].help == "Target."
    assert specs["temperature"].optional and specs["mode"].options == ("a", "b")
    assert specs["rows"].default == 10


def test_collect_turns_widget_values_into_a_valid_config() -> None:
    raw = {
        "table": "ns.t", "rows": 3, "temperature": "", "mode": "b",
        "source": {"name": "ns.src", "snapshot_id": "12"}, "stop": "a\n\n b \n",
        "extra": "k: 2\n", "dry": True,
    }  # fmt: skip
    config = _FormModel.model_validate(collect(field_specs(_FormModel), raw))
    assert config == _FormModel(
        table="ns.t", rows=3, temperature=None, mode="b",
        source=TableRef(name="ns.src", snapshot_id=12), stop=["a", "b"], extra={"k": 2}, dry=True,
    )  # fmt: skip
    blank = collect(field_specs(_FormModel), {**raw, "table": "", "source": {"name": None}})
    assert "table" not in blank and blank["source"] is None


def test_a_finished_training_run_lists_its_checkpoint_under_outputs() -> None:
    from podium.app.views.logbook.model import outputs_of

    job = {
        "kind": "sft", "status": "succeeded", "inputs": ["demo.chat@7"],
        "config": '{"model": "smollm2", "table": {"name": "demo.chat"}}',
        "outputs": {"tables": [], "checkpoints": [], "summary": {"checkpoint": "my-sft"}},
    }  # fmt: skip
    shown = outputs_of(job)  # type: ignore[arg-type]
    assert shown.checkpoints == ["my-sft"] and shown.empty_text == ""
    assert shown.compare_models("my-sft") == "smollm2,my-sft"
    assert (shown.inputs, shown.trained_on) == ([("demo.chat", 7)], "demo.chat")
    queued = {**job, "status": "queued", "outputs": None}
    assert outputs_of(queued).empty_text == "none yet"  # type: ignore[arg-type]


def test_metrics_of_different_sizes_get_their_own_panels_and_no_chart_zooms() -> None:
    import json

    import pandas as pd

    from podium.app import charts

    frame = pd.DataFrame(
        {"loss": [2.0, 1.5], "learning_rate": [5e-4, 4e-4], "num_tokens": [1200.0, 2400.0]},
        index=pd.Index([1, 2], name="step"),
    )
    panels = dict(charts.metric_panels(frame))
    assert list(panels) == ["Loss", "Learning rate", "num_tokens"]
    assert all(len(data.columns) == 1 for data in panels.values())
    for chart in (
        charts.line_chart(frame),
        charts.bar_chart(pd.DataFrame({"turns": [1, 2], "rows": [3, 4]}), "turns", "rows"),
    ):
        # A bound scale is what turns a mouse wheel over the chart into a zoom.
        assert '"bind": "scales"' not in json.dumps(chart.to_dict())

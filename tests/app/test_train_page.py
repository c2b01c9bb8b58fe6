# ruff: noqa: F811  (fixtures imported from train_fixtures are requested by name)
"""The Train page with AppTest: launch form, live charts of a real run, finish buttons."""

from __future__ import annotations

from html import unescape
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from train_fixtures import make_table, memo_pairs, tiny_base, tiny_checkpoint  # noqa: F401

from podium.jobs.cards import Card
from podium.jobs.launch import run_foreground
from podium.jobs.queue import get_job, list_jobs
from trainers.config import GrpoConfig

MAIN = str(Path(__file__).resolve().parents[2] / "podium" / "app" / "main.py")
pytestmark = pytest.mark.train


def _open() -> AppTest:
    at = AppTest.from_file(MAIN, default_timeout=120)
    at.run()
    at.switch_page("views/train/view.py")
    at.run()
    assert not at.exception, at.exception
    return at


def _select(at: AppTest, label: str):  # type: ignore[no-untyped-def]
    return next(w for w in at.selectbox if w.label == label)


def test_launch_queues_a_grpo_run_with_chosen_values(tiny_base, make_table, memo_pairs):
    make_table("t.memo", memo_pairs)
    at = _open()
    at.radio(key="train.kind").set_value("grpo").run()
    assert _select(at, "Base checkpoint").value == tiny_base
    assert _select(at, "Table").value == "t.memo"
    _select(at, "Preset").set_value("cpu-small").run()
    at.multiselect(key="train.rewards.cpu-small").set_value(["validate:json", "length:256"]).run()
    at.number_input(key="train.w.length:256").set_value(0.2).run()
    at.text_input(key="train.grpo.out").set_value("page-grpo")
    at.button(key="FormSubmitter:train.grpo-Queue job").click().run()
    assert not at.error, [e.value for e in at.error]

    (job,) = [j for j in list_jobs() if j["kind"] == "grpo"]
    assert job["status"] == "queued"
    cfg = GrpoConfig.model_validate_json(job["config"])
    assert cfg.out == "page-grpo" and cfg.model == tiny_base and cfg.method == "lora"
    assert [(r.rule, r.weight) for r in cfg.rewards] == [
        ("validate:json", 1.0),
        ("length:256", 0.2),
    ]
    assert cfg.table.snapshot_id is not None
    assert at.query_params["job"] in ([job["id"]], job["id"])
    # The Launch tab shows the run where it was queued; the Runs tab follows it too.
    at.run()
    assert any(job["id"] in unescape(m.value) and "queued" in m.value for m in at.markdown)
    assert at.button(key="train.launch.cancel")  # the live view under the form
    assert at.selectbox(key="train.run").value == job["id"]
    # Cancel asks first: one click stops nothing.
    at.button(key="train.cancel").click().run()
    assert get_job(job["id"])["status"] == "queued"
    assert any(unescape(w.value).startswith(f"Cancel run {job['id']}") for w in at.warning)
    at.button(key="train.cancel.ask.yes").click().run()
    assert get_job(job["id"])["status"] in ("cancelled", "cancelling")
    # The labels say so at once.
    assert "queued" not in _select(at, "Run").format_func(job["id"])


def test_bad_launch_shows_the_error_and_queues_nothing(tiny_base, make_table, memo_pairs):
    make_table("t.memo", memo_pairs)
    at = _open()
    at.text_input(key="train.sft.out").set_value(tiny_base)  # name already taken
    at.button(key="FormSubmitter:train.sft-Queue job").click().run()
    assert any("already registered" in unescape(e.value) for e in at.error)
    assert list_jobs() == []


def test_finished_run_shows_charts_samples_and_opens_generate(tiny_base, make_table, memo_pairs):
    make_table("t.memo", memo_pairs)
    cfg = GrpoConfig(
        model=tiny_base,
        table={"name": "t.memo"},
        out="page-done",
        max_steps=2,
        batch_size=4,
        num_generations=4,
        max_completion_length=8,
        rewards=[{"rule": "exact_match"}],
    )
    job = run_foreground(Card("grpo", cfg), quiet=True)
    assert get_job(job["id"])["status"] == "succeeded"

    at = AppTest.from_file(MAIN, default_timeout=120)
    at.query_params["job"] = job["id"]
    at.run()
    at.switch_page("views/train/view.py")
    at.query_params["job"] = job["id"]
    at.run()
    assert not at.exception, at.exception
    titles = [m.value for m in at.markdown]
    assert "**Reward**" in titles and "**Learning rate**" in titles
    # exact_match never fired: the run's warning is on the Train page, not only in the
    # Logbook (issue 45); it is drawn from the job's events, running or done.
    assert any("No learning signal" in unescape(w.value) for w in at.warning), [
        w.value for w in at.warning
    ]
    assert "**Sample completions**" in titles
    assert any(
        "page-done" in unescape(s.value) and tiny_base in unescape(s.value) for s in at.success
    )
    at.button(key="train.chat").click().run()
    assert [t.value for t in at.title] == ["Generate"]
    assert at.query_params["model"] in (["page-done"], "page-done")


def test_only_valid_is_shown_and_on_when_a_validation_report_exists(tiny_base, make_table):
    """Before: "Only valid" was off and under Advanced though Validate had just marked
    rows malformed, so SFT trained on them ("0 malformed skipped"; issue 45)."""
    from podium.store.read.refs import TableRef
    from podium.validate.job import ValidateConfig, validate_table

    make_table("t.mixed", [("a", '{"ok": 1}'), ("b", '{"ok": 2,}'), ("c", '{"ok": 3}')])
    at = _open()
    assert at.checkbox(key="train.sft.only_valid").value is False  # no report yet
    assert any("No validation report covers" in unescape(c.value) for c in at.caption)
    validate_table(ValidateConfig(table=TableRef(name="t.mixed"), rules=["json"]))
    at = _open()
    only_valid = at.checkbox(key="train.sft.only_valid")
    assert only_valid.value is True
    (advanced,) = [e for e in at.expander if e.label == "Advanced"]
    assert "train.sft.only_valid" not in [c.key for c in advanced.checkbox]  # in sight
    assert any(
        'marks 1 row malformed: "Only valid" skips it' in unescape(c.value) for c in at.caption
    ), [c.value for c in at.caption]
    at.text_input(key="train.sft.out").set_value("valid-only")
    at.button(key="FormSubmitter:train.sft-Queue job").click().run()
    assert not at.error, [e.value for e in at.error]
    (job,) = [j for j in list_jobs() if j["kind"] == "sft"]
    assert '"only_valid":true' in job["config"].replace(" ", "")

"""The Vibe-check page (AppTest): submit with a streamed answer, filter, build an eval set."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from generators.vibes import list_vibes, submit_vibe
from podium.models import register_model
from podium.store.read.read import read_arrow

MAIN = str(Path(__file__).resolve().parents[2] / "podium" / "app" / "main.py")


def _open() -> AppTest:
    at = AppTest.from_file(MAIN, default_timeout=120)
    at.run()
    at.switch_page("views/vibes/view.py")
    at.run()
    assert not at.exception, at.exception
    return at


def _submit_button(at: AppTest):
    return next(b for b in at.button if b.label == "Submit")


def test_page_without_models(podium_home):
    at = _open()
    assert [b.label for b in at.button] == ["Set up the base model"]  # not a shell command


def test_filter_and_build_eval_set_without_a_server(podium_home, tmp_path):
    register_model("some-model", kind="base", path=str(tmp_path), is_default=True)
    tag, unique_table = "mytag", "t.vibes"
    submit_vibe("other prompt", "ideal", ["other"], "some-model", "answer")
    for i in range(3):
        submit_vibe(f"{tag} prompt {i}", "ideal", [tag], "some-model", "answer")
    at = _open()
    assert at.text_input(key="vibes.evalset_out").value == "evals.vibes_selection"
    at.multiselect(key="vibes.filter_tags").set_value([tag]).run()
    assert any(c.value == "3 submissions" for c in at.caption)
    # The proposed name follows the tag chosen (it kept "evals.vibes_selection").
    assert at.text_input(key="vibes.evalset_out").value == "evals.vibes_mytag"
    at.multiselect(key="vibes.filter_tags").set_value([tag, "other"]).run()
    assert at.text_input(key="vibes.evalset_out").value == "evals.vibes_mytag_other"
    at.multiselect(key="vibes.filter_tags").set_value([tag]).run()
    out = unique_table + "_evals"
    at.text_input(key="vibes.evalset_out").set_value(out)
    at.button(key="vibes.build").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any(f"Wrote 3 prompts to `{out}`" in s.value for s in at.success)
    from podium.app.views.vibes.model import count_text

    assert count_text(1, "prompt") == "1 prompt" and count_text(1200, "prompt") == "1,200 prompts"
    assert len(read_arrow(out)[0]) == 3
    # A name the reviewer typed stays when the tags change.
    at.multiselect(key="vibes.filter_tags").set_value(["other"]).run()
    assert at.text_input(key="vibes.evalset_out").value == out


def test_double_click_on_submit_stores_the_prompt_once(podium_home, tmp_path):
    """Before: each click appended a row, so a double click stored the prompt twice."""
    register_model("some-model", kind="base", path=str(tmp_path), is_default=True)
    at = _open()
    at.text_area(key="vibes.prompt").set_value("What is 2+2? Answer in JSON.")
    at.checkbox(key="vibes.ask").uncheck()
    _submit_button(at).click().run()
    # The form is empty for the next prompt, and says what it stored.
    assert at.text_area(key="vibes.prompt").value == ""
    assert any(s.value.startswith("Stored submission") for s in at.success)
    _submit_button(at).click().run()  # the second click of a double click
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert [v["prompt"] for v in list_vibes()] == ["What is 2+2? Answer in JSON."]
    at.text_area(key="vibes.prompt").set_value("Another prompt")
    _submit_button(at).click().run()
    assert len(list_vibes()) == 2  # a different prompt is a new submission


@pytest.mark.vllm
def test_submit_streams_the_answer_and_stores_it(vllm_model, unique_table):
    tag = unique_table.split(".")[1]
    at = _open()
    at.text_area(key="vibes.prompt").input("Name three prime numbers.")
    at.text_area(key="vibes.ideal").input("2, 3, 5")
    at.text_input(key="vibes.tags").input(f"{tag}, Math")
    _submit_button(at).click().run(timeout=600)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert any("Stored submission" in s.value for s in at.success)
    (row,) = list_vibes(tags=[tag])
    assert row["prompt"] == "Name three prime numbers." and row["ideal"] == "2, 3, 5"
    assert row["tags"] == ["math", tag] and row["checkpoint"] == vllm_model
    assert row["answer"].strip()
    assert any(row["answer"].strip()[:20] in m.value for m in at.markdown)

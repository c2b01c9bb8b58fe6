"""What a job form shows for each field: a label people read ("Max tokens"), and a
float shown to its first significant digit (a learning rate is not 0.00)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from podium.app.forms import field_label, field_specs, number_format
from trainers.config import SftConfig


def test_labels_read_as_words_with_units_and_acronyms() -> None:
    assert field_label("max_tokens") == "Max tokens"
    assert field_label("retry_max_wait_s") == "Retry max wait (s)"
    assert field_label("lora_r") == "LoRA r"
    assert field_label("n") == "N"
    assert field_label("use_vllm") == "Use vLLM"
    labels = {s.name: s.label for s in field_specs(SftConfig)}
    assert labels["learning_rate"] == "Learning rate"
    assert all("_" not in label for label in labels.values())


def test_a_small_float_keeps_its_digits() -> None:
    assert number_format(0.0005) == ("%.1e", 0.0001)
    assert number_format(2e-5)[0] == "%.1e"
    assert number_format(0.7) == (None, None)
    assert number_format(0.0) == (None, None)


def _form() -> None:
    from podium.app.forms import render_form
    from trainers.config import SftConfig

    render_form(SftConfig, key="f", values={"learning_rate": 0.0005})


def test_the_train_form_shows_the_learning_rate_the_card_holds() -> None:
    at = AppTest.from_function(_form).run()
    box = at.number_input(key="f.learning_rate")
    assert box.label == "Learning rate"
    assert box.value == 0.0005
    assert box.proto.format == "%.1e"


def test_an_optional_table_name_is_a_text_box_not_yaml() -> None:
    """Before: `TableName | None` (validate's report, code-exec's sft_out) was drawn as a
    YAML box, so the report name came back "T__validation\\n..." and was refused."""
    from generators.code_exec.config import CodeExecConfig
    from podium.app.forms import field_specs
    from podium.validate.job import ValidateConfig

    widgets = {s.name: s.widget for s in field_specs(ValidateConfig)}
    assert widgets["report"] == "text"
    assert {s.name: s.widget for s in field_specs(CodeExecConfig)}["sft_out"] == "text"

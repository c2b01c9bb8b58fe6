"""Bad input fails before any compute; a cancelled run keeps its last checkpoint."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from transformers import AutoModelForCausalLM

from podium.config import get_settings
from podium.errors import Cancelled, InvalidInput, NotFound
from podium.models.registry import get_model, get_model_or_none, list_models
from podium.reporting import Reporter
from podium.store.schema import SFT_ARROW_SCHEMA, SFT_SCHEMA
from podium.store.write.write import write_table
from trainers.config import GrpoConfig, RewardSpec, SftConfig
from trainers.grpo import run_grpo
from trainers.sft import run_sft

pytestmark = pytest.mark.train


def _no_checkpoints_written() -> bool:
    root = get_settings().home / "checkpoints"
    return not root.exists() or not any(root.rglob("*.safetensors"))


def test_table_without_assistant_turns_is_refused(tiny_base):
    rows = [
        {"id": "a", "messages": [{"role": "user", "content": "hello"}]},
        {
            "id": "b",
            "messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": " "}],
        },
    ]
    write_table(
        "t.users_only", pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA), schema=SFT_SCHEMA
    )
    cfg = SftConfig(model=tiny_base, table={"name": "t.users_only"}, out="never")
    with pytest.raises(InvalidInput, match="no row has an assistant turn"):
        run_sft(cfg, Reporter())
    assert get_model_or_none("never") is None and _no_checkpoints_written()


def test_unknown_reward_rule_is_refused(tiny_base, make_table, memo_pairs):
    make_table("t.memo", memo_pairs)
    cfg = GrpoConfig(
        model=tiny_base, table={"name": "t.memo"}, out="never", rewards=[RewardSpec(rule="vibes")]
    )
    with pytest.raises(InvalidInput, match="Unknown reward rule 'vibes'"):
        run_grpo(cfg, Reporter())
    assert _no_checkpoints_written()


def test_unregistered_base_model_is_refused(podium_home, make_table, memo_pairs):
    make_table("t.memo", memo_pairs)
    cfg = SftConfig(model="no-such-model", table={"name": "t.memo"}, out="never")
    with pytest.raises(NotFound, match="No model named 'no-such-model'"):
        run_sft(cfg, Reporter())
    assert list_models() == []


def test_taken_output_name_is_refused(tiny_base, make_table, memo_pairs):
    make_table("t.memo", memo_pairs)
    cfg = SftConfig(model=tiny_base, table={"name": "t.memo"}, out=tiny_base)
    with pytest.raises(InvalidInput, match="already registered"):
        run_sft(cfg, Reporter())


class CancelAfter(Reporter):
    def __init__(self, steps: int) -> None:
        super().__init__()
        self.steps = steps
        self.done = 0

    def progress(self, done, total=None, message=""):  # type: ignore[no-untyped-def]
        self.done = done

    def is_cancelled(self) -> bool:
        return self.done >= self.steps


def test_cancelled_run_keeps_last_checkpoint_registered_as_periodic(
    tiny_base, make_table, memo_pairs
):
    make_table("t.memo", memo_pairs)
    cfg = SftConfig(
        model=tiny_base, table={"name": "t.memo"}, out="stopped", max_steps=50, save_every=2
    )
    with pytest.raises(Cancelled, match="stopped-step-3"):
        run_sft(cfg, CancelAfter(3))
    assert get_model_or_none("stopped") is None  # no final checkpoint
    last = get_model("stopped-step-3")
    assert last.step == 3 and last.lineage["final"] is False
    AutoModelForCausalLM.from_pretrained(last.path)  # complete and loadable
    names = sorted(m.name for m in list_models() if m.kind == "trained")
    assert names == ["stopped-step-2", "stopped-step-3"]
    assert not any(p.name.startswith(".tmp-") for p in Path(last.path).parent.iterdir())


def test_cancelled_run_marks_its_checkpoints_partial(tiny_base, make_table, memo_pairs):
    """Before: a cancelled run's checkpoints read as finished ones everywhere (issue 45)."""
    make_table("t.memo", memo_pairs)
    cfg = SftConfig(
        model=tiny_base, table={"name": "t.memo"}, out="halted", max_steps=50, save_every=2
    )
    reporter = CancelAfter(3)
    with pytest.raises(Cancelled):
        run_sft(cfg, reporter)
    for name in ("halted-step-2", "halted-step-3"):
        assert get_model(name).partial == "cancelled at step 3 of 50"
        assert get_model(name).label == f"{name} (partial: cancelled at step 3 of 50)"
        assert get_model(name).to_dict()["partial"] == "cancelled at step 3 of 50"
    left = reporter.partial_outputs
    assert left is not None and left.checkpoints == ["halted-step-2", "halted-step-3"]
    assert left.summary["partial"] == "cancelled at step 3 of 50"
    assert get_model(tiny_base).partial is None


class FailAt(Reporter):
    """A run that breaks at a step (after a periodic save), as a full disk would."""

    def __init__(self, step: int) -> None:
        super().__init__()
        self.step = step

    def progress(self, done, total=None, message=""):  # type: ignore[no-untyped-def]
        if done >= self.step:
            raise RuntimeError(f"broke at step {done}")


def test_failed_run_registers_nothing(tiny_base, make_table, memo_pairs):
    """Before: the periodic checkpoint of a failed run stayed registered as a finished one,
    and its folder refused a re-run of the same card (issue 45)."""
    make_table("t.memo", memo_pairs)
    cfg = SftConfig(
        model=tiny_base, table={"name": "t.memo"}, out="broken", max_steps=50, save_every=2
    )
    with pytest.raises(RuntimeError, match="broke at step 3"):
        run_sft(cfg, FailAt(3))
    assert [m.name for m in list_models() if m.kind == "trained"] == []
    assert _no_checkpoints_written()


def test_only_valid_skips_rows_the_validation_report_marks(tiny_base, make_table):
    from podium.store.read.refs import TableRef
    from podium.validate.job import ValidateConfig, validate_table
    from trainers.data import load_training_data

    make_table("t.mixed", [("a", '{"ok": 1}'), ("b", '{"ok": 2,}'), ("c", '{"ok": 3}')])
    ref = TableRef(name="t.mixed")
    with pytest.raises(InvalidInput, match="no validation report covers t.mixed"):
        load_training_data(ref, only_valid=True)
    validate_table(ValidateConfig(table=ref, rules=["json"]))
    data = load_training_data(ref, only_valid=True)
    assert sorted(c.id for c in data.train) == ["r0", "r2"] and data.skipped_invalid == 1


def test_gpu_settings_on_a_cpu_machine_are_refused(tiny_base, make_table, memo_pairs):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    make_table("t.memo", memo_pairs)
    sft = SftConfig(model=tiny_base, table={"name": "t.memo"}, out="never", preset="gpu")
    with pytest.raises(InvalidInput, match="no GPU is visible"):
        run_sft(sft, Reporter())
    # use_vllm on CPU now trains with TRL's own generation and a notice
    # (tests/trainers/test_grpo_gpu_settings.py).
    assert _no_checkpoints_written()

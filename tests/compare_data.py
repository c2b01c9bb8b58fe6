"""Compare fixtures: tiny prompt sets and samples tables written as `generate` writes them.

Models are registered as endpoints on a closed port: a comparison over them succeeds
only if it reuses the samples below, because any request would fail.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from generators.client import ChatResult, Completion
from generators.generate import PROP_CONFIG, SAMPLES_KIND, sampling_json
from generators.prompts import load_prompts
from generators.samples import sample_rows, to_arrow
from podium.compare.job import CompareConfig, run_compare
from podium.compare.table import Comparison, load_comparison
from podium.models.registry import add_endpoint, get_model
from podium.reporting import Reporter
from podium.store.read.refs import TableRef
from podium.store.schema import (
    PROP_KIND,
    PROP_LINEAGE_CHECKPOINT,
    PROP_LINEAGE_CHECKPOINT_LOCATION,
    PROP_LINEAGE_INPUT,
    SFT_ARROW_SCHEMA,
)
from podium.store.write.write import write_table

DEAD_URL = "http://127.0.0.1:9/v1"  # nothing listens on the discard port

PROMPTS = [
    ("p0", "Give the colour of the sky as JSON.", None),
    ("p1", "Give the colour of grass as JSON.", None),
    ("p2", "Write add(a, b) in Python.", "assert add(2, 3) == 5"),
    ("p3", "Give the colour of snow as JSON.", None),
]


def write_prompts(name: str = "evals.colours") -> str:
    rows = [
        {
            "id": pid,
            "messages": [{"role": "user", "content": text}],
            "system": None,
            "source": "test",
            "split": "eval",
            "tags": [],
            "metadata": json.dumps({"tests": tests} if tests else {}),
            "created_at": None,
        }
        for pid, text, tests in PROMPTS
    ]
    write_table(name, pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA))
    return name


def register_dead(name: str) -> str:
    return add_endpoint(DEAD_URL, name, remote_model=name).name


def write_samples(
    out: str, model: str, prompts_table: str, cfg: CompareConfig, answers: dict[str, str]
) -> str:
    """A samples table for `model` with `answers` by prompt id, keyed like `generate`'s."""
    info = get_model(model)
    prompts, snapshot, _ = load_prompts(TableRef(name=prompts_table))
    gen = cfg.generate_config(info.name, out)
    gen = gen.model_copy(update={"table": TableRef(name=prompts_table, snapshot_id=snapshot)})
    rows = []
    for p in prompts:
        if p.prompt_id in answers:
            result = ChatResult([Completion(answers[p.prompt_id], "stop")], 10, 5, 0.1)
            rows += sample_rows(out, info.name, sampling_json(gen), p, [result])
    properties = {
        PROP_KIND: SAMPLES_KIND,
        PROP_LINEAGE_INPUT: f"{prompts_table}@{snapshot}",
        PROP_LINEAGE_CHECKPOINT: info.name,
        PROP_LINEAGE_CHECKPOINT_LOCATION: info.location,
        PROP_CONFIG: json.dumps(gen.model_dump(mode="json"), sort_keys=True),
    }
    write_table(out, to_arrow(rows), properties=properties)
    return out


GOOD = {
    "p0": '{"colour": "blue"}',
    "p1": '{"colour": "green"}',
    "p2": "```python\ndef add(a, b):\n    return a + b\n```",
    "p3": '{"colour": "white"}',
}
BAD = {
    "p0": '{"colour": "blue",}',
    "p1": '{"colour": "green"}',
    "p2": "def add(a, b):\n    return a - b",
    "p3": "white, I think",
}


@pytest.fixture
def compare_config(podium_home) -> CompareConfig:  # type: ignore[no-untyped-def]
    """Two checkpoints on a closed port whose samples of `evals.colours` already exist."""
    table = write_prompts()
    models = [register_dead("alpha"), register_dead("omega")]
    cfg = CompareConfig(
        models=models, input=TableRef(name=table), out="cmp.colours", max_tokens=32, checks=["json"]
    )
    write_samples("gen.alpha", "alpha", table, cfg, GOOD)
    write_samples("gen.omega", "omega", table, cfg, BAD)
    return cfg


@pytest.fixture
def comparison(compare_config: CompareConfig) -> Comparison:
    """`cmp.colours`, made by the compare job from the existing samples."""
    run_compare(compare_config, Reporter())
    return load_comparison(compare_config.out)


def rubric_score(
    comparison: Comparison, pid: str, model: str, value: int | None, minute: int = 0
) -> dict[str, object]:
    """A `compare.judge_scores` row of rubric judge "grader" (None: unparsed), `minute`s
    after midnight of 2026-12-01."""
    from datetime import UTC, datetime, timedelta

    return {
        "id": f"{pid}-{model}-{minute}",
        "comparison": comparison.name,
        "prompt_id": pid,
        "voter": "judge:grader",
        "judge": "grader",
        "prompt_version": "rubric-v1",
        "model": model,
        "sample_id": comparison.item(pid).answer_of(model).sample_id,
        "score": value,
        "reason": "r",
        "problem": None if value is not None else "not JSON: 'I refuse'",
        "latency_s": 0.1,
        "created_at": datetime(2026, 12, 1, tzinfo=UTC) + timedelta(minutes=minute),
    }

"""A ready comparison of two checkpoints whose samples already exist (no server needed)."""

from __future__ import annotations

import pytest

from compare_data import BAD, GOOD, register_dead, write_prompts, write_samples
from podium.compare.job import CompareConfig, run_compare
from podium.compare.table import Comparison, load_comparison
from podium.reporting import Reporter
from podium.store.refs import TableRef


@pytest.fixture
def compare_config(podium_home) -> CompareConfig:
    table = write_prompts()
    models = [register_dead("good"), register_dead("bad")]
    cfg = CompareConfig(models=models, input=TableRef(name=table), out="cmp.colours",
                        max_tokens=32, checks=["json"])
    write_samples("gen.good", "good", table, cfg, GOOD)
    write_samples("gen.bad", "bad", table, cfg, BAD)
    return cfg


@pytest.fixture
def comparison(compare_config: CompareConfig) -> Comparison:
    run_compare(compare_config, Reporter())
    return load_comparison(compare_config.out)

"""The loop on the real base model: `podium train sft --preset cpu-smoke` on the demo
JSON table registers a checkpoint that a real vLLM server serves and
`podium generate --model` samples from."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from podium.cli import app
from podium.models.registry import get_model
from podium.store.read.read import read_arrow

pytestmark = [pytest.mark.train, pytest.mark.vllm]
runner = CliRunner()


def test_cpu_smoke_sft_on_smollm2_is_served_by_vllm(podium_home: Path):
    from podium.models.bootstrap import bootstrap
    from podium.models.serving import stop_server
    from podium.store.write.demo import load_demo

    base = bootstrap()
    load_demo()
    result = runner.invoke(
        app,
        [
            "train",
            "sft",
            "--model",
            "base",
            "--table",
            "demo.json_sft",
            "--out",
            "json-smoke",
            "--preset",
            "cpu-smoke",
            "--set",
            "max_rows=16",
        ],
    )
    assert result.exit_code == 0, result.output
    info = get_model("json-smoke")
    assert info.parent == base.name and info.lineage["table"] == "demo.json_sft"
    assert info.lineage["base_model"] == base.name and info.step == 4
    assert (Path(info.path) / "model.safetensors").stat().st_mode & 0o044  # servers can read

    try:
        result = runner.invoke(
            app,
            [
                "generate",
                "--model",
                "json-smoke",
                "--table",
                "demo.json_sft",
                "--out",
                "gen.smoke",
                "--limit",
                "2",
                "--max-tokens",
                "16",
                "--temperature",
                "0",
            ],
        )
        assert result.exit_code == 0, result.output
    finally:
        stop_server("json-smoke")
    rows, _ = read_arrow("gen.smoke")
    assert rows.num_rows == 2
    text = " ".join(str(v) for v in rows.to_pylist())
    assert "json-smoke" in text  # each sample names the checkpoint that wrote it

"""A greedy generation job re-runs to the same text: `podium jobs rerun ID --compare`
against the real vLLM server, and the card pins the checkpoint it used."""

from __future__ import annotations

import json
import subprocess
import sys

import cli_fork
import pyarrow as pa
import pytest

from generators.generate import GenerateConfig
from podium.jobs.cards import Card, card_environment
from podium.jobs.launch import run_in_process
from podium.models import get_model
from podium.models.digest import checkpoint_digest
from podium.store.catalog.catalog import load_table
from podium.store.read.refs import TableRef
from podium.store.schema import SFT_ARROW_SCHEMA
from podium.store.write.write import write_table

PROMPTS = 8


def _prompts(name: str) -> str:
    rows = [
        {"id": f"q{i}", "messages": [{"role": "user", "content": f"Count from {i} to {i + 5}."}]}
        for i in range(PROMPTS)
    ]
    write_table(name, pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA))
    return name


@pytest.mark.vllm
def test_greedy_generation_reruns_identical(vllm_model: str, unique_table: str) -> None:
    src = _prompts(unique_table)
    out = unique_table + "_greedy"
    config = GenerateConfig(
        input=TableRef(name=src), out=out, model=vllm_model, temperature=0.0, max_tokens=24
    )
    job = run_in_process(Card("generate", config))
    assert job["status"] == "succeeded", job["error"]

    # The card and the table's lineage pin the weights, Podium and the lock file.
    recorded = card_environment(job["card"])
    assert recorded is not None
    digest = checkpoint_digest(get_model(vllm_model).path or "")
    assert recorded["checkpoints"] == {vllm_model: digest}
    assert recorded["podium_version"] and recorded["lock_digest"].startswith("sha256:")
    assert f"    {vllm_model}: {digest}\n" in job["card"]
    lineage = json.loads(load_table(out).properties["podium.lineage.environment"])
    assert lineage == recorded

    done = cli_fork.run(
        [sys.executable, "-m", "podium.cli", "jobs", "rerun", job["id"], "--compare", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    [table] = report["tables"]
    assert (table["original"], table["rerun"]) == (out, out + "__rerun_1")
    assert table["key"] == ["prompt_id", "sample_index"] and table["compared"] == ["completion"]
    assert (table["identical"], table["differing"]) == (PROMPTS, 0), table["examples"]
    assert report["all_identical"] is True


@pytest.mark.vllm
def test_sampled_generation_without_seed_pins_one_and_reruns_identical(
    vllm_model: str, unique_table: str
) -> None:
    """Before: a card had `seed: null`, and a re-run at temperature 0.7 matched 0 of 8."""
    import yaml

    from podium.jobs.queue import list_jobs

    src = _prompts(unique_table)
    out = unique_table + "_sampled"

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        done = cli_fork.run(
            [sys.executable, "-m", "podium.cli", *args], capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, done.stderr
        return done

    cli("generate", "--model", vllm_model, "--table", src, "--out", out,
        "--temperature", "0.8", "--max-tokens", "24", "--limit", "6")  # fmt: skip
    [job] = [j for j in list_jobs(limit=20) if out in j["config"] and j["kind"] == "generate"]
    seed = yaml.safe_load(job["card"].split("---")[1])["seed"]
    assert isinstance(seed, int)
    report = json.loads(cli("jobs", "rerun", job["id"], "--compare", "--json").stdout)
    [table] = report["tables"]
    assert (table["identical"], table["differing"]) == (6, 0), table["examples"]
    assert report["all_identical"] is True


@pytest.mark.sandbox
@pytest.mark.vllm
def test_greedy_code_exec_build_reruns_identical(vllm_model: str, unique_table: str) -> None:
    """Both of a build's tables (rows, and the SFT table its card leaves to the default
    name) re-run identical; the rows' sandbox timings are not compared."""
    from generators.code_exec.config import CodeExecConfig
    from generators.code_exec.demo_functions import load_demo_functions
    from podium.jobs.cards import parse_card

    load_demo_functions()
    cfg = CodeExecConfig(
        functions=TableRef(name="demo.functions"),
        out=unique_table,
        model=vllm_model,
        inputs_per_function=2,
        limit=3,
        backend="local",
        temperature=0.0,
        max_tokens=120,
    )
    job = run_in_process(Card("code-exec-build", cfg))
    assert job["status"] == "succeeded", job["error"]
    assert isinstance(parse_card(job["card"]).config.seed, int)  # pinned, though greedy
    done = cli_fork.run(
        [sys.executable, "-m", "podium.cli", "jobs", "rerun", job["id"], "--compare", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    pairs = {t["original"]: t for t in report["tables"]}
    assert set(pairs) == {unique_table, f"{unique_table}_sft"}
    rows = pairs[unique_table]
    assert "wall_s" not in rows["compared"] and "cpu_s" not in rows["compared"]
    assert rows["identical"] > 0 and rows["differing"] == 0, rows["examples"]
    assert report["verdict"] == "identical", report

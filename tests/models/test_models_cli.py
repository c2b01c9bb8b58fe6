"""`podium models`, `podium serve`, `podium generate` and `podium vibes` as a person runs
them: real `podium` processes, exit codes, JSON."""

from __future__ import annotations

import json
import subprocess
import sys

import cli_fork
import pyarrow as pa
import pytest
import yaml

from podium.store.schema import SFT_ARROW_SCHEMA
from podium.store.write.write import write_table

PODIUM = [sys.executable, "-m", "podium.cli"]


def podium(*args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    proc = cli_fork.run([*PODIUM, *args], capture_output=True, text=True, timeout=600)
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_bootstrap_list_add_and_endpoint(podium_home, base_checkpoint, tmp_path, monkeypatch):
    monkeypatch.setenv("PODIUM_ENDPOINT_KEY_ENVS", "REMOTE_KEY")  # the operator allows it
    assert json.loads(podium("models", "list", "--json").stdout) == []
    boot = json.loads(podium("models", "bootstrap", "--json").stdout)
    assert boot["name"] == "smollm2-135m-instruct" and boot["is_default"]
    podium("models", "add", str(base_checkpoint), "--name", "copy-of-base", "--parent", "base")
    podium(
        "models",
        "add-endpoint",
        "http://127.0.0.1:9/v1",
        "--name",
        "remote",
        "--api-key-env",
        "REMOTE_KEY",
        "--model-id",
        "gpt-x",
    )
    listed = {m["name"]: m for m in json.loads(podium("models", "list", "--json").stdout)}
    assert listed["copy-of-base"]["parent"] == "base"
    assert (
        listed["remote"]["kind"] == "endpoint" and listed["remote"]["api_key_env"] == "REMOTE_KEY"
    )
    bad = podium("models", "add", str(tmp_path), ok=False)
    assert bad.returncode == 2 and "config.json" in bad.stderr
    unknown = podium("serve", "nope", ok=False)
    assert unknown.returncode == 2 and "smollm2-135m-instruct" in unknown.stderr


def test_generate_card_pins_input_and_model(podium_home, base_checkpoint, tmp_path):
    podium("models", "bootstrap")
    rows = [{"id": "a", "messages": [{"role": "user", "content": "hi"}]}]
    table = write_table("t.prompts", pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA))
    schema = tmp_path / "schema.json"
    schema.write_text('{"type": "object", "properties": {"x": {"type": "integer"}}}')
    card = tmp_path / "gen.md"
    podium(
        "generate",
        "--table",
        "t.prompts",
        "--out",
        "t.samples",
        "--n",
        "3",
        "--max-tokens",
        "16",
        "--schema",
        str(schema),
        "--card",
        str(card),
    )
    front = yaml.safe_load(card.read_text().split("---")[1])
    assert front["kind"] == "generate"
    assert front["table"] == {
        "name": "t.prompts",
        "snapshot_id": table.current_snapshot().snapshot_id,
        "ref": None,  # no tag or branch named
    }
    assert front["model"] == "smollm2-135m-instruct"  # the alias is resolved in the card
    assert (front["n"], front["max_tokens"]) == (3, 16)
    assert front["json_schema"]["properties"]["x"] == {"type": "integer"}
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    bad = podium(
        "generate", "--table", "t.prompts", "--out", "t.s", "--schema", str(broken), ok=False
    )
    assert bad.returncode == 2 and "not valid JSON" in bad.stderr


@pytest.mark.vllm
def test_serve_detach_prints_the_running_url_and_generate_runs(vllm_model, unique_table):
    from podium.models import ensure_server
    from podium.store.catalog.catalog import load_table

    served = podium("serve", vllm_model, "--detach")
    assert served.stdout.strip() == ensure_server(vllm_model)[0]
    rows = [
        {"id": f"q{i}", "messages": [{"role": "user", "content": f"Say {i}."}]} for i in range(2)
    ]
    write_table(unique_table, pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA))
    out = unique_table + "_cli"
    podium(
        "generate",
        "--model",
        vllm_model,
        "--table",
        unique_table,
        "--out",
        out,
        "--max-tokens",
        "8",
    )
    props = load_table(out).properties
    assert props["podium.lineage.kind"] == "generate"
    assert props["podium.lineage.checkpoint"] == vllm_model
    assert props["podium.lineage.job_id"]
    sub = podium(
        "vibes",
        "submit",
        "Say 1.",
        "--ideal",
        "1",
        "--tag",
        unique_table[2:],
        "--model",
        vllm_model,
        "--max-tokens",
        "8",
    )
    assert "stored" in sub.stdout
    (row,) = json.loads(podium("vibes", "list", "--tag", unique_table[2:], "--json").stdout)
    assert row["answer"] and sub.stdout.startswith(row["answer"].strip()[:10])

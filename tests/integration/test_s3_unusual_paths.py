"""An S3 warehouse whose prefix has a space and non-ASCII letters (issue 33): import,
edit, show and export work through the real CLI, pyiceberg reads the same rows, and the
objects are stored under the real names, not percent-encoded ones."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import boto3
import cli_fork
from s3_store import ACCESS_KEY, REGION, SECRET_KEY, s3_server  # type: ignore[import-not-found]

from podium.config import reset_settings
from podium.store.catalog.catalog import load_table

PODIUM = [sys.executable, "-m", "podium.cli"]
PREFIX = "ware house/ünï"


def test_an_s3_warehouse_prefix_with_a_space_and_non_ascii_letters(tmp_path: Path) -> None:
    source = tmp_path / "rows.jsonl"
    source.write_text(
        "".join(
            json.dumps({"id": f"r{i}", "messages": [{"role": "user", "content": f"q{i}"}]}) + "\n"
            for i in range(5)
        ),
        encoding="utf-8",
    )
    with s3_server() as s3:
        env = {
            **os.environ,
            "PODIUM_HOME": str(tmp_path / "home"),
            "PODIUM_WAREHOUSE": f"s3://{s3.bucket}/{PREFIX}",
            "PODIUM_CATALOG_PROPERTIES": json.dumps(s3.catalog_properties),
        }

        def podium(*args: str) -> str:
            proc = cli_fork.run(
                [*PODIUM, *args], capture_output=True, text=True, env=env, timeout=300
            )
            assert proc.returncode == 0, proc.stdout + proc.stderr
            return proc.stdout

        podium("import", str(source), "--out", "odd.chat")
        podium("edit", "odd.chat", "r2", "--turn", "0", "--content", "fixed", "--why", "typo")
        shown = json.loads(podium("show", "odd.chat", "--limit", "10", "--json"))
        rows = shown["rows"] if isinstance(shown, dict) else shown
        assert {r["id"]: r["messages"][0]["content"] for r in rows}["r2"] == "fixed"
        podium("export", "odd.chat", "out.jsonl")
        exported = [json.loads(x) for x in (tmp_path / "home" / "exports" / "out.jsonl").open()]
        assert len(exported) == 5

        keys = [
            o["Key"]
            for o in boto3.client(
                "s3",
                endpoint_url=s3.endpoint,
                aws_access_key_id=ACCESS_KEY,
                aws_secret_access_key=SECRET_KEY,
                region_name=REGION,
            ).list_objects_v2(Bucket=s3.bucket)["Contents"]
        ]
        assert keys and all(k.startswith(PREFIX + "/") for k in keys), keys[:3]
        assert any(k.endswith("-deletes.parquet") for k in keys)
        assert not any("%" in k for k in keys), keys[:3]

        saved = {
            k: os.environ.get(k)
            for k in ("PODIUM_HOME", "PODIUM_WAREHOUSE", "PODIUM_CATALOG_PROPERTIES")
        }
        os.environ.update({k: env[k] for k in saved})
        reset_settings()
        try:
            scanned = load_table("odd.chat").scan(selected_fields=("id",)).to_arrow()
            assert sorted(scanned["id"].to_pylist()) == [f"r{i}" for i in range(5)]
        finally:
            for k, v in saved.items():
                os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
            reset_settings()

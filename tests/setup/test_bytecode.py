"""Set-up compiles every module once (scripts/venv_install.sh, `make bytecode`). Where the
environment sets PYTHONDONTWRITEBYTECODE, as CI's machines do, Python never writes
bytecode itself, so without it each process compiled every module it imported from
source: half of a cold `podium show`, 8 of the 16 s vLLM's server took to import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# What a cold command, a job and the app import between them.
MODULES = [
    "podium.cli",
    "podium.store.read.query",
    "podium.store.write.ingest",
    "podium.jobs.execute",
    "pyiceberg.io.pyarrow",
    "pyiceberg.catalog.sql",
    "duckdb",
    "streamlit",
]
UNCOMPILED = """
import importlib, json, os, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
specs = [getattr(m, "__spec__", None) for m in list(sys.modules.values())]
print(json.dumps(sorted(  # frozen modules (part of the interpreter) have no location
    s.origin for s in specs
    if s is not None and s.has_location and (s.origin or "").endswith(".py")
    and not os.path.exists(s.cached or "")
)))
"""


def test_every_module_the_product_imports_is_compiled() -> None:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", UNCOMPILED, *MODULES],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    uncompiled = json.loads(done.stdout.strip().splitlines()[-1])
    assert uncompiled == [], f"{len(uncompiled)} modules compiled from source: {uncompiled[:20]}"


@pytest.mark.parametrize(
    ("venv", "module"),
    [(".venv-vllm", "vllm/entrypoints/openai/api_server.py"), (".venv-vllm", "torch/__init__.py")],
)
def test_the_vllm_venv_is_compiled(venv: str, module: str) -> None:
    site = next((REPO / venv / "lib").glob("python3*/site-packages"), None)
    if site is None:
        pytest.skip(f"no {venv} here (make vllm)")
    source = site / module
    cached = (
        source.parent
        / "__pycache__"
        / f"{source.stem}.cpython-{sys.version_info.major}{sys.version_info.minor}.pyc"
    )
    assert source.exists() and cached.exists(), cached

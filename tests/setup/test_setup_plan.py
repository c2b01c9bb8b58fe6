"""scripts/setup_plan.py: which lock a host gets, and a venv on the host's own torch that
installs only what is missing and can never replace that torch."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("setup_plan", REPO / "scripts" / "setup_plan.py")
assert _spec and _spec.loader
plan = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(plan)

H100 = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0d1c2b3a-0000-1111-2222-333344445555)\n"


def test_accelerator_follows_the_gpu_listing_unless_told():
    assert plan.detect_accel(None, H100) == "cuda"
    assert plan.detect_accel(None, None) == "cpu"  # no nvidia-smi, or it failed
    # nvidia-smi present but no device (a driver without a GPU prints an error instead)
    assert plan.detect_accel(None, "No devices found.\n") == "cpu"
    assert plan.detect_accel("cpu", H100) == "cpu"
    assert plan.detect_accel("cuda", None) == "cuda"
    with pytest.raises(SystemExit, match="PODIUM_ACCEL='rocm'"):
        plan.detect_accel("rocm", None)


def test_each_accelerator_has_a_lock_with_its_torch():
    cpu = (REPO / plan.LOCKS["cpu"]).read_text().splitlines()
    cuda = (REPO / plan.LOCKS["cuda"]).read_text().splitlines()
    assert "torch==2.13.0+cpu" in cpu
    # PyPI's plain 2.13.0 is the CUDA build on linux x86_64, with vLLM pinned to match it.
    assert "torch==2.13.0" in cuda and "vllm==0.32.0" in cuda
    assert any(line.startswith("nvidia-cudnn") for line in cuda)
    # The training stack is the same on both, so a card trains alike on CPU and GPU.
    for pin in ("transformers==5.19.0", "trl==1.16.0", "peft==0.21.2", "accelerate==1.15.0"):
        assert pin in cpu and pin in cuda


def test_system_torch_is_kept_and_only_missing_packages_are_installed():
    lock = [
        "# a comment",
        "torch==2.13.0",
        "nvidia-cudnn-cu13==9.20.0.48",
        "triton==3.7.1",
        "transformers==5.19.0",
        "trl==1.16.0",
        "typing_extensions==4.16.0",
        'setuptools==80.10.2 ; python_version >= "3.12"',
    ]
    installed = {"torch": "2.11.0+cu130", "transformers": "5.17.0", "typing-extensions": "4.12.0"}
    requirements, constraints = plan.system_files(
        lock, ["torch==2.13.0", "transformers==5.19.0", "trl==1.16.0", "Jinja2"], installed
    )
    assert requirements == ["trl==1.16.0", "Jinja2"]
    # The host's torch pinned exactly: a resolve that wants another torch fails, never swaps.
    assert constraints == [
        "torch==2.11.0+cu130",
        "trl==1.16.0",
        'setuptools==80.10.2 ; python_version >= "3.12"',
    ]


def test_system_mode_refuses_an_interpreter_without_torch():
    with pytest.raises(SystemExit, match="needs torch importable"):
        plan.system_files(["torch==2.13.0"], ["torch==2.13.0"], {"numpy": "2.4.6"})


def test_system_files_in_this_environment_install_nothing(tmp_path: Path):
    """Run as setup_python.sh runs it: here everything is installed, so nothing is asked
    for and torch is pinned to the installed build."""
    subprocess.run(
        [sys.executable, str(REPO / "scripts" / "setup_plan.py"), "system-files"]
        + ["requirements.lock", "train,dev,cluster", str(tmp_path)],
        check=True,
        cwd=REPO,
    )
    assert (tmp_path / "requirements.txt").read_text() == ""
    assert (tmp_path / "constraints.txt").read_text().splitlines()[0] == (
        f"torch=={metadata.version('torch')}"
    )


def test_unknown_extra_is_refused():
    with pytest.raises(SystemExit, match="unknown extras"):
        plan.project_requirements(REPO / "pyproject.toml", ["train", "gpus"])
    assert "vllm==0.32.0" in plan.project_requirements(REPO / "pyproject.toml", ["gpu"])


def test_a_plain_interpreter_needs_no_extra_site_but_a_venv_interpreter_does():
    assert plan.host_site_lines("/usr", "/usr", ["/usr/lib/python3/dist-packages"]) == []
    image = ["/opt/torch/.venv/lib/python3.12/site-packages"]
    assert plan.host_site_lines("/opt/torch/.venv", "/usr", image) == image


def test_system_venv_sees_the_packages_of_an_interpreter_that_is_itself_a_venv(tmp_path: Path):
    """The lent GPU's python3 is /opt/torch/.venv/bin/python3: a venv built from it with
    --system-site-packages alone saw the base interpreter's packages, not its torch.
    This test's interpreter is such a venv (.venv), whose base lacks duckdb and torch."""
    assert sys.prefix != sys.base_prefix, "run the suite from the project's venv"
    plain = tmp_path / "plain"
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(plain)],
        check=True,
    )
    blind = subprocess.run([str(plain / "bin" / "python"), "-c", "import duckdb"])
    assert blind.returncode != 0  # the bug: the image's packages were invisible
    script = str(REPO / "scripts" / "setup_plan.py")
    new = tmp_path / "venv"
    subprocess.run([sys.executable, script, "system-venv", str(new)], check=True)
    subprocess.run([sys.executable, script, "system-venv", str(new)], check=True)  # idempotent
    probe = "import duckdb, torch; print(torch.__file__)"
    seen = subprocess.run(
        [str(new / "bin" / "python"), "-c", probe], capture_output=True, text=True, check=True
    )
    import torch

    assert seen.stdout.strip() == torch.__file__

"""scripts/wheelhouse.py: the wheels an offline host lacks, and only those."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
_spec = importlib.util.spec_from_file_location("wheelhouse", REPO / "scripts" / "wheelhouse.py")
assert _spec and _spec.loader
wheelhouse = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(wheelhouse)

FREEZE = """\
# pip freeze of a CUDA image
torch==2.11.0+cu130
triton==3.6.0
Transformers==5.17.0
typing_extensions==4.16.0
peft
-e git+https://example.com/tool.git@abc#egg=tool
localpkg @ file:///opt/src/localpkg
"""


def test_a_freeze_names_each_package_with_its_version_when_known():
    assert wheelhouse.host_packages(FREEZE) == {
        "torch": "2.11.0+cu130",
        "triton": "3.6.0",
        "transformers": "5.17.0",
        "typing-extensions": "4.16.0",
        "peft": None,
        "localpkg": None,
    }


def test_the_resolve_holds_the_host_at_its_versions_and_torch_at_its_public_one():
    host = wheelhouse.host_packages(FREEZE)
    lock = ["torch==2.13.0", "triton==3.7.1", "transformers==5.19.0", "trl==1.16.0"]
    wanted, constraints = wheelhouse.plan(lock, ["torch", "transformers", "trl", "peft"], host)
    assert wanted == ["trl"]
    # An index has no 2.11.0+cu130; torch's own metadata pins triton, so it is not held.
    assert "torch==2.11.0" in constraints and "triton==3.6.0" not in constraints
    assert "transformers==5.17.0" in constraints and "trl==1.16.0" in constraints
    assert not any(c.startswith("peft") for c in constraints)  # version unknown: free


def test_a_host_list_without_torch_is_refused():
    with pytest.raises(SystemExit, match="must name torch"):
        wheelhouse.plan([], ["trl"], {"numpy": "2.4.6"})


def test_only_what_the_host_lacks_is_fetched_and_never_the_torch_stack():
    host = wheelhouse.host_packages(FREEZE)
    resolved = [
        "torch==2.11.0",
        "nvidia-cudnn-cu13==9.20.0.48",
        "transformers==5.17.0",
        "trl==1.16.0",
        "pyiceberg[pyarrow]==0.12.0 ; python_version >= '3.10'",
        "",
    ]
    assert wheelhouse.to_fetch(resolved, host) == ["trl==1.16.0", "pyiceberg==0.12.0"]


def test_parts_never_exceed_the_limit_and_keep_every_file():
    sizes = {"a.whl": 50, "b.whl": 30, "c.whl": 25, "d.whl": 10, "e.whl": 5}
    groups = wheelhouse.parts(sizes, 60)
    assert sorted(name for group in groups for name in group) == sorted(sizes)
    assert all(sum(sizes[name] for name in group) <= 60 for group in groups)
    assert len(groups) == 2  # 50+10, 30+25+5
    with pytest.raises(SystemExit, match="over --part-mib"):
        wheelhouse.parts({"huge.whl": 61}, 60)


def test_a_host_lacking_two_packages_gets_exactly_their_wheels(tmp_path: Path):
    """End to end against the package index: this environment, less two small pure
    packages, stands for the host; the wheelhouse holds those two and nothing else."""
    freeze = subprocess.run(
        [sys.executable, "-m", "pip", "freeze", "--exclude-editable"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    missing = {"tenacity", "gguf"}
    host = [
        line
        for line in freeze.splitlines()
        if wheelhouse.requirement_name(line.split(" @ ", 1)[0]) not in missing
    ]
    (tmp_path / "host.txt").write_text("\n".join(host) + "\n")
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "wheelhouse.py"), str(tmp_path / "host.txt")]
        + [str(tmp_path / "wh"), "--extras", "train", "--python", "3.11", "--accel", "cpu"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    wheels = sorted(path.name.split("-")[0] for path in (tmp_path / "wh").glob("part-*/*.whl"))
    assert wheels == ["gguf", "tenacity"]

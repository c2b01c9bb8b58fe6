"""What `scripts/setup_python.sh` installs: the accelerator, its lock, and (for a venv on
the host's own torch) the requirements and constraints that leave that torch alone.

Standard library only: it runs under the bare interpreter that builds the venv.

    python3 scripts/setup_plan.py accel                  # cpu or cuda
    python3 scripts/setup_plan.py lock cuda              # requirements-cuda.lock
    .venv/bin/python scripts/setup_plan.py system-files requirements-cuda.lock train,dev OUTDIR

`PODIUM_ACCEL=cpu|cuda` wins over detection; without it, cuda when `nvidia-smi -L` lists
a GPU. `system-files` writes OUTDIR/requirements.txt (the project's dependencies that
the environment lacks) and OUTDIR/constraints.txt (the lock's pins for those, the
torch stack's pins removed, and `torch==` the installed version, so no resolve can
replace the host's torch: it fails instead).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCKS = {"cpu": "requirements.lock", "cuda": "requirements-cuda.lock"}
# The host's torch brings its own CUDA libraries, Triton and vision/audio builds: pins of
# these from a lock resolved for another torch would only fight it.
TORCH_STACK = re.compile(r"^(torch|torchvision|torchaudio|torchcodec|triton|nvidia-.*|cuda-.*)$")


def normalize(name: str) -> str:
    """PEP 503 name: `Jinja2`, `typing_extensions` and `typing.extensions` compare equal."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(line: str) -> str:
    """The distribution a requirement or lock line names (`trl==1.16.0` -> `trl`)."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", line)
    if not match:
        raise ValueError(f"not a requirement: {line!r}")
    return normalize(match.group(1))


def detect_accel(env_value: str | None, gpu_listing: str | None) -> str:
    """`PODIUM_ACCEL` if set, else cuda when `nvidia-smi -L` printed a `GPU n:` line."""
    if env_value:
        if env_value not in LOCKS:
            raise SystemExit(f"PODIUM_ACCEL={env_value!r}: use one of {', '.join(LOCKS)}")
        return env_value
    listed = gpu_listing and any(line.startswith("GPU ") for line in gpu_listing.splitlines())
    return "cuda" if listed else "cpu"


def nvidia_smi_listing() -> str | None:
    try:
        done = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def project_requirements(pyproject: Path, extras: list[str]) -> list[str]:
    """The project's dependencies plus those of `extras`, as written in pyproject.toml."""
    project = tomllib.loads(pyproject.read_text())["project"]
    optional = project.get("optional-dependencies", {})
    unknown = [extra for extra in extras if extra not in optional]
    if unknown:
        raise SystemExit(f"unknown extras {unknown}; pyproject.toml has {sorted(optional)}")
    return [*project["dependencies"], *(req for extra in extras for req in optional[extra])]


def system_files(
    lock_lines: list[str], requirements: list[str], installed: dict[str, str]
) -> tuple[list[str], list[str]]:
    """(requirements, constraints) for a venv on the host's packages (`installed`: name ->
    version). Whatever is installed is kept as it is; torch must be among it."""
    if "torch" not in installed:
        raise SystemExit(
            "PODIUM_TORCH=system needs torch importable by the interpreter that builds the "
            "venv (PYTHON=...); none is installed there."
        )
    missing = [req for req in requirements if requirement_name(req) not in installed]
    constraints = [f"torch=={installed['torch']}"]
    for line in lock_lines:
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        name = requirement_name(text)
        if name in installed or TORCH_STACK.match(name):
            continue
        constraints.append(text)
    return missing, constraints


def installed_distributions() -> dict[str, str]:
    return {normalize(dist.metadata["Name"]): dist.version for dist in metadata.distributions()}


def main(argv: list[str]) -> None:
    command, *rest = argv
    if command == "accel":
        env_value = os.environ.get("PODIUM_ACCEL")
        print(detect_accel(env_value, None if env_value else nvidia_smi_listing()))
    elif command == "lock":
        print(LOCKS[rest[0]])
    elif command == "system-files":
        lock, extras, out = rest
        requirements, constraints = system_files(
            (ROOT / lock).read_text().splitlines(),
            project_requirements(ROOT / "pyproject.toml", [e for e in extras.split(",") if e]),
            installed_distributions(),
        )
        out_dir = Path(out)
        (out_dir / "requirements.txt").write_text("".join(f"{r}\n" for r in requirements))
        (out_dir / "constraints.txt").write_text("".join(f"{c}\n" for c in constraints))
    else:
        raise SystemExit(f"unknown command {command!r}; see {__file__}")


if __name__ == "__main__":
    main(sys.argv[1:])

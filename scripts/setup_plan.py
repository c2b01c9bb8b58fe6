"""What `scripts/setup_python.sh` installs: the accelerator, its lock, and (for a venv on
the host's own torch) the requirements and constraints that leave that torch alone.

Standard library only: it runs under the bare interpreter that builds the venv.

    python3 scripts/setup_plan.py accel                  # cpu or cuda
    python3 scripts/setup_plan.py lock cuda              # requirements-cuda.lock
    python3 scripts/setup_plan.py system-venv .venv      # a venv that sees python3's torch
    .venv/bin/python scripts/setup_plan.py system-files requirements-cuda.lock train,dev OUTDIR

`PODIUM_ACCEL=cpu|cuda` wins over detection; without it, cuda when `nvidia-smi -L` lists
a GPU. `system-files` writes OUTDIR/requirements.txt (the project's dependencies that
the environment lacks) and OUTDIR/constraints.txt (the lock's pins for those, the
torch stack's pins removed, and `torch==` the installed version, so no resolve can
replace the host's torch: it fails instead).

`system-venv` exists because `python -m venv --system-site-packages` alone is not enough
where the host's python3 is itself a virtual environment (CUDA images often install torch
into one, e.g. /opt/torch/.venv): a venv's "system" packages are its base interpreter's,
so the image's torch would be invisible. A `.pth` file then adds the host venv's
site-packages after the new venv's own.
"""

from __future__ import annotations

import importlib.util
import os
import re
import site
import subprocess
import sys
import tomllib
from collections.abc import Iterable
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
    return missing, [f"torch=={installed['torch']}", *lacking(lock_lines, installed)]


def lacking(pin_lines: list[str], installed: Iterable[str]) -> list[str]:
    """The pins (lock or resolver lines, comments dropped) of packages not `installed`,
    the torch stack left out: the host's torch brings its own."""
    have = set(installed)
    texts = (line.split("#", 1)[0].strip() for line in pin_lines)
    return [
        text
        for text in texts
        if text and (name := requirement_name(text)) not in have and not TORCH_STACK.match(name)
    ]


HOST_PTH = "_podium_host_site.pth"


def host_site_lines(prefix: str, base_prefix: str, site_dirs: list[str]) -> list[str]:
    """What the new venv's .pth must add so it sees the host interpreter's packages:
    nothing for a plain interpreter (--system-site-packages covers it), the host venv's
    site-packages when the interpreter is itself a venv."""
    return [] if prefix == base_prefix else list(site_dirs)


def system_venv(venv: Path) -> None:
    """A venv on this interpreter's packages (and pip); idempotent, rewrites the .pth."""
    import venv as venv_module

    if not (venv / "bin" / "python").exists():
        # The host's own pip serves the venv (`python -m pip`): ensurepip would also put
        # an old setuptools there on 3.11, shadowing the host's newer one that torch needs.
        own_pip = importlib.util.find_spec("pip") is None
        builder = venv_module.EnvBuilder(system_site_packages=True, with_pip=own_pip, symlinks=True)
        builder.create(venv)
    lines = host_site_lines(sys.prefix, sys.base_prefix, site.getsitepackages())
    ask = "import sysconfig; print(sysconfig.get_path('purelib'))"
    purelib = subprocess.run(
        [str(venv / "bin" / "python"), "-c", ask],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    pth = Path(purelib) / HOST_PTH
    if lines:
        pth.write_text("".join(f"{line}\n" for line in lines))
    else:
        pth.unlink(missing_ok=True)


def installed_distributions() -> dict[str, str]:
    return {normalize(dist.metadata["Name"]): dist.version for dist in metadata.distributions()}


def main(argv: list[str]) -> None:
    command, *rest = argv
    if command == "accel":
        env_value = os.environ.get("PODIUM_ACCEL")
        print(detect_accel(env_value, None if env_value else nvidia_smi_listing()))
    elif command == "lock":
        print(LOCKS[rest[0]])
    elif command == "system-venv":
        system_venv(Path(rest[0]))
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

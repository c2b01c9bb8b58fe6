"""Wheels for a host that reaches no package registry (an air-gapped GPU node, a CUDA
image behind a firewall): everything `PODIUM_TORCH=system make setup` will ask that host
for, and nothing it already has.

On the host:     python3 -m pip freeze > host-packages.txt   (bring the file here)
Here:            .venv/bin/python scripts/wheelhouse.py host-packages.txt wheelhouse
Then on the host, with wheelhouse/ copied next to the checkout:
    PIP_NO_INDEX=1 PIP_FIND_LINKS="$PWD/wheelhouse/part-1 $PWD/wheelhouse/part-2" \\
        PODIUM_TORCH=system PODIUM_EXTRAS=train make setup

The plan is setup_plan.py's (`system_files`): the project's requirements the host lacks,
pinned by the lock, the host's torch pinned to its own build. uv resolves that plan for
the host's Python and platform with every host package held at the version it has (pip
cannot resolve for another platform without installing, and backtracked for minutes on
this plan), and pip downloads exactly the resolved wheels the host lacks. The torch
stack is never fetched: the host's own torch is the point. Wheels are grouped into parts
no larger than `--part-mib`, for transfers that carry a limited size at a time.

`--bundle` makes instead ONE file, OUT/podium-gpu-bundle.tar (at most 60 MiB): those
wheels packed tight, `bwrap`, SmolLM2's tokenizer and a runner that sets the host up and
runs the GPU tests and benchmarks (scripts/gpu_bundle.py; README "GPUs"):
    .venv/bin/python scripts/wheelhouse.py host-packages.txt bundle --python 3.12 --bundle
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from setup_plan import (  # noqa: E402
    LOCKS,
    ROOT,
    TORCH_STACK,
    lacking,
    project_requirements,
    requirement_name,
    system_files,
)

PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")


def host_packages(freeze: str) -> dict[str, str | None]:
    """name -> version from `pip freeze` (or `pip list --format=freeze`) output; a bare
    name means "installed, version unknown". Editable and URL lines name no version."""
    packages: dict[str, str | None] = {}
    for raw in freeze.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        name, sep, version = line.partition("==")
        if " @ " in name:
            name, version, sep = name.split(" @ ", 1)[0], "", ""
        packages[requirement_name(name)] = version.strip() if sep else None
    return packages


def plan(
    lock_lines: list[str], requirements: list[str], host: dict[str, str | None]
) -> tuple[list[str], list[str]]:
    """(requirements, constraints) to resolve for the host: setup_plan's plan, plus every
    host package whose version is known held at that version (the resolve must fit what
    is there, since pip on the host keeps whatever satisfies)."""
    if not host.get("torch"):
        raise SystemExit("the host's package list must name torch with its version (torch==X)")
    wanted, constraints = system_files(
        lock_lines, requirements, {name: version or "" for name, version in host.items()}
    )
    # An index knows public versions only: the host's 2.11.0+cu130 resolves as 2.11.0.
    public = [re.sub(r"\+.*", "", pin) if pin.startswith("torch==") else pin for pin in constraints]
    held = [
        f"{name}=={version.split('+', 1)[0]}"
        for name, version in sorted(host.items())
        if version and not TORCH_STACK.match(name)  # torch's own metadata pins these
    ]
    return wanted, [*public, *held]


def to_fetch(resolved: list[str], host: dict[str, str | None]) -> list[str]:
    """The resolved `name==version` pins the host lacks, torch stack left out."""
    return [
        re.sub(r"\[[^\]]*\]", "", pin.split(";", 1)[0]).strip() for pin in lacking(resolved, host)
    ]


def parts(sizes: dict[str, int], limit: int) -> list[list[str]]:
    """Files grouped, largest first, into parts of at most `limit` bytes (first fit)."""
    groups: list[tuple[int, list[str]]] = []
    for name, size in sorted(sizes.items(), key=lambda item: (-item[1], item[0])):
        if size > limit:
            raise SystemExit(f"{name} alone is {size / 2**20:.1f} MiB, over --part-mib")
        for index, (used, files) in enumerate(groups):
            if used + size <= limit:
                groups[index] = (used + size, [*files, name])
                break
        else:
            groups.append((size, [name]))
    return [files for _, files in groups]


def uv_binary() -> str:
    found = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if not found:
        raise SystemExit("uv is not installed: `make setup` installs it with the dev extras")
    return found


def resolve(wanted: list[str], constraints: list[str], python: str, work: Path) -> list[str]:
    (work / "requirements.txt").write_text("".join(f"{r}\n" for r in wanted))
    (work / "constraints.txt").write_text("".join(f"{c}\n" for c in constraints))
    done = subprocess.run(
        [uv_binary(), "pip", "compile", "requirements.txt", "-c", "constraints.txt"]
        + ["--python-version", python, "--python-platform", "x86_64-manylinux_2_28"]
        + ["--no-annotate", "--no-header", "--quiet"],
        cwd=work,
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise SystemExit(f"no set of wheels fits this host:\n{done.stderr.strip()}")
    return done.stdout.splitlines()


def download(pins: list[str], python: str, into: Path) -> None:
    platforms = [arg for platform in PLATFORMS for arg in ("--platform", platform)]
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
        + ["--only-binary=:all:", "--implementation", "cp", "--python-version", python]
        + [*platforms, "--platform", "any", "--dest", str(into), *pins],
        check=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("host_packages", type=Path, help="the host's `pip freeze` output")
    ap.add_argument("out", type=Path, help="the wheelhouse folder (part-1, part-2, ...)")
    ap.add_argument("--extras", default="train", help="project extras (default: train)")
    ap.add_argument("--accel", choices=sorted(LOCKS), default="cuda")
    ap.add_argument("--python", default="3.12", help="the host's Python (3.11 or 3.12)")
    ap.add_argument("--part-mib", type=float, default=60.0)
    ap.add_argument("--bundle", action="store_true", help="one GPU host bundle, not parts")
    ap.add_argument("--bwrap-deb", type=Path, help="the bubblewrap .deb (default: apt-get)")
    ns = ap.parse_args()

    host = host_packages(ns.host_packages.read_text())
    extras = [extra for extra in ns.extras.split(",") if extra]
    wanted, constraints = plan(
        (ROOT / LOCKS[ns.accel]).read_text().splitlines(),
        project_requirements(ROOT / "pyproject.toml", extras),
        host,
    )
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        pins = to_fetch(resolve(wanted, constraints, ns.python, work), host)
        if not pins:
            print("the host has everything: nothing to fetch")
            return
        download(pins, ns.python, work / "wheels")
        if ns.bundle:
            import gpu_bundle

            manifest = {"host_packages": ns.host_packages.name, "python": ns.python}
            manifest |= {"accel": ns.accel, "extras": ns.extras, "packages": sorted(pins)}
            files = sorted((work / "wheels").iterdir())
            gpu_bundle.build(files, ns.out, manifest, ns.bwrap_deb)
            return
        wheels = {path.name: path.stat().st_size for path in (work / "wheels").iterdir()}
        if ns.out.exists():
            shutil.rmtree(ns.out)
        for index, files in enumerate(parts(wheels, int(ns.part_mib * 2**20)), start=1):
            part = ns.out / f"part-{index}"
            part.mkdir(parents=True)
            for name in files:
                shutil.move(work / "wheels" / name, part / name)
            size = sum(wheels[name] for name in files) / 2**20
            print(f"{part}: {len(files)} wheels, {size:.1f} MiB")
    print(f"{len(pins)} packages for the host: {', '.join(sorted(pins))}")


if __name__ == "__main__":
    main()

"""Run Podium's GPU tests and benchmarks on an offline CUDA host, from the GPU bundle.

This file travels inside podium-gpu-bundle.tar as run.py (scripts/gpu_bundle.py builds
it) and needs nothing but the host's Python. In the project checkout on the host:

    tar -xf podium-gpu-bundle.tar && python3 podium-gpu-bundle/run.py OUT_DIR

It unpacks the bundle (each wheel re-zipped, stored), puts the bundled `bwrap` on PATH
(`dpkg -x` into the work folder, never into /), sets Podium up on the host's own torch
with no index (PODIUM_TORCH=system PIP_NO_INDEX=1 PIP_FIND_LINKS=<the wheels>
PODIUM_EXTRAS=train PODIUM_BASE_WEIGHTS=skip, SmolLM2's tokenizer from the bundle),
runs `make test-gpu` and then the benchmarks one by one, each under a time limit and
all under one budget (the defaults fit one 10-minute call on a lent GPU), and writes
into OUT_DIR as it goes: host.txt (the host's pip freeze), nvidia-smi.txt, test-gpu.log
+ test-gpu.xml, bench-<what>-<model>.json + .log, venv-freeze.txt and summary.json. Its
exit status is 0 when every step it ran passed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

BUNDLE = Path(__file__).resolve().parent
# Most telling first: a real model's size, then the tiny model, then the cuDNN effect.
BENCHMARKS = "sft:smollm2-arch grpo:smollm2-arch sft:tiny grpo:tiny cudnn:smollm2-arch"


def unpack(work: Path) -> Path:
    """payload.tar.xz -> work/wheels/*.whl (re-zipped, stored) and work/models/...;
    returns the wheels folder."""
    wheels, zips = work / "wheels", {}
    wheels.mkdir(parents=True, exist_ok=True)
    with tarfile.open(BUNDLE / "payload.tar.xz", "r:xz") as tar:
        for member in tar:  # stream order is each wheel's own member order
            top, _, rest = member.name.partition("/")
            if top == "models":
                tar.extract(member, work, filter="data")
            elif top == "wheels" and member.isfile():
                name, _, inner = rest.partition("/")
                if name not in zips:
                    zips[name] = zipfile.ZipFile(wheels / name, "w", zipfile.ZIP_STORED)
                info = zipfile.ZipInfo(inner, date_time=(1980, 1, 1, 0, 0, 0))
                info.external_attr = (member.mode & 0o777 or 0o644) << 16
                source = tar.extractfile(member)
                assert source is not None
                zips[name].writestr(info, source.read())
    for zf in zips.values():
        zf.close()
    return wheels


def bubblewrap(work: Path) -> Path:
    """The bundled bwrap unpacked with dpkg -x; returns the folder to put on PATH."""
    debs = sorted(BUNDLE.glob("bubblewrap_*.deb"))
    if not debs:
        raise SystemExit("the bundle holds no bubblewrap .deb")
    target = work / "bwrap"
    subprocess.run(["dpkg", "-x", str(debs[-1]), str(target)], check=True)
    return target / "usr" / "bin"


def has_gpu() -> bool:
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    listed = subprocess.run([smi, "-L"], capture_output=True, text=True)
    return listed.returncode == 0 and "GPU " in listed.stdout


def step(
    summary: dict,
    name: str,
    cmd: list[str],
    out: Path,
    env: dict,
    cwd: Path,
    timeout: float,
    report: str = "",
) -> int:
    """Run one step with its output in OUT/<name>.log (its stdout in OUT/<report> when
    given: a benchmark's JSON); record it in the summary."""
    start = time.monotonic()
    report_path = out / report if report else Path(os.devnull)
    with open(out / f"{name}.log", "w") as log, open(report_path, "w") as rep:
        log.write(f"$ {' '.join(cmd)}\n")
        log.flush()
        try:
            rc = subprocess.run(
                cmd,
                cwd=cwd,
                env=env,
                stdout=rep if report else log,
                stderr=log,
                timeout=timeout,
            ).returncode
        except subprocess.TimeoutExpired:
            rc = 124
    summary["steps"].append({"step": name, "rc": rc, "seconds": round(time.monotonic() - start)})
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"{name}: rc {rc} in {summary['steps'][-1]['seconds']} s", flush=True)
    return rc


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("out", type=Path, help="where logs and JSON go (e.g. $OUT)")
    ap.add_argument("--project", type=Path, default=Path.cwd(), help="the checkout (cwd)")
    ap.add_argument("--benchmarks", default=BENCHMARKS, help=f"WHAT:MODEL list ({BENCHMARKS})")
    ap.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto")
    ap.add_argument("--steps", type=int, default=0, help="benchmark steps (default: per device)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--bench-timeout", type=float, default=200.0, help="seconds per benchmark")
    ap.add_argument("--budget", type=float, default=360.0, help="seconds for all benchmarks")
    ns = ap.parse_args()

    project, out = ns.project.resolve(), ns.out.resolve()
    if not (project / "Makefile").is_file() or not (project / "pyproject.toml").is_file():
        raise SystemExit(f"{project} is not Podium's checkout: run this from its root")
    out.mkdir(parents=True, exist_ok=True)
    work = BUNDLE / "work"
    device = ("cuda" if has_gpu() else "cpu") if ns.device == "auto" else ns.device
    summary: dict = {"bundle": json.loads((BUNDLE / "manifest.json").read_text()), "steps": []}
    summary["device"] = device
    freeze = [sys.executable, "-m", "pip", "freeze"]
    (out / "host.txt").write_text(subprocess.run(freeze, capture_output=True, text=True).stdout)
    if device == "cuda":
        smi = subprocess.run(["nvidia-smi"], capture_output=True, text=True)
        (out / "nvidia-smi.txt").write_text(smi.stdout + smi.stderr)

    start = time.monotonic()
    wheels = unpack(work)
    summary["unpack_s"] = round(time.monotonic() - start, 1)
    env = {
        **os.environ,
        "PATH": f"{bubblewrap(work)}{os.pathsep}{os.environ.get('PATH', '')}",
        "PODIUM_TORCH": "system",
        "PYTHON": sys.executable,  # the host's interpreter, whose torch the venv keeps
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheels),
        "PODIUM_EXTRAS": "train",
        "PODIUM_BASE_WEIGHTS": "skip",
        "PODIUM_MODEL_CACHE": str(work / "models"),
        "PODIUM_HOME": str(work / "home"),
    }
    pytest_args = f"-rs --junitxml={out / 'test-gpu.xml'}"
    failed = step(
        summary,
        "test-gpu",
        ["make", "test-gpu", f"PYTEST_ARGS={pytest_args}"],
        out,
        env,
        project,
        timeout=420,
    )
    python = str(project / ".venv" / "bin" / "python")
    venv_freeze = subprocess.run([python, "-m", "pip", "freeze"], capture_output=True, text=True)
    (out / "venv-freeze.txt").write_text(venv_freeze.stdout + venv_freeze.stderr)
    deadline = time.monotonic() + ns.budget
    for spec in ns.benchmarks.split():
        what, _, model = spec.partition(":")
        name = f"bench-{what}-{model or 'tiny'}"
        left = deadline - time.monotonic()
        if left < 30:
            summary["steps"].append({"step": name, "skipped": "out of --budget"})
            continue
        cmd = [python, "benchmarks/gpu.py", what, "--model", model or "tiny", "--json"]
        cmd += ["--device", device, "--repeats", str(ns.repeats)]
        cmd += ["--steps", str(ns.steps)] if ns.steps else []
        limit = min(ns.bench_timeout, left)
        rc = step(summary, name, cmd, out, env, project, limit, report=f"{name}.json")
        failed = failed or rc
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

"""The GPU host bundle: ONE file that, carried to an offline CUDA host beside the project
tree, sets Podium up there and runs its GPU tests and benchmarks.

Built by `scripts/wheelhouse.py HOST_LIST OUT_DIR --bundle` (README "GPUs"):

    OUT_DIR/podium-gpu-bundle.tar             a plain tar (no tool beyond `tar` to open it)
      podium-gpu-bundle/run.py                the runner (scripts/gpu_host_run.py; stdlib only)
      podium-gpu-bundle/payload.tar.xz        wheels/<wheel file>/...: each wheel the host
                                              lacks, unzipped (xz -9e packs unzipped wheels
                                              far tighter: 83 MiB of wheels -> ~51 MiB);
                                              models/<tokenizer folder>/...: SmolLM2's
                                              tokenizer, so nothing needs the 94 MiB GGUF
      podium-gpu-bundle/bubblewrap_*.deb      `bwrap` for the local sandbox (dpkg -x there)
      podium-gpu-bundle/manifest.json         what is inside, for whoever reads the output

The runner re-zips each wheel (stored, not compressed: pip only checks the files'
hashes in RECORD) in its original member order and modes.
"""

from __future__ import annotations

import json
import lzma
import shutil
import subprocess
import tarfile
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
NAME = "podium-gpu-bundle"
LIMIT_MIB = 60.0


def add_wheel(tar: tarfile.TarFile, wheel: Path) -> None:
    """The wheel's members under wheels/<wheel file name>/, in its own order, modes kept."""
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            member = tarfile.TarInfo(f"wheels/{wheel.name}/{info.filename}")
            member.size = info.file_size
            member.mode = (info.external_attr >> 16) & 0o777 or 0o644
            member.mtime = 315532800  # 1980-01-01, the earliest a zip can say
            tar.addfile(member, zf.open(info))


def payload(wheels: list[Path], tokenizer: Path, out: Path) -> None:
    with tarfile.open(out, "w:xz", preset=9 | lzma.PRESET_EXTREME) as tar:
        for wheel in sorted(wheels):
            add_wheel(tar, wheel)
        tar.add(tokenizer, arcname=f"models/{tokenizer.name}")


def bubblewrap_deb(into: Path, given: Path | None) -> Path:
    """Debian's bubblewrap package: `given`, else `apt-get download`, else apt's cache."""
    if given:
        return Path(shutil.copy2(given, into))
    done = subprocess.run(
        ["apt-get", "download", "bubblewrap"], cwd=into, capture_output=True, text=True
    )
    found = sorted(into.glob("bubblewrap_*.deb")) or sorted(
        Path("/var/cache/apt/archives").glob("bubblewrap_*.deb")
    )
    if not found:
        raise SystemExit(
            f"no bubblewrap .deb: `apt-get download bubblewrap` said {done.stderr.strip()!r}; "
            "pass one with --bwrap-deb FILE"
        )
    return found[-1] if found[-1].parent == into else Path(shutil.copy2(found[-1], into))


def build(
    wheels: list[Path], out_dir: Path, manifest: dict[str, object], deb: Path | None = None
) -> Path:
    """OUT_DIR/podium-gpu-bundle.tar; SystemExit if it is over LIMIT_MIB."""
    from podium.models.bootstrap import tokenizer_dir

    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / NAME
        root.mkdir()
        shutil.copy2(HERE / "gpu_host_run.py", root / "run.py")
        payload(wheels, tokenizer_dir(), root / "payload.tar.xz")
        deb_file = bubblewrap_deb(root, deb)
        contents = {
            **manifest,
            "wheels": sorted(w.name for w in wheels),
            "bubblewrap": deb_file.name,
            "tokenizer": tokenizer_dir().name,
            "payload_mib": round((root / "payload.tar.xz").stat().st_size / 2**20, 2),
        }
        (root / "manifest.json").write_text(json.dumps(contents, indent=2) + "\n")
        bundle = out_dir / f"{NAME}.tar"
        with tarfile.open(bundle, "w") as tar:
            tar.add(root, arcname=NAME)
    size = bundle.stat().st_size / 2**20
    if size > LIMIT_MIB:
        raise SystemExit(
            f"{bundle} is {size:.1f} MiB, over the {LIMIT_MIB:.0f} MiB a transfer takes"
        )
    print(f"{bundle}: {size:.1f} MiB ({len(wheels)} wheels, {deb_file.name}, SmolLM2's tokenizer)")
    return bundle


def wheel_members(payload_file: Path) -> dict[str, list[str]]:
    """wheel file name -> its member names, as the payload holds them (for tests)."""
    found: dict[str, list[str]] = {}
    with tarfile.open(payload_file, "r:xz") as tar:
        for member in tar:
            parts = member.name.split("/", 2)
            if parts[0] == "wheels" and len(parts) == 3:
                found.setdefault(parts[1], []).append(parts[2])
    return found

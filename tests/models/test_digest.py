"""Checkpoint content digests: stable, sensitive to every file, hashed once per change."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from sqlalchemy import select

from podium.errors import NotFound
from podium.models import add_endpoint, register_checkpoint, register_model
from podium.models import digest as digest_module
from podium.models.digest import checkpoint_digest, digests_table
from podium.models.registry import checkpoint_pin
from podium.store.state.state import engine


def _checkpoint(root: Path) -> Path:
    root.mkdir()
    (root / "config.json").write_text(json.dumps({"model_type": "llama"}))
    (root / "model.safetensors").write_bytes(b"weights-1")
    (root / "tokenizer").mkdir()
    (root / "tokenizer" / "vocab.json").write_text("{}")
    return root


@pytest.fixture
def hashes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts full hashes of a directory (cached digests do not hash)."""
    calls: list[int] = []
    real = digest_module.hash_files

    def counting(files: list[tuple[str, Path]]) -> str:
        calls.append(len(files))
        return real(files)

    monkeypatch.setattr(digest_module, "hash_files", counting)
    return calls


def test_digest_is_stable_and_computed_once(podium_home: Path, tmp_path: Path, hashes) -> None:
    ckpt = _checkpoint(tmp_path / "a")
    first = checkpoint_digest(ckpt)
    assert first.startswith("sha256:") and len(first) == len("sha256:") + 64
    assert checkpoint_digest(ckpt) == first
    assert hashes == [3]  # the second call was answered from the cache
    # The same bytes elsewhere give the same digest: it is over names and contents only.
    copy = _checkpoint(tmp_path / "b")
    assert checkpoint_digest(copy) == first


@pytest.mark.parametrize("change", ["edit", "add", "rename", "remove"])
def test_any_file_change_changes_the_digest(
    podium_home: Path, tmp_path: Path, hashes, change: str
) -> None:
    ckpt = _checkpoint(tmp_path / "c")
    before = checkpoint_digest(ckpt)
    weights = ckpt / "model.safetensors"
    if change == "edit":  # same size, new bytes
        weights.write_bytes(b"weights-2")
        os.utime(weights, ns=(1, 1))  # a coarse clock could leave mtime unchanged within a tick
    elif change == "add":
        (ckpt / "generation_config.json").write_text("{}")
    elif change == "rename":
        (ckpt / "tokenizer" / "vocab.json").rename(ckpt / "tokenizer" / "vocab2.json")
    else:
        (ckpt / "tokenizer" / "vocab.json").unlink()
    assert checkpoint_digest(ckpt) != before
    assert len(hashes) == 2


def test_missing_directory_is_not_found(podium_home: Path, tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="does not exist"):
        checkpoint_digest(tmp_path / "nope")


def test_registration_stores_the_digest_and_pins_name_it(
    podium_home: Path, tmp_path: Path, hashes
) -> None:
    ckpt = _checkpoint(tmp_path / "d")
    register_model("tiny-base", kind="base", path=str(ckpt), is_default=True)
    register_checkpoint(
        "tiny-sft", _checkpoint(tmp_path / "e"), parent="base", job_id=None, lineage={}
    )
    with engine().connect() as conn:
        stored = {r.path: r.digest for r in conn.execute(select(digests_table))}
    assert set(stored) == {str(ckpt.resolve()), str((tmp_path / "e").resolve())}
    assert len(hashes) == 2
    # A card's pins come from the stored digests: no hashing again.
    assert checkpoint_pin("base") == checkpoint_pin("tiny-base") == stored[str(ckpt.resolve())]
    assert len(hashes) == 2

    add_endpoint("http://127.0.0.1:9/v1", "remote", remote_model="m-1")
    assert checkpoint_pin("remote") == "endpoint:http://127.0.0.1:9/v1#m-1"
    assert checkpoint_pin("unknown-model") is None

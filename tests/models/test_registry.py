"""The checkpoint registry on a real SQLite state database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from podium.config import reset_settings
from podium.errors import InvalidInput, NotFound
from podium.models import (
    add_endpoint,
    default_base,
    get_model,
    list_models,
    register_checkpoint,
    register_model,
    remove_model,
)


def _checkpoint(tmp_path: Path, name: str = "ckpt") -> Path:
    path = tmp_path / name
    path.mkdir()
    (path / "config.json").write_text(json.dumps({"model_type": "llama"}))
    (path / "model.safetensors").write_bytes(b"\0")
    return path


def test_register_checkpoint_records_parent_job_lineage_and_step(podium_home, tmp_path):
    register_model("tiny-base", kind="base", path=str(_checkpoint(tmp_path, "b")), is_default=True)
    info = register_checkpoint(
        "sft-step10",
        _checkpoint(tmp_path),
        parent="base",
        job_id="job-1",
        lineage={"dataset": "demo.json_sft@42"},
        step=10,
    )
    again = get_model("sft-step10")
    assert again == info
    assert (again.kind, again.parent, again.job_id, again.step) == ("trained", "base", "job-1", 10)
    assert again.lineage == {"dataset": "demo.json_sft@42"}
    assert again.path == str((tmp_path / "ckpt").resolve())
    assert [m.name for m in list_models()] == ["tiny-base", "sft-step10"]


def test_base_alias_and_default(podium_home, tmp_path):
    with pytest.raises(NotFound, match="bootstrap"):
        default_base()
    register_model("a", kind="base", path=str(_checkpoint(tmp_path, "a")), is_default=True)
    register_model("b", kind="base", path=str(_checkpoint(tmp_path, "b")), is_default=True)
    assert default_base().name == "b"
    assert get_model("base").name == "b"
    assert not get_model("a").is_default


def test_unknown_model_lists_known_names(podium_home, tmp_path):
    register_model("known-one", kind="base", path=str(_checkpoint(tmp_path)))
    with pytest.raises(NotFound, match="known-one"):
        get_model("nope")


def test_bad_names_paths_and_duplicates_are_refused(podium_home, tmp_path):
    ckpt = _checkpoint(tmp_path)
    with pytest.raises(InvalidInput, match="not allowed"):
        register_checkpoint("has space", ckpt, parent=None, job_id=None, lineage={})
    with pytest.raises(InvalidInput, match="reserved"):
        register_checkpoint("base", ckpt, parent=None, job_id=None, lineage={})
    with pytest.raises(InvalidInput, match="config.json"):
        register_checkpoint("x", tmp_path / "missing", parent=None, job_id=None, lineage={})
    with pytest.raises(NotFound):
        register_checkpoint("x", ckpt, parent="no-such-parent", job_id=None, lineage={})
    register_checkpoint("x", ckpt, parent=None, job_id=None, lineage={})
    with pytest.raises(InvalidInput, match="already registered"):
        register_checkpoint("x", ckpt, parent=None, job_id=None, lineage={})
    remove_model("x")
    assert [m.name for m in list_models()] == []


def test_endpoint_keeps_key_variable_name_only(podium_home, monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-secret")
    monkeypatch.setenv("PODIUM_ENDPOINT_KEY_ENVS", "MY_KEY")  # the operator allows it
    reset_settings()
    info = add_endpoint("http://127.0.0.1:9999", "remote", api_key_env="MY_KEY", remote_model="m")
    assert info.url == "http://127.0.0.1:9999/v1"
    assert info.api_key_env == "MY_KEY"
    assert "sk-secret" not in json.dumps(info.to_dict())
    with pytest.raises(InvalidInput, match="http"):
        add_endpoint("ftp://x", "bad")


def test_endpoint_is_returned_as_is_by_ensure_server(podium_home):
    from podium.models import ensure_server

    add_endpoint("http://127.0.0.1:9/v1", "remote", remote_model="served-id")
    assert ensure_server("remote") == ("http://127.0.0.1:9/v1", "served-id")

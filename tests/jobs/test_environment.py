"""What a card pins about its environment: Podium's version and commit, the lock file,
the checkpoints' digests; and what a re-run is warned about."""

from __future__ import annotations

import hashlib
import json
import logging
import subprocess
from pathlib import Path

import pytest
from pydantic import BaseModel

import podium
from podium.jobs import environment as env
from podium.models import register_model


class _Config(BaseModel):
    model: str = "base"
    models: list[str] = []
    out: str = "ns.t"


def _checkpoint(root: Path, weights: bytes = b"w") -> Path:
    root.mkdir()
    (root / "config.json").write_text("{}")
    (root / "model.safetensors").write_bytes(weights)
    return root


def test_capture_in_this_checkout(podium_home: Path, tmp_path: Path) -> None:
    register_model("tiny", kind="base", path=str(_checkpoint(tmp_path / "c")), is_default=True)
    captured = env.capture(_Config(models=["tiny", "gone", "base"]))
    root = Path(podium.__file__).resolve().parent.parent
    head = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    lock = "sha256:" + hashlib.sha256((root / "requirements.lock").read_bytes()).hexdigest()
    assert captured["podium_version"] == podium.__version__
    assert captured["podium_commit"] == head
    assert (captured["lock_digest"], captured["lock_source"]) == (lock, "requirements.lock")
    digests = captured["checkpoints"]
    assert list(digests) == ["base", "tiny", "gone"]  # `model` first, no repeats
    assert digests["base"] == digests["tiny"] and digests["base"].startswith("sha256:")
    assert digests["gone"] is None  # an unknown name is recorded, not an error
    json.dumps(captured)  # plain values only: it goes into YAML and table properties


def test_outside_a_checkout_nothing_fails(tmp_path: Path) -> None:
    assert env.git_commit(None) is None
    assert env.git_commit(tmp_path) is None  # not a repository
    digest, source = env.lock_digest(None)
    assert source == "installed metadata" and digest and digest.startswith("sha256:")


@pytest.mark.parametrize(
    ("torch_version", "expected"),
    [("2.13.0+cpu", "requirements.lock"), ("2.13.0", "requirements-cuda.lock")],
)
def test_the_lock_recorded_is_the_one_the_installed_torch_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, torch_version: str, expected: str
) -> None:
    (tmp_path / "requirements.lock").write_text("torch==2.13.0+cpu\n")
    (tmp_path / "requirements-cuda.lock").write_text("torch==2.13.0\n")
    real_version = env.importlib.metadata.version
    monkeypatch.setattr(
        env.importlib.metadata,
        "version",
        lambda name: torch_version if name == "torch" else real_version(name),
    )
    digest, source = env.lock_digest(tmp_path)
    data = (tmp_path / expected).read_bytes()
    assert (digest, source) == ("sha256:" + hashlib.sha256(data).hexdigest(), expected)


def test_differences_name_what_changed(caplog: pytest.LogCaptureFixture) -> None:
    recorded = {
        "podium_version": "0.1.0",
        "podium_commit": "aaa",
        "lock_digest": "sha256:1",
        "lock_source": "requirements.lock",
        "checkpoints": {"base": "sha256:old", "other": "sha256:same"},
    }
    assert env.differences(recorded, recorded) == []
    current = {
        **recorded,
        "podium_commit": "bbb",
        "lock_digest": "sha256:2",
        "checkpoints": {"base": "sha256:new", "other": "sha256:same"},
    }
    with caplog.at_level(logging.WARNING, logger="podium.jobs.environment"):
        found = env.warn_differences(recorded, current)
    assert found == [
        "Podium commit: card aaa, now bbb",
        "lock file digest: card sha256:1, now sha256:2",
        "checkpoint 'base': card sha256:old, now sha256:new",
    ]
    assert "differs from the one its card recorded" in caplog.text
    assert "checkpoint 'base'" in caplog.text
    # A card without a recorded environment (written before pins existed) warns of nothing.
    assert env.warn_differences(None, current) == []


def test_lineage_property() -> None:
    assert env.lineage_properties(None) == {}
    props = env.lineage_properties({"podium_version": "1"})
    assert json.loads(props["podium.lineage.environment"]) == {"podium_version": "1"}


def test_card_shows_digest_version_and_lock_and_reads_back(
    podium_home: Path, tmp_path: Path
) -> None:
    from generators.generate import GenerateConfig
    from podium.jobs.cards import parse_card, render_card
    from podium.store.read.refs import TableRef

    register_model("tiny", kind="base", path=str(_checkpoint(tmp_path / "c")), is_default=True)
    config = GenerateConfig(input=TableRef(name="ns.p", snapshot_id=1), out="ns.o", model="tiny")
    text = render_card("generate", config)
    digest = env.capture(config)["checkpoints"]["tiny"]
    assert f"\n  checkpoints:\n    tiny: {digest}\n" in text
    assert f"\n  podium_version: {podium.__version__}\n" in text
    assert "\n  lock_digest: sha256:" in text and "\n  lock_source: requirements.lock\n" in text
    card = parse_card(text)
    assert card.environment == env.capture(config)
    assert card.text() == text  # a stored card re-renders exactly


def test_job_records_environment_in_lineage_and_warns_on_drift(
    jobs_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from podium.jobs.cards import Card, card_environment, validate_config
    from podium.jobs.launch import run_in_process
    from podium.jobs.queue import create_job, get_job
    from podium.store.catalog.catalog import load_table

    config = validate_config("test-steps", {"steps": 1, "table": "ns.steps"})
    job = run_in_process(Card("test-steps", config))
    assert job["status"] == "succeeded"
    recorded = card_environment(job["card"])
    assert recorded == env.capture(config)
    props = load_table("ns.steps").properties
    assert json.loads(props["podium.lineage.environment"]) == recorded

    with caplog.at_level(logging.WARNING, logger="podium.jobs.environment"):
        same = create_job(Card("test-steps", config, environment=recorded))
        assert caplog.text == ""
        assert get_job(same)["card"] == job["card"]
        old = {**recorded, "podium_version": "0.0.1", "podium_commit": "0" * 40}
        drifted = create_job(Card("test-steps", config, environment=old))
    assert "Podium version: card 0.0.1, now" in caplog.text
    assert "Podium commit: card 0000" in caplog.text
    again = get_job(drifted)
    assert card_environment(again["card"]) == recorded  # the job records what it runs with
    assert "Podium version: card 0.0.1" in Path(again["log_path"]).read_text()

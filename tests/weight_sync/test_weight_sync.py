"""Weights moved from a learner into real vLLM CPU replicas, verified.

Each test changes the learner's weights first (seeded noise), so a load that moved
nothing would fail both the checksum and the greedy comparison.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
import torch
from weight_sync_learner import perturbed

from trainers.async_rl.replica import PolicyReplica
from trainers.weight_sync import (
    ReplicaEndpoint,
    ReplicaLoadError,
    WeightSyncError,
    make_weight_sync,
)
from trainers.weight_sync.checksum import weights_checksum

pytestmark = pytest.mark.vllm

PROMPTS = [[1, 504, 3145, 282, 260], [1, 19556, 28, 638]]  # token ids: no tokenizer drift
REPO = Path(__file__).resolve().parents[2]


def hf_greedy(model, prompt: list[int], tokens: int) -> list[int]:  # type: ignore[no-untyped-def]
    with torch.no_grad():
        out = model.generate(
            torch.tensor([prompt]), max_new_tokens=tokens, do_sample=False, pad_token_id=0
        )
    return [int(t) for t in out[0, len(prompt) :]]


def assert_serves(replica: PolicyReplica, model, version: int) -> None:  # type: ignore[no-untyped-def]
    rows = replica.generate(PROMPTS, n=1, max_tokens=6, temperature=0.0)
    for prompt, row in zip(PROMPTS, rows, strict=True):
        assert row["policy_version"] == version and row["replica"] == replica.index
        assert len(row["behaviour_logprobs"]) == len(row["completion_ids"]) == 6
        assert row["completion_ids"] == hf_greedy(model, prompt, 6)


@pytest.mark.parametrize(
    "backend",
    [
        "gloo",
        pytest.param(
            "nccl",
            marks=pytest.mark.skipif(
                not torch.cuda.is_available(), reason="nccl needs CUDA (untested on CPU hosts)"
            ),
        ),
    ],
)
def test_push_loads_exactly_the_learners_weights(replicas, tiny_checkpoint, tmp_path, backend):  # type: ignore[no-untyped-def]
    model = perturbed(str(tiny_checkpoint), seed=11)
    if backend == "nccl":
        model = model.cuda()
    expected = weights_checksum(model.named_parameters())
    sync = make_weight_sync(backend, work_dir=tmp_path)
    sync.connect([r.endpoint for r in replicas])
    record = sync.push_async(model.named_parameters(), version=11).result()
    sync.close()

    assert record.backend == backend and record.version == 11 and record.bytes > 0
    assert [v["replica"] for v in record.replicas] == [0, 1]
    if backend == "gloo":  # one broadcast a tensor to both, not one send per replica
        assert record.broadcast == "members1", record.broadcast_failed
    for verdict in record.replicas:
        assert verdict["match"] and verdict["checksum"] == expected and verdict["version"] == 11
        assert verdict["moved"] is True
    for replica in replicas:
        assert replica.version() == 11
        assert_serves(replica, model.cpu(), 11)


def test_generation_during_a_push_is_tied_to_the_version_that_produced_it(
    replicas, tiny_checkpoint, tmp_path
):  # type: ignore[no-untyped-def]
    old, new = perturbed(str(tiny_checkpoint), seed=21), perturbed(str(tiny_checkpoint), seed=22)
    sync = make_weight_sync("gloo", work_dir=tmp_path)
    sync.connect([replicas[0].endpoint])
    sync.push(old.named_parameters(), version=21)
    with ThreadPoolExecutor(max_workers=1) as pool:
        rows = pool.submit(replicas[0].generate, PROMPTS, 1, 24, 0.0)
        sync.push_async(new.named_parameters(), version=22).result()
        generated = rows.result()
    sync.close()
    for prompt, row in zip(PROMPTS, generated, strict=True):
        producer = {21: old, 22: new}[row["policy_version"]]
        assert row["completion_ids"] == hf_greedy(producer, prompt, 24)


@pytest.mark.parametrize("backend", ["gloo", "disk"])
def test_two_learner_ranks_push_their_slices_to_two_replicas(  # type: ignore[no-untyped-def]
    replicas, tiny_checkpoint, tmp_path, backend
):
    """Each rank sends (gloo) or writes (disk: one file a rank) only its rows; the
    replicas join them, and the checksum rank 0 combines from both ranks' digests
    matches."""
    from podium.models.vllm_launch import free_port

    port = free_port()
    version = 12 if backend == "gloo" else 16
    model = perturbed(str(tiny_checkpoint), seed=version)
    rank0 = make_weight_sync(
        backend, learner_ranks=2, rank=0, work_dir=tmp_path, address=("127.0.0.1", port)
    )
    urls = [r.url for r in replicas]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    rank1 = subprocess.Popen(
        [
            sys.executable,
            "-P",
            str(Path(__file__).with_name("weight_sync_learner.py")),
            str(tiny_checkpoint),
            "1",
            "2",
            "127.0.0.1",
            str(port),
            str(version),
            backend,
            str(tmp_path),
            *urls,
        ],
        env=env,
    )
    try:
        rank0.connect([ReplicaEndpoint(i, url) for i, url in enumerate(urls)])
        record = rank0.push(model.named_parameters(), version=version)
        assert rank1.wait(timeout=300) == 0
    finally:
        if rank1.poll() is None:
            rank1.kill()
        rank0.close()

    assert all(v["match"] and v["version"] == version for v in record.replicas)
    for replica in replicas:
        assert_serves(replica, model, version)


def is_paused(replica: PolicyReplica) -> bool:
    root = replica.endpoint.root
    return bool(httpx.get(root + "/is_paused", timeout=30).json()["is_paused"])


def test_a_corrupted_transfer_is_caught_by_the_checksum_and_never_served(
    replicas, tiny_checkpoint, tmp_path
):  # type: ignore[no-untyped-def]
    """The replica that loaded what the learner did not send stays paused (until
    2026-11-28 the swap resumed it before the verdict, so it served those weights); a
    clean push resumes it."""
    model = perturbed(str(tiny_checkpoint), seed=13)
    sync = make_weight_sync("gloo", work_dir=tmp_path, corrupt_for_tests=True)
    sync.connect([replicas[0].endpoint])
    try:
        with pytest.raises(ReplicaLoadError) as caught:
            sync.push(model.named_parameters(), version=13)
        message = str(caught.value)
        assert "replica 0" in message and weights_checksum(model.named_parameters()) in message
        assert caught.value.failed == [0] and caught.value.verdicts[0]["resumed"] is False
        assert is_paused(replicas[0])

        sync.corrupt_for_tests = False  # the re-push: verified, then resumed
        record = sync.push(model.named_parameters(), version=13)
        assert record.replicas[0]["match"] and record.replicas[0]["resumed"] is True
        assert not is_paused(replicas[0])
    finally:
        sync.close()
    assert_serves(replicas[0], model, 13)


def test_disk_backend_loads_the_learners_weights(replicas, tiny_checkpoint, tmp_path):  # type: ignore[no-untyped-def]
    model = perturbed(str(tiny_checkpoint), seed=14)
    sync = make_weight_sync("disk", work_dir=tmp_path)
    sync.connect([replicas[0].endpoint])
    record = sync.push(model.named_parameters(), version=14)
    second = sync.push(perturbed(str(tiny_checkpoint), seed=15).named_parameters(), version=15)
    sync.close()

    assert record.backend == "disk" and record.replicas[0]["match"]
    assert second.replicas[0]["match"] and second.replicas[0]["moved"] is True
    assert sorted(p.name for p in (tmp_path / "weights").iterdir()) == ["v15.safetensors"]
    sync = make_weight_sync("disk", work_dir=tmp_path)
    sync.connect([replicas[0].endpoint])
    sync.push(model.named_parameters(), version=16)
    assert_serves(replicas[0], model, 16)


def test_a_replica_added_mid_run_gets_the_current_weights_from_the_learner(
    replicas, tiny_checkpoint, tmp_path
):  # type: ignore[no-untyped-def]
    model = perturbed(str(tiny_checkpoint), seed=17)
    sync = make_weight_sync("gloo", work_dir=tmp_path)
    sync.connect([replicas[0].endpoint])
    sync.push(model.named_parameters(), version=17)
    assert replicas[1].version() != 17

    record = sync.add_replica(replicas[1].endpoint, model.named_parameters(), version=17)
    later = sync.push(perturbed(str(tiny_checkpoint), seed=18).named_parameters(), version=18)
    # Replica 1 joins again, as its replacement would: the members changed, so the next
    # push is broadcast over a group built for them.
    sync.add_replica(replicas[1].endpoint, model.named_parameters(), version=18)
    again = sync.push(model.named_parameters(), version=19)
    sync.close()

    assert [v["replica"] for v in record.replicas] == [1] and record.replicas[0]["match"]
    assert sorted(v["replica"] for v in later.replicas) == [0, 1]  # both in the group now
    assert later.broadcast == "members1" and again.broadcast == "members2"
    assert all(v["match"] for v in later.replicas + again.replicas)
    assert replicas[0].version() == replicas[1].version() == 19


def test_a_member_gone_ends_the_broadcast_and_the_live_replicas_still_load(
    replicas, tiny_checkpoint, tmp_path, monkeypatch: pytest.MonkeyPatch
):  # type: ignore[no-untyped-def]
    """A replica that died after it joined (nothing listens at its URL any more): the
    members group cannot be built, so the push goes replica by replica; the live two
    load and are resumed, and the push fails naming the dead one."""
    from podium.models.vllm_launch import free_port
    from trainers.weight_sync import gloo

    monkeypatch.setattr(gloo, "MEMBERS_TIMEOUT_S", 10.0)
    model = perturbed(str(tiny_checkpoint), seed=23)
    sync = make_weight_sync("gloo", work_dir=tmp_path)
    sync.connect([r.endpoint for r in replicas])
    sync.replicas[2] = ReplicaEndpoint(2, f"http://127.0.0.1:{free_port()}/v1")
    try:
        with pytest.raises(WeightSyncError, match="replica 2"):
            sync.push(model.named_parameters(), version=23)
    finally:
        sync.close()
    for replica in replicas:
        assert replica.version() == 23 and not is_paused(replica)

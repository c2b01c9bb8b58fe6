"""Which weight path a push takes (trainers/weight_sync/ipc.py), without a GPU: CUDA IPC
only where the learner shares its GPU with every replica, and only to a loopback replica.
The IPC push itself runs in tests/gpu/test_gpu_colocated_async.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainers.weight_sync import ReplicaEndpoint, WeightSyncError, make_weight_sync
from trainers.weight_sync.ipc import colocated, transfer_backend


def test_a_learner_off_the_gpu_keeps_the_requested_backend() -> None:
    assert not colocated("cpu", ["GPU-1"])
    assert transfer_backend("nccl", "cpu", ["GPU-1"]) == "nccl"
    assert transfer_backend("gloo", "cpu", [None]) == "gloo"
    with pytest.raises(WeightSyncError, match="same GPU as every replica"):
        transfer_backend("ipc", "cpu", [None])


def test_ipc_refuses_a_replica_off_this_hosts_loopback(tmp_path: Path) -> None:
    sync = make_weight_sync("ipc", work_dir=tmp_path)
    try:
        with pytest.raises(WeightSyncError, match="not on this host's loopback"):
            sync.connect([ReplicaEndpoint(0, "http://10.1.2.3:8000/v1")])
        assert not sync.replicas
    finally:
        sync.close()

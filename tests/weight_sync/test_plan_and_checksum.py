"""The transfer plan and the checksum, without servers."""

from __future__ import annotations

import pytest
import torch

from trainers.weight_sync import WeightSyncError, make_weight_sync
from trainers.weight_sync.base import ReplicaEndpoint, verify
from trainers.weight_sync.checksum import weights_checksum
from trainers.weight_sync.plan import make_plan


def test_every_row_is_sent_once_by_exactly_one_rank():
    tensors = [("b", torch.zeros(5, 3)), ("a", torch.zeros(2)), ("c", torch.tensor(1.0))]
    plan = make_plan(tensors, learner_ranks=3)
    assert [t.name for t in plan.tensors] == ["a", "b", "c"]
    assert plan.tensors[1].slices == ((0, 2), (2, 4), (4, 5))
    assert plan.tensors[0].slices == ((0, 1), (1, 2), (2, 2))  # rank 2 sends nothing of "a"
    assert plan.tensors[2].slices == ((0, 1), (1, 1), (1, 1))  # a scalar goes whole
    routes = list(plan.routes(replicas=[0, 1]))
    assert len(routes) == 2 * (3 + 2 + 1)
    assert [(t.name, a, b) for t, a, b in plan.sends(2)] == [("b", 4, 5)]
    assert plan.bytes == 4 * (15 + 2 + 1)


def test_the_checksum_is_of_bfloat16_values_in_name_order():
    w = torch.randn(4, 4)
    same = weights_checksum([("x", w), ("y", w * 2)])
    assert weights_checksum([("y", (w * 2).to(torch.bfloat16)), ("x", w.double())]) == same
    changed = w.clone()
    changed[3, 3] += 1.0
    assert weights_checksum([("x", changed), ("y", w * 2)]) != same


def test_a_load_that_moved_nothing_fails_verification():
    replica = ReplicaEndpoint(1, "http://127.0.0.1:1/v1")
    got = {"checksum": "abc", "version": 3, "moved": False}
    with pytest.raises(WeightSyncError, match="replica 1: the load reported success"):
        verify(3, "abc", [(replica, got)])
    with pytest.raises(WeightSyncError, match="replica 1: expected checksum abc at version 3, got"):
        verify(3, "abc", [(replica, {**got, "checksum": "abd", "moved": True})])


def test_bad_backend_and_missing_address_are_named(tmp_path):
    with pytest.raises(WeightSyncError, match="unknown weight_sync backend 'tcp'"):
        make_weight_sync("tcp", work_dir=tmp_path)
    with pytest.raises(WeightSyncError, match="same store address"):
        make_weight_sync("gloo", learner_ranks=2, rank=1, work_dir=tmp_path)

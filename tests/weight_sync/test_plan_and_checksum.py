"""The transfer plan and the checksum, without servers."""

from __future__ import annotations

import hashlib

import pytest
import torch

from trainers.weight_sync import WeightSyncError, make_weight_sync
from trainers.weight_sync.checksum import weights_checksum
from trainers.weight_sync.plan import make_plan
from trainers.weight_sync.replica_calls import ReplicaEndpoint, verify


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


def test_a_slice_digest_is_sha256_of_the_whole_bfloat16_cast_whatever_its_chunks():
    from trainers.weight_sync.checksum import DIGEST_CHUNK, slice_digest

    for numel in (0, 1, DIGEST_CHUNK, 2 * DIGEST_CHUNK + 7):
        rows = torch.randn(numel)
        whole = rows.to(torch.bfloat16).view(torch.int16).numpy().tobytes()
        assert slice_digest(rows) == hashlib.sha256(whole).hexdigest()
    strided = torch.randn(300, 400).t()  # not contiguous: read in row-major order all the same
    whole = strided.contiguous().to(torch.bfloat16).view(torch.int16).numpy().tobytes()
    assert slice_digest(strided) == hashlib.sha256(whole).hexdigest()


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


@pytest.mark.parametrize("rows", [1, 2, 5, 10, 11, 49152])
@pytest.mark.parametrize("ranks", [1, 2, 3, 4])
def test_rank_rows_are_the_shards_fsdp_keeps(rows: int, ranks: int) -> None:
    """A rank holding an FSDP2 dim-0 shard sends exactly that shard (torch.chunk's cut)."""
    from trainers.weight_sync.checksum import row_slices

    chunks = torch.arange(rows).chunk(ranks)
    expected = [(int(c[0]), int(c[-1]) + 1) for c in chunks if len(c)]
    slices = row_slices((rows, 3), ranks)
    assert slices[: len(expected)] == expected
    assert all(a == b == rows for a, b in slices[len(expected) :])


def test_digests_of_each_ranks_rows_combine_into_the_whole_checksum() -> None:
    from trainers.weight_sync.base import rows_of
    from trainers.weight_sync.checksum import ChecksumStream, slice_digest

    tensors = [("b", torch.randn(5, 3)), ("a", torch.randn(2)), ("c", torch.tensor(1.5))]
    plan = make_plan(tensors, learner_ranks=3)
    ordered = sorted(tensors, key=lambda item: item[0])
    stream = ChecksumStream(3)
    for planned, (_, whole) in zip(plan.tensors, ordered, strict=True):
        shards = [rows_of(planned, whole, r).clone() for r in range(3)]  # what each rank holds
        digests = [slice_digest(rows_of(planned, shard, r)) for r, shard in enumerate(shards)]
        stream.update_digests(planned.name, planned.shape, digests)
    assert stream.hexdigest() == weights_checksum(tensors, ranks=3)
    assert weights_checksum(tensors, ranks=3) != weights_checksum(tensors, ranks=1)


def test_a_rank_passing_neither_the_whole_tensor_nor_its_rows_is_named() -> None:
    from trainers.weight_sync.base import rows_of

    plan = make_plan([("w", torch.zeros(10, 2))], learner_ranks=3)  # rows 4, 4, 2
    with pytest.raises(WeightSyncError, match="w: learner rank 2 holds 3 rows; it must pass"):
        rows_of(plan.tensors[0], torch.zeros(3, 2), 2)


def test_the_replica_extension_imports_without_podium_as_vllm_loads_it(tmp_path):
    """vLLM imports `vllm_extension` with only trainers/weight_sync on PYTHONPATH: it must
    find the checksum as the top-level `checksum`, the very code the learner runs, and
    import neither Podium nor the trainers package."""
    import subprocess
    import sys
    from pathlib import Path

    import trainers.weight_sync.checksum as learner_side

    here = Path(learner_side.__file__).parent
    probe = (
        "import sys, vllm_extension\n"
        "print(vllm_extension.ChecksumStream.__module__, sys.modules['checksum'].__file__,"
        " any(m.split('.')[0] in ('podium', 'trainers') for m in sys.modules))"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(here)}
    shown = subprocess.run(
        [sys.executable, "-P", "-c", probe],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
        check=True,
    ).stdout.split()
    assert shown == ["checksum", learner_side.__file__, "False"]
